"""What the editor refuses and how it says so: a new concept note's template text is not
published, a refusal names each problem once, a stale tab's page gives one instruction, a
refused preview attempt lists every problem, and closing a report keeps what was typed."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from authoring import services
from authoring.models import Draft, ProblemReport
from questions.models import Concept, Question
from tests.authoring.conftest import problem_report, refused_to

CHAT = "chat-api-50qps"
NOTE = "qa-concept"


def _box(page: str, marker: str) -> str:
    """The element the marker opens, up to its first closing </div>."""
    start = page.find(marker)
    return "" if start < 0 else page[start : page.index("</div>", start)]


def _listed(box: str) -> list[str]:
    return re.findall(r'class="problem-line" data-line="\d+">Line \d+</a>: ([^<]*)', box)


# --- a new concept note's template ----------------------------------------------------------


def _new_note(instructor) -> Draft:
    return services.draft_new(kind=Draft.Kind.CONCEPT, slug=NOTE, user=instructor)


def _note_written(text: str) -> str:
    """The concept template with each of its placeholder lines written by an instructor."""
    for placeholder, line in (
        ("Name the idea in a few words", "The decode floor"),
        (
            "One sentence that says what the idea is and why a candidate needs it.",
            "A decode step cannot be faster than reading every weight once.",
        ),
        (
            "Explain the idea in your own words: what it is, the number to remember (for example",
            "Each decode step streams all the weights from memory, so its floor is",
        ),
    ):
        assert placeholder in text
        text = text.replace(placeholder, line, 1)
    return text


@pytest.mark.django_db
def test_an_untouched_concept_template_is_not_published(instructor, instructor_client, client):
    draft = _new_note(instructor)
    response = instructor_client.post(
        reverse("authoring:concept_publish", args=[NOTE]),
        {"text": draft.text, "base_version": str(draft.version)},
    )
    assert response.status_code == 302
    assert refused_to(response["Location"]) == reverse("authoring:concept", args=[NOTE])
    assert not Concept.objects.filter(slug=NOTE).exists()
    page = instructor_client.get(response["Location"]).content.decode()
    listed = _listed(_box(page, 'id="refusal"'))
    assert len(listed) == 3 and all("still the template&#x27;s" in said for said in listed)
    assert "Name the idea in a few words" not in client.get(reverse("concepts")).content.decode()


@pytest.mark.django_db
def test_the_live_preview_of_a_concept_says_what_is_left_of_the_template(
    instructor, instructor_client
):
    draft = _new_note(instructor)
    url = reverse("authoring:concept_preview", args=[NOTE])
    preview = instructor_client.post(url, {"text": draft.text}).content.decode()
    assert "3 problems" in preview and "can be published" not in preview
    assert "the title is still the template&#x27;s" in preview
    # Only the placeholders are wrong: the note is still shown as candidates will see it.
    assert "author-candidate-view" in preview
    done = instructor_client.post(url, {"text": _note_written(draft.text)}).content.decode()
    assert 'id="no-problems"' in done


@pytest.mark.django_db
def test_a_written_concept_note_publishes(instructor):
    draft = _new_note(instructor)
    assert services.concept_publish_text(slug=NOTE, text=_note_written(draft.text))
    assert Concept.objects.get(slug=NOTE).title == "The decode floor"


# --- a refused Publish names each problem once -----------------------------------------------


@pytest.mark.django_db
def test_a_refused_publish_heads_its_list_and_lists_each_problem_once(
    instructor, instructor_client
):
    draft = services.question_new(slug="twice", user=instructor)
    text = draft.text.replace("expect: {batching-engine: hit}", "expect: {batching-engine: miss}")
    response = instructor_client.post(
        reverse("authoring:question_publish", args=["twice"]),
        {"text": text, "base_version": str(draft.version)},
    )
    page = instructor_client.get(response["Location"]).content.decode()
    refusal = _box(page, 'id="refusal"')
    assert "Not published: 2 problems and 1 failing test." in refusal
    listed = _listed(refusal)
    assert len(listed) == 3
    for said in listed:
        assert refusal.count(said) == 1, said
    assert "more)" not in refusal


@pytest.mark.django_db
def test_a_refused_publish_with_one_problem_says_so_once(content_loaded, instructor_client):
    text = Concept.objects.get(slug="tpot-floor").source_text.replace(
        "slug: tpot-floor", "slug: tpot-floor\nsurprise: 1", 1
    )
    response = instructor_client.post(
        reverse("authoring:concept_publish", args=["tpot-floor"]),
        {"text": text, "base_version": "0"},
    )
    refusal = _box(instructor_client.get(response["Location"]).content.decode(), 'id="refusal"')
    assert "Not published: 1 problem." in refusal
    [said] = _listed(refusal)
    assert refusal.count(said) == 1


# --- a stale tab's save ----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_stale_tabs_save_page_gives_one_instruction_and_no_reload(instructor, instructor_client):
    services.question_new(slug="stale", user=instructor)
    save = reverse("authoring:question_save", args=["stale"])
    instructor_client.post(save, {"text": "tab A", "base_version": "0"}, HTTP_HX_REQUEST="true")
    page = instructor_client.post(save, {"text": "tab B", "base_version": "0"})
    assert page.status_code == 409
    body = page.content.decode()
    refusal, status = _box(body, 'id="refusal"'), _box(body, 'id="save-status"')
    # The page came from a POST: reloading it sends the text again, so it never says reload.
    assert "reload" not in refusal.lower() and "reload" not in status.lower()
    assert refusal.count("open the newer draft") == 1
    assert "copy what you need" in refusal.lower()
    # What happened is told once, at the top; the status beside the box points there.
    assert body.count(services.STALE_DRAFT) == 1 and services.STALE_DRAFT in refusal
    assert "top of the page" in status
    # The autosave's answer sits on the editor's own address: there, a reload is the way on.
    autosaved = instructor_client.post(
        save, {"text": "tab B", "base_version": "0"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert autosaved.lower().count("reload") == 1


# --- the index's help ------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_index_does_not_call_the_template_ready(instructor_client):
    page = instructor_client.get(reverse("authoring:index")).content.decode()
    assert "already passes validation" not in page
    assert "placeholder" in page


# --- trying a draft as a candidate -----------------------------------------------------------


def _two_problems(text: str) -> str:
    return text.replace("difficulty: core", "difficulty: hard", 1).replace(
        "minutes: 45", "minutes: many", 1
    )


@pytest.mark.django_db
def test_a_refused_try_redirects_to_the_editor_and_lists_every_problem(
    instructor, instructor_client
):
    draft = services.question_new(slug="tried", user=instructor)
    services.draft_save(
        kind=Draft.Kind.QUESTION,
        slug="tried",
        text=_two_problems(draft.text),
        base_version=draft.version,
        user=instructor,
    )
    assert len(services.question_check(slug="tried", text=_two_problems(draft.text)).problems) == 2
    response = instructor_client.post(reverse("authoring:question_try", args=["tried"]))
    assert response.status_code == 302
    assert refused_to(response["Location"]) == reverse("authoring:question", args=["tried"])
    refusal = _box(instructor_client.get(response["Location"]).content.decode(), 'id="refusal"')
    assert "2 problems" in refusal and len(_listed(refusal)) == 2


@pytest.mark.django_db
def test_the_try_button_names_what_it_tries(content_loaded, instructor, instructor_client):
    unsaved = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    assert "Try the saved draft" not in unsaved  # no draft: it would try the published text
    assert "Try the published question" in unsaved
    services.draft_save(
        kind=Draft.Kind.QUESTION,
        slug=CHAT,
        text=services.question_draft(CHAT).text + "\nMore.",
        base_version=0,
        user=instructor,
    )
    saved = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    assert "Try the saved draft as a candidate" in saved


# --- closing a problem report ----------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "typed, said",
    [("abc", "The fixing revision is a number"), ("99", "no published revision 99")],
)
def test_a_bad_fixing_revision_is_told_at_its_field_with_the_value_kept(
    content_loaded, instructor_client, typed, said
):
    report = problem_report(slug=CHAT, step_key="clarify", message="Unclear.")
    response = instructor_client.post(
        reverse("authoring:report_close", args=[report.pk]), {"fixed_in": typed}
    )
    assert response.status_code == 302
    assert refused_to(response["Location"]) == reverse("authoring:question", args=[CHAT])
    page = instructor_client.get(response["Location"]).content.decode()
    field = re.search(rf'<input[^>]*id="fixed-{report.pk}"[^>]*>', page).group(0)
    assert f'value="{typed}"' in field and "autofocus" in field
    assert f'aria-describedby="fixed-{report.pk}-error"' in field
    error = re.search(rf'id="fixed-{report.pk}-error"[^>]*>([^<]*)<', page).group(1)
    assert said in error
    report.refresh_from_db()
    assert report.status == ProblemReport.Status.OPEN


@pytest.mark.django_db
def test_a_closed_report_is_not_closed_again(content_loaded, instructor, instructor_client):
    report = problem_report(slug=CHAT, step_key="clarify", message="Unclear.")
    revision = Question.objects.get(slug=CHAT).current_revision
    services.problem_report_close(report=report, user=instructor, fixed_in=revision)
    closed_at = ProblemReport.objects.get(pk=report.pk).closed_at
    other = type(instructor).objects.create_user("otto")
    with pytest.raises(services.AuthoringError, match="already closed"):
        services.problem_report_close(
            report=ProblemReport.objects.get(pk=report.pk), user=other, fixed_in=None
        )
    for typed in ("", "abc"):  # a stale tab's Close, whatever its field holds
        response = instructor_client.post(
            reverse("authoring:report_close", args=[report.pk]), {"fixed_in": typed}, follow=True
        )
        assert "already closed by ines" in response.content.decode()
    report.refresh_from_db()
    assert (report.closed_by, report.fixed_in, report.closed_at) == (
        instructor,
        revision,
        closed_at,
    )
