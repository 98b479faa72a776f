"""Authoring: who may, drafts, publishing, revisions, files, previews and problem reports."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.shortcuts import resolve_url
from django.urls import URLPattern, reverse
from django.utils.html import escape

from authoring import services
from authoring.models import Draft, ProblemReport
from authoring.urls import urlpatterns as authoring_urls
from practice import services as flow
from practice.autosave import StaleDraft
from practice.history import candidate_history
from practice.models import Attempt
from practice.selectors import attempt_number
from questionbank.files import parse_file
from questions.models import Concept, Question, QuestionRevision
from questions.selectors import question_list
from questions.services import content_load
from tests.authoring.conftest import problem_report, refused_chain, refused_to, written

CHAT = "chat-api-50qps"
# A refused upload comes back to the editor, which tells why at the upload field.
UPLOAD_REFUSED_TO = f"/author/questions/{CHAT}/"
CHAT_FILE = Path(settings.CONTENT_DIR) / "questions" / f"{CHAT}.md"
HTMX = {"HX-Request": "true"}


def _template_text(slug: str) -> str:
    text = services.QUESTION_TEMPLATE.read_text(encoding="utf-8")
    return written(text.replace(services.TEMPLATE_SLUG_LINE, f"slug: {slug}", 1))


def _without_step(text: str, step: str) -> str:
    """The text with one step's block (from its key to the next step's) cut out."""
    lines = text.split("\n")
    start = lines.index(f"  {step}:")
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"^  [a-z]+:$", lines[i]))
    return "\n".join(lines[:start] + lines[end:])


# --- who may author ----------------------------------------------------------------------


def _authoring_paths(report_id: int) -> list[str]:
    paths = []
    for pattern in authoring_urls:
        assert isinstance(pattern, URLPattern)
        slug = "tpot-floor" if pattern.name.startswith("concept") else CHAT
        values = {"slug": slug, "number": 1, "report_id": report_id}
        kwargs = {name: values[name] for name in pattern.pattern.converters}
        paths.append(reverse(f"authoring:{pattern.name}", kwargs=kwargs))
    return paths


@pytest.mark.django_db
def test_every_authoring_url_is_404_for_everyone_signed_in_but_instructors(
    content_loaded, client, candidate_client, instructor_client, candidate
):
    report = problem_report(
        slug=CHAT,
        step_key="clarify",
        message="typo",
        answer_text="We design for the peak.",
    )
    paths = _authoring_paths(report.pk)
    assert len(paths) == len(authoring_urls) >= 18
    for path in paths:
        assert candidate_client.get(path).status_code == 404, path
        assert candidate_client.post(path, {"text": "x", "slug": "x-y"}).status_code == 404, path
        # Signed out, each is sent to sign in (an editor whose session ended comes back).
        for response in (client.get(path), client.post(path, {"text": "x", "slug": "x-y"})):
            assert response.status_code == 302, path
            assert response["Location"].startswith(f"{resolve_url(settings.LOGIN_URL)}?next="), path
        # The same URLs exist for an instructor (so the 404s above are the permission).
        assert instructor_client.get(path).status_code in (200, 405), path
    report.refresh_from_db()
    assert report.status == ProblemReport.Status.OPEN
    assert not Draft.objects.exists()


# --- the template and the draft ------------------------------------------------------------


@pytest.mark.django_db
def test_the_new_question_template_passes_validation(instructor):
    draft = services.question_new(slug="summarise-tickets", user=instructor)
    check = services.question_check(slug=draft.slug, text=draft.text)
    assert check.problems == []
    assert check.spec.slug == "summarise-tickets"
    report = services.question_tests(check)
    assert report.failures == () and len(report.results) > 5
    tested_steps = {key for key in check.cf.meta["tests"]}
    assert tested_steps == {"clarify", "estimate", "architecture", "bottlenecks", "tradeoffs"}


@pytest.mark.django_db
def test_a_new_question_needs_a_fresh_valid_slug(content_loaded, instructor_client):
    response = instructor_client.post(reverse("authoring:create"), {"slug": "Bad Slug"})
    assert response.status_code == 422
    assert "lowercase letters" in response.content.decode()
    response = instructor_client.post(reverse("authoring:create"), {"slug": CHAT})
    assert response.status_code == 422
    assert "already a question" in response.content.decode()


@pytest.mark.django_db
def test_autosave_is_version_guarded_and_shows_the_newer_text(instructor_client, instructor):
    services.question_new(slug="guarded", user=instructor)
    url = reverse("authoring:question_save", args=["guarded"])
    first = instructor_client.post(
        url, {"text": "one\r\ntwo", "base_version": "0"}, HTTP_HX_REQUEST="true"
    )
    assert first.status_code == 200
    draft = Draft.objects.get(slug="guarded")
    assert (draft.text, draft.version) == ("one\ntwo", 1)  # CRLF from the textarea stored as LF
    # The page's header moves on with it: "Draft version 1", out of band.
    meta = re.search(r'<span id="draft-meta" hx-swap-oob="true">([^<]+)</span>', first.text)
    assert meta and meta[1].startswith("Draft version 1, last saved by ines at ")
    page = instructor_client.get(reverse("authoring:question", args=["guarded"])).text
    assert page.count('id="draft-meta"') == 1 and '<span id="draft-meta">Draft version 1' in page
    stale = instructor_client.post(
        url, {"text": "other tab", "base_version": "0"}, HTTP_HX_REQUEST="true"
    )
    assert stale.status_code == 409
    body = stale.content.decode()
    assert "Not saved." in body and "one\ntwo" in body
    assert Draft.objects.get(slug="guarded").text == "one\ntwo"


@pytest.mark.django_db
@pytest.mark.parametrize("text", ["from this tab", "from the other tab"])
def test_two_first_saves_at_once_are_a_conflict_not_an_integrity_error(
    instructor, monkeypatch, text
):
    """Another tab's first save of a file's draft lands between this save's look-up (no
    draft yet) and its insert: this one is refused with that tab's text, unless it is the
    same text (a retried request)."""
    Draft.objects.create(
        kind=Draft.Kind.QUESTION, slug="raced", text="from the other tab", version=1
    )
    real_filter, looked = Draft.objects.filter, []

    def first_look_up_misses(*args, **kwargs):
        looked.append(kwargs)
        found = real_filter(*args, **kwargs)
        return found.none() if len(looked) == 1 else found

    monkeypatch.setattr(Draft.objects, "filter", first_look_up_misses)
    if text == "from the other tab":
        draft = services.draft_save(
            kind=Draft.Kind.QUESTION, slug="raced", text=text, base_version=0, user=instructor
        )
        assert (draft.text, draft.version) == ("from the other tab", 1)
    else:
        with pytest.raises(StaleDraft) as refused:
            services.draft_save(
                kind=Draft.Kind.QUESTION, slug="raced", text=text, base_version=0, user=instructor
            )
        assert "saved from another tab" in str(refused.value)
        assert refused.value.current.text == "from the other tab"
    assert len(looked) == 2  # the insert was tried, and the stored draft read back
    assert Draft.objects.get(slug="raced").text == "from the other tab"


@pytest.mark.django_db
def test_a_stale_upload_is_refused_beside_the_newer_draft(content_loaded, instructor_client):
    url = reverse("authoring:question_save", args=[CHAT])
    instructor_client.post(url, {"text": "newer", "base_version": "0"}, HTTP_HX_REQUEST="true")
    older = CHAT_FILE.read_bytes() + b"\nolder"
    upload = SimpleUploadedFile(f"{CHAT}.md", older, content_type="text/markdown")
    response = instructor_client.post(
        reverse("authoring:question_upload", args=[CHAT]),
        {"file": upload, "base_version": "0"},
        follow=True,
    )
    assert refused_chain(response) == [(reverse("authoring:question", args=[CHAT]), 302)]
    page = response.content.decode()
    assert "saved from another tab" in page
    # An upload is no text typed here: the message speaks of the file.
    assert "your file was not uploaded over it" in page and "your text here" not in page
    assert Draft.objects.get(slug=CHAT).text == "newer"


@pytest.mark.django_db
def test_a_save_without_a_usable_version_is_refused_and_the_text_kept(
    instructor_client, instructor
):
    services.question_new(slug="versionless", user=instructor)
    url = reverse("authoring:question_save", args=["versionless"])
    for form in ({"text": "kept"}, {"text": "kept", "base_version": "x"}):
        refused = instructor_client.post(url, form, HTTP_HX_REQUEST="true")
        assert refused.status_code == 422 and "reload the page" in refused.content.decode()
        page = instructor_client.post(url, form)
        assert page.status_code == 422 and "kept</textarea>" in page.content.decode()
    assert Draft.objects.get(slug="versionless").version == 0


def _base_version(page: str) -> str:
    return re.search(r'id="base-version" value="(\d+)"', page).group(1)


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["question_save", "question_publish"])
def test_a_stale_tabs_refused_text_stays_refused_until_reloaded(
    instructor_client, instructor, action
):
    """A stale tab's Save or Publish shows its text again beside the newer draft: the page
    keeps the version that tab loaded, so its next autosave is refused too rather than
    saving the old text over the other tab's."""
    services.question_new(slug="two-tabs", user=instructor)
    save = reverse("authoring:question_save", args=["two-tabs"])
    instructor_client.post(save, {"text": "tab A", "base_version": "0"}, HTTP_HX_REQUEST="true")
    page = instructor_client.post(
        reverse(f"authoring:{action}", args=["two-tabs"]), {"text": "tab B", "base_version": "0"}
    )
    assert page.status_code == 409
    body = page.content.decode()
    assert "tab B</textarea>" in body and "Not saved." in body and "tab A" in body
    assert _base_version(body) == "0"
    again = instructor_client.post(
        save,
        {"text": "tab B, typed on", "base_version": _base_version(body)},
        HTTP_HX_REQUEST="true",
    )
    assert again.status_code == 409
    assert Draft.objects.get(slug="two-tabs").text == "tab A"


@pytest.mark.django_db
def test_a_new_questions_unsaved_draft_is_not_called_published(
    content_loaded, instructor_client, instructor
):
    services.question_new(slug="fresh", user=instructor)
    body = instructor_client.get(reverse("authoring:question", args=["fresh"])).content.decode()
    assert "this is the published text" not in body and "this is the template" in body
    published = instructor_client.get(reverse("authoring:question", args=[CHAT]))
    assert "this is the published text" in published.content.decode()


@pytest.mark.django_db
def test_the_live_preview_lists_a_deleted_step_with_its_line(instructor_client, instructor):
    services.question_new(slug="previewed", user=instructor)
    text = _without_step(_template_text("previewed"), "bottlenecks")
    response = instructor_client.post(
        reverse("authoring:question_preview", args=["previewed"]), {"text": text}
    )
    body = response.content.decode()
    steps_line = text.split("\n").index("steps:") + 1
    assert f'data-line="{steps_line}"' in body
    assert "missing step &#x27;bottlenecks&#x27;" in body
    fixed = instructor_client.post(
        reverse("authoring:question_preview", args=["previewed"]),
        {"text": _template_text("previewed")},
    )
    assert "No problems" in fixed.content.decode()
    assert "Step 4: Bottlenecks and failure modes" in fixed.content.decode()


@pytest.mark.django_db
def test_yaml_aliases_are_refused_before_they_are_expanded(instructor_client, instructor):
    services.question_new(slug="bomb", user=instructor)
    lines = ["---", "slug: bomb", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):  # 10**9 values if expanded
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    text = "\n".join([*lines, "---", "body"])
    preview = instructor_client.post(
        reverse("authoring:question_preview", args=["bomb"]), {"text": text}
    ).content.decode()
    assert 'data-line="4"' in preview and "YAML aliases" in preview


# --- publishing and revisions --------------------------------------------------------------


@pytest.mark.django_db
def test_publish_is_refused_while_the_text_has_a_problem(instructor_client, instructor):
    services.question_new(slug="refused", user=instructor)
    text = _without_step(_template_text("refused"), "bottlenecks")
    response = instructor_client.post(
        reverse("authoring:question_publish", args=["refused"]),
        {"text": text, "base_version": "0"},
        follow=True,
    )
    assert refused_chain(response) == [(reverse("authoring:question", args=["refused"]), 302)]
    assert "Not published: 2 problems." in response.content.decode()
    assert "missing step &#x27;bottlenecks&#x27;" in response.content.decode()
    assert not QuestionRevision.objects.filter(question__slug="refused").exists()
    assert Draft.objects.get(slug="refused").text == text  # what was typed is kept


@pytest.mark.django_db
def test_the_preview_shows_every_problem_publish_refuses_for(instructor, instructor_client):
    # The untouched template validates and passes its tests: the preview said "this text can
    # be published", and Publish refused its placeholder lines.
    draft = services.question_new(slug="left-as-is", user=instructor)
    with pytest.raises(services.PublishRefused) as refused:
        services.question_publish(slug="left-as-is", text=draft.text)
    preview = instructor_client.post(
        reverse("authoring:question_preview", args=["left-as-is"]), {"text": draft.text}
    ).content.decode()
    assert 'id="no-problems"' not in preview
    assert refused.value.problems
    for problem in refused.value.problems:
        link = f'class="problem-line" data-line="{problem.line}">Line {problem.line}</a>'
        assert f"{link}: {escape(problem.message)}" in preview


@pytest.mark.django_db
def test_a_refused_publish_lists_every_problem_and_failing_test_at_its_line(
    instructor, instructor_client
):
    # The refusal heads the list with the count, then lists each problem once.
    draft = services.question_new(slug="refused", user=instructor)
    miss = "      expect: {batching-engine: miss}"
    text = draft.text.replace("      expect: {batching-engine: hit}", miss, 1)
    lines = text.split("\n")
    response = instructor_client.post(
        reverse("authoring:question_publish", args=["refused"]),
        {"text": text, "base_version": str(draft.version)},
        follow=True,
    )
    assert refused_chain(response) == [(reverse("authoring:question", args=["refused"]), 302)]
    body = response.content.decode()
    refusal = body[body.index('id="refusal"') : body.index("</div>", body.index('id="refusal"'))]
    assert "Not published: 2 problems and 1 failing test." in refusal
    placeholder_lines = [
        number
        for number, line in enumerate(lines, start=1)
        if any(placeholder in line for placeholder in services.TEMPLATE_PLACEHOLDERS)
    ]
    listed = re.findall(r'class="problem-line" data-line="(\d+)">Line \1</a>: ([^<]*)', refusal)
    assert [int(line) for line, _ in listed] == [*placeholder_lines, lines.index(miss) + 1]
    assert "the scenario is still the template&#x27;s" in listed[1][1]
    assert listed[2][1].endswith("expected batching-engine: miss, got batching-engine: hit")


@pytest.mark.django_db
def test_the_preview_counts_the_files_tests_apart_from_the_built_in_checks(
    instructor, instructor_client
):
    # "all 23 question tests pass" for a file that holds 5 tests.
    text = _template_text("counted")
    tests = services.question_tests(services.question_check(slug="counted", text=text))
    own = sum(result.kind != "builtin" for result in tests.results)
    written_tests = parse_file("counted.md", text).meta["tests"]
    assert own == sum(len(entries) for entries in written_tests.values()) < len(tests.results)
    preview = instructor_client.post(
        reverse("authoring:question_preview", args=["counted"]), {"text": text}
    ).content.decode()
    built_in = len(tests.results) - own
    assert f"No problems, and its {own} tests and {built_in} built-in checks pass" in preview


@pytest.mark.django_db
def test_a_draft_holding_the_published_text_says_so(content_loaded, instructor_client):
    # "Draft saved (version 2)" on a page showing exactly the published text.
    published = Question.objects.get(slug=CHAT).current_revision
    save = reverse("authoring:question_save", args=[CHAT])
    same = f"the same text as published revision {published.number}"
    edited = instructor_client.post(
        save, {"text": published.source_text + "\nMore.", "base_version": "0"}, headers=HTMX
    )
    assert edited.status_code == 200 and same not in edited.content.decode()
    undone = instructor_client.post(
        save, {"text": published.source_text, "base_version": "1"}, headers=HTMX
    )
    assert f"(version 2): {same}." in undone.content.decode()
    page = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    assert f"Draft saved (version 2): {same}." in page


@pytest.mark.django_db
def test_publish_names_the_failing_question_test(instructor_client, instructor):
    services.question_new(slug="tested", user=instructor)
    text = _template_text("tested").replace(
        "expect: {batching-engine: hit}", "expect: {batching-engine: miss}", 1
    )
    url = reverse("authoring:question_publish", args=["tested"])
    response = instructor_client.post(url, {"text": text, "base_version": "0"}, follow=True)
    assert refused_chain(response) == [(reverse("authoring:question", args=["tested"]), 302)]
    body = response.content.decode()
    assert "Not published: 1 failing test." in body
    assert "architecture test 1 (engine named): expected batching-engine: miss" in body
    assert not QuestionRevision.objects.filter(question__slug="tested").exists()
    preview = instructor_client.post(
        reverse("authoring:question_preview", args=["tested"]), {"text": text}
    ).content.decode()
    line = text.split("\n").index("      expect: {batching-engine: miss}") + 1
    # The count says what it holds: the file's own tests apart from the built-in checks.
    assert f'data-line="{line}"' in preview
    assert "1 of its 5 tests and 18 built-in checks fails" in preview


@pytest.mark.django_db
def test_publishing_and_load_content_make_the_same_revision(content_loaded, tmp_path):
    text = CHAT_FILE.read_text(encoding="utf-8").replace(
        "title: Design a chat completion API", "title: Design a chat completion API, again", 1
    )
    assert "again" in text
    revision, created = services.question_publish(slug=CHAT, text=text)
    assert created and revision.number == 2 and revision.source_text == text
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / f"{CHAT}.md").write_text(text, encoding="utf-8")
    report = content_load(root=tmp_path)
    assert report.problems == [] and report.created == []
    assert QuestionRevision.objects.filter(question__slug=CHAT).count() == 2
    assert services.question_publish(slug=CHAT, text=text) == (revision, False)


@pytest.mark.django_db
def test_an_open_attempt_keeps_its_revision_and_a_new_one_gets_the_latest(
    content_loaded, candidate, candidate_client
):
    old = Question.objects.get(slug=CHAT).current_revision
    attempt = flow.attempt_start(user=candidate, revision=old)
    old_prompt_words = "Before any arithmetic"
    new_text = old.source_text.replace(old_prompt_words, "First of all, before any arithmetic", 1)
    assert new_text != old.source_text
    new, created = services.question_publish(slug=CHAT, text=new_text)
    assert created and new.number == old.number + 1
    attempt.refresh_from_db()
    assert attempt.revision_id == old.pk
    step = candidate_client.get(reverse("attempt_step", args=[attempt.pk, "clarify"]))
    assert "First of all" not in step.content.decode()
    candidate_client.post(reverse("attempt_start", args=[CHAT]))
    latest = Attempt.objects.filter(user=candidate).order_by("-pk").first()
    assert latest.revision_id == new.pk
    step = candidate_client.get(reverse("attempt_step", args=[latest.pk, "clarify"]))
    assert "First of all" in step.content.decode()
    with pytest.raises(Exception, match="immutable"):
        old.save()


@pytest.mark.django_db
def test_the_revision_page_shows_the_diff_escaped(content_loaded, instructor_client):
    old = Question.objects.get(slug=CHAT).current_revision
    text = old.source_text.replace(
        "title: Design a chat completion API", "title: Design a <b>chat</b> API", 1
    )
    new, _ = services.question_publish(slug=CHAT, text=text)
    body = instructor_client.get(reverse("authoring:revision", args=[CHAT, new.number])).content
    body = body.decode()
    assert "diff-del" in body and "-title: Design a chat completion API" in body
    assert "+title: Design a &lt;b&gt;chat&lt;/b&gt; API" in body
    assert "<b>chat</b>" not in body


# --- files ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_export_then_load_content_creates_no_revision(bank_loaded, tmp_path):
    before = QuestionRevision.objects.count()
    call_command("export_content", str(tmp_path))
    for shipped in sorted((Path(settings.CONTENT_DIR) / "questions").glob("*.md")):
        assert (tmp_path / "questions" / shipped.name).read_bytes() == shipped.read_bytes()
    for shipped in sorted((Path(settings.CONTENT_DIR) / "concepts").glob("*.md")):
        assert (tmp_path / "concepts" / shipped.name).read_bytes() == shipped.read_bytes()
    call_command("load_content", str(tmp_path))
    report = content_load(root=tmp_path)
    assert report.created == [] and report.concepts_saved == []
    assert QuestionRevision.objects.count() == before


@pytest.mark.django_db
def test_a_release_of_the_files_does_not_undo_a_question_published_in_the_editor(
    content_loaded, tmp_path, capsys
):
    """The files still hold r1 after an instructor published r2 in the browser: loading them
    (make run, a release) keeps r2 and says so; a file edited since is published as usual."""
    text = CHAT_FILE.read_text(encoding="utf-8")
    edited = text.replace("title: Design a chat", "title: Design, in the editor, a chat", 1)
    r2, created = services.question_publish(slug=CHAT, text=edited)
    assert created and r2.number == 2
    call_command("load_content")
    assert "kept back chat-api-50qps r1 (current: r2)" in capsys.readouterr().out
    assert Question.objects.get(slug=CHAT).current_revision == r2
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / f"{CHAT}.md").write_text(
        text.replace("title: Design a chat", "title: Design, in git, a chat", 1), encoding="utf-8"
    )
    report = content_load(root=tmp_path)
    assert report.created == [f"{CHAT} r3"] and report.behind == []


def test_publishing_a_draft_does_not_silently_undo_a_revision_published_since_it_began(
    content_loaded, instructor_client, tmp_path
):
    """An instructor's draft began from r1; a release of the files then published r2 (make
    run loads them). Publishing the draft is refused, naming r2, with the draft's text kept on
    the page; confirming for r2 publishes r3, and the draft's base moves on to it."""
    text = CHAT_FILE.read_text(encoding="utf-8")
    editor = reverse("authoring:question", args=[CHAT])
    publish = reverse("authoring:question_publish", args=[CHAT])
    mine = text.replace("title: Design a chat", "title: Design, in my draft, a chat", 1)
    save = instructor_client.post(
        reverse("authoring:question_save", args=[CHAT]), {"text": mine, "base_version": "0"}
    )
    assert save.status_code == 302 and Draft.objects.get(slug=CHAT).base_revision == 1
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / f"{CHAT}.md").write_text(
        text.replace("title: Design a chat", "title: Design, in git, a chat", 1), encoding="utf-8"
    )
    assert content_load(root=tmp_path).created == [f"{CHAT} r2"]

    refused = instructor_client.post(publish, {"text": mine, "base_version": "1"}, follow=True)
    page = refused.content.decode()
    assert refused_chain(refused) == [(editor, 302)]
    assert "revision 2 was published after this draft began from revision 1" in page
    assert "Design, in my draft, a chat" in page  # the text stays in the box
    assert reverse("authoring:revision", args=[CHAT, 2]) in page
    assert Question.objects.get(slug=CHAT).current_revision.number == 2
    # A confirmation naming another revision (a stale page) is refused the same way.
    stale = instructor_client.post(
        publish, {"text": mine, "base_version": "1", "replace_newer": "7"}
    )
    assert stale.status_code == 302 and refused_to(stale["Location"]) == editor
    told = instructor_client.get(stale["Location"]).content.decode()
    assert "revision 2 was published" in told

    confirmed = instructor_client.post(
        publish, {"text": mine, "base_version": "1", "replace_newer": "2"}
    )
    assert confirmed.status_code == 302
    current = Question.objects.get(slug=CHAT).current_revision
    assert current.number == 3 and "Design, in my draft, a chat" in current.source_text
    assert Draft.objects.get(slug=CHAT).base_revision == 3
    # From its new base the draft publishes with no question asked.
    again = mine.replace("in my draft", "in my next draft", 1)
    response = instructor_client.post(publish, {"text": again, "base_version": "2"})
    assert response.status_code == 302
    assert Question.objects.get(slug=CHAT).current_revision.number == 4
    assert instructor_client.get(editor).status_code == 200


def test_a_draft_first_saved_after_a_newer_revision_keeps_the_base_its_page_loaded(
    content_loaded, instructor_client, tmp_path
):
    """The editor was opened on r1 with no draft saved; a release of the files then published
    r2 before the instructor's first keystroke. The draft's text began from r1, so its base
    is r1 (the page's), not r2 (the current one at the first save): publishing it is refused
    instead of silently undoing r2."""
    text = CHAT_FILE.read_text(encoding="utf-8")
    page = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    assert 'name="base_revision" value="1"' in page
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / f"{CHAT}.md").write_text(
        text.replace("title: Design a chat", "title: Design, in git, a chat", 1), encoding="utf-8"
    )
    assert content_load(root=tmp_path).created == [f"{CHAT} r2"]

    mine = text.replace("title: Design a chat", "title: Design, in my draft, a chat", 1)
    refused = instructor_client.post(
        reverse("authoring:question_publish", args=[CHAT]),
        {"text": mine, "base_version": "0", "base_revision": "1"},
        follow=True,
    )
    assert refused_chain(refused) == [(reverse("authoring:question", args=[CHAT]), 302)]
    assert "revision 2 was published after this draft began from revision 1" in (
        refused.content.decode()
    )
    assert Draft.objects.get(slug=CHAT).base_revision == 1
    assert Question.objects.get(slug=CHAT).current_revision.number == 2


def test_a_draft_whose_text_is_the_newer_revision_publishes_without_asking(
    content_loaded, instructor
):
    """The instructor copied the newer revision into the draft: nothing would be undone."""
    text = CHAT_FILE.read_text(encoding="utf-8")
    draft = services.draft_save(
        kind="question", slug=CHAT, text=text, base_version=0, user=instructor
    )
    newer = text.replace("title: Design a chat", "title: Design, in git, a chat", 1)
    services.question_publish(slug=CHAT, text=newer)
    draft = services.draft_save(
        kind="question", slug=CHAT, text=newer, base_version=draft.version, user=instructor
    )
    revision, created = services.question_draft_publish(draft=draft)
    assert revision.number == 2 and not created
    assert Draft.objects.get(slug=CHAT).base_revision == 2


@pytest.mark.django_db
def test_an_uploaded_file_downloads_byte_for_byte(content_loaded, instructor_client):
    data = CHAT_FILE.read_bytes().replace(
        b"title: Design a chat", b"title: Design \xc3\xa0 chat", 1
    )
    upload = SimpleUploadedFile(f"{CHAT}.md", data, content_type="text/markdown")
    response = instructor_client.post(
        reverse("authoring:question_upload", args=[CHAT]), {"file": upload, "base_version": "0"}
    )
    assert response.status_code == 302
    download = instructor_client.get(reverse("authoring:question_download", args=[CHAT]))
    assert download["Content-Disposition"] == f'attachment; filename="{CHAT}.md"'
    assert download.content == data
    revision, created = services.question_publish(slug=CHAT, text=Draft.objects.get(slug=CHAT).text)
    assert created
    published = instructor_client.get(
        reverse("authoring:revision_download", args=[CHAT, revision.number])
    )
    assert published.content == data


@pytest.mark.django_db
def test_an_upload_that_is_not_utf8_is_refused_and_the_draft_kept(
    content_loaded, instructor_client
):
    upload = SimpleUploadedFile("x.md", b"---\nslug: x\n\xff\n", content_type="text/markdown")
    response = instructor_client.post(
        reverse("authoring:question_upload", args=[CHAT]),
        {"file": upload, "base_version": "0"},
        follow=True,
    )
    assert refused_chain(response) == [(UPLOAD_REFUSED_TO, 302)]
    assert "not UTF-8 text (line 3)" in response.content.decode()
    assert not Draft.objects.exists()
    upload = SimpleUploadedFile("x.md", b"---\nslug: x\n\x00\n", content_type="text/markdown")
    response = instructor_client.post(
        reverse("authoring:question_upload", args=[CHAT]),
        {"file": upload, "base_version": "0"},
        follow=True,
    )
    assert refused_chain(response) == [(UPLOAD_REFUSED_TO, 302)]
    assert "NUL character (line 3)" in response.content.decode()
    assert not Draft.objects.exists()


@pytest.mark.django_db
def test_an_upload_of_another_questions_file_is_refused_and_the_draft_kept(
    content_loaded, instructor, instructor_client
):
    # Uploading chat-api's file in another question's editor made it that draft, silently.
    services.question_new(slug="mine", user=instructor)
    before = services.question_draft("mine").text
    upload = SimpleUploadedFile("chat.md", CHAT_FILE.read_bytes(), content_type="text/markdown")
    response = instructor_client.post(
        reverse("authoring:question_upload", args=["mine"]),
        {"file": upload, "base_version": "1"},
        follow=True,
    )
    assert refused_chain(response) == [("/author/questions/mine/", 302)]
    assert f"This file is for &#x27;{CHAT}&#x27;, not &#x27;mine&#x27;" in response.content.decode()
    assert services.question_draft("mine").text == before


@pytest.mark.django_db
@pytest.mark.parametrize("data", [b"", b" \r\n\n\t"], ids=["no bytes", "blank lines"])
def test_an_empty_upload_is_refused_and_the_draft_kept(
    content_loaded, instructor, instructor_client, data
):
    # An empty file taken as the draft would leave the whole text gone, with no way back.
    draft = services.question_new(slug="mine", user=instructor)
    upload = SimpleUploadedFile("empty.md", data, content_type="text/markdown")
    response = instructor_client.post(
        reverse("authoring:question_upload", args=["mine"]),
        {"file": upload, "base_version": str(draft.version)},
        follow=True,
    )
    assert refused_chain(response) == [("/author/questions/mine/", 302)]
    body = response.content.decode()
    assert "The file is empty: choose the .md file with your text. This draft is unchanged." in (
        body
    )
    kept = services.question_draft("mine")
    assert (kept.text, kept.version) == (draft.text, draft.version)
    assert escape(draft.text) in body  # the editor still shows it


@pytest.mark.django_db
def test_a_slug_longer_than_the_database_holds_is_refused(instructor, instructor_client):
    response = instructor_client.post(reverse("authoring:create"), {"slug": "a" * 51})
    assert "This slug is 51 characters; the limit is 50" in response.content.decode()
    assert not Draft.objects.exists()
    services.question_new(slug="a" * 50, user=instructor)


# --- preview attempts ----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_draft_preview_is_an_unpublished_revision_no_candidate_reaches(
    instructor, instructor_client, candidate_client, candidate
):
    services.question_new(slug="unseen", user=instructor)
    response = instructor_client.post(reverse("authoring:question_try", args=["unseen"]))
    attempt = Attempt.objects.get(user=instructor)
    assert response.status_code == 302 and attempt.is_preview
    assert not attempt.revision.is_published and attempt.revision.number == 0
    step = instructor_client.get(reverse("attempt_step", args=[attempt.pk, "clarify"]))
    assert "A preview attempt: it counts in no history" in step.content.decode()
    # Candidates: not listed, no page, cannot start it.
    assert all(r.question.slug != "unseen" for r in question_list())
    assert candidate_client.get(reverse("question", args=["unseen"])).status_code == 404
    assert candidate_client.post(reverse("attempt_start", args=["unseen"])).status_code == 404
    assert not Attempt.objects.filter(user=candidate).exists()
    # Publishing afterwards numbers from 1: previews take no revision number.
    revision, created = services.question_publish(slug="unseen", text=_template_text("unseen"))
    assert created and revision.number == 1 and revision.is_published


@pytest.mark.django_db
def test_preview_attempts_count_in_no_history(content_loaded, instructor, instructor_client):
    instructor_client.post(reverse("authoring:question_try", args=[CHAT]), {"which": "published"})
    preview = Attempt.objects.get(user=instructor, is_preview=True)
    real = flow.attempt_start(
        user=instructor, revision=Question.objects.get(slug=CHAT).current_revision
    )
    history = candidate_history(instructor)
    assert [row["attempt"].pk for row in history["rows"]] == [real.pk]
    assert attempt_number(real) == 1 == history["rows"][0]["number"]
    page = instructor_client.get(reverse("question", args=[CHAT])).content.decode()
    assert f"/attempts/{preview.pk}/" not in page


# --- problem reports -----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_problem_report_carries_the_answer_only_with_agreement(
    content_loaded, candidate, candidate_client, instructor_client
):
    revision = Question.objects.get(slug=CHAT).current_revision
    attempt = flow.attempt_start(user=candidate, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    flow.draft_save(answer=answer, text="my private answer", fields={}, base_version=0)
    step = candidate_client.get(reverse("attempt_step", args=[attempt.pk, "architecture"]))
    url = reverse("problem_report", args=[attempt.pk, "architecture"])
    assert url in step.content.decode()
    candidate_client.post(url, {"message": "The prompt says 50 QPS twice."})
    candidate_client.post(url, {"message": "Still unclear.", "share_answer": "on"})
    kept, shared = ProblemReport.objects.order_by("pk")
    assert (kept.revision_id, kept.step_key, kept.answer_text) == (revision.pk, "architecture", "")
    assert shared.answer_text == "my private answer"
    editor = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    assert "The prompt says 50 QPS twice." in editor
    # Each report's Close button names its report to a screen reader, not just "Close".
    closes = re.findall(r'report-close">.*?<button[^>]*>(.*?)</button>', editor, flags=re.S)
    names = {re.sub(r"<[^>]+>", "", c) for c in closes}
    assert len(closes) == 2 and len(names) == 2 and all("on Architecture" in n for n in names)
    listing = instructor_client.get(reverse("authoring:index")).content.decode()
    assert "<strong>2</strong>" in listing
    instructor_client.post(
        reverse("authoring:report_close", args=[kept.pk]), {"fixed_in": str(revision.number)}
    )
    kept.refresh_from_db()
    assert kept.status == ProblemReport.Status.CLOSED and kept.fixed_in_id == revision.pk


@pytest.mark.django_db
def test_a_shared_answer_becomes_a_test_in_the_draft(content_loaded, instructor_client):
    revision = Question.objects.get(slug=CHAT).current_revision
    answer = "Route each chat to the replica that already holds its system prompt in memory."
    report = ProblemReport.objects.create(
        question=revision.question,
        revision=revision,
        step_key="architecture",
        message="My answer was right.",
        answer_text=answer,
    )
    url = reverse("authoring:report_add_test", args=[report.pk])
    form = instructor_client.get(url).content.decode()
    points = re.findall(r'name="verdict-([a-z0-9-]+)" value="hit"', form)
    assert points and "the offline grader says" in form
    verdicts = {f"verdict-{p}": "miss" for p in points}
    verdicts[f"verdict-{points[0]}"] = "hit"  # the human verdict on the first point
    assert instructor_client.post(url, verdicts).status_code == 302
    draft = Draft.objects.get(slug=CHAT)
    diff = list(
        difflib.unified_diff(revision.source_text.split("\n"), draft.text.split("\n"), n=0)
    )[2:]
    assert not [line for line in diff if line.startswith("-")]  # nothing else changed
    added = [line[1:] for line in diff if line.startswith("+")]
    assert f"    - name: from report {report.pk}" in added
    assert f"        {points[0]}: hit" in added
    check = services.question_check(slug=CHAT, text=draft.text)
    assert check.problems == [] and services.question_tests(check).failures == ()


@pytest.mark.django_db
def test_a_test_form_sent_twice_adds_the_test_once(content_loaded, instructor_client):
    report = problem_report(
        slug=CHAT,
        step_key="architecture",
        message="My answer was right.",
        answer_text="Route each chat to the replica that holds its prefix.",
    )
    url = reverse("authoring:report_add_test", args=[report.pk])
    form = instructor_client.get(url).content.decode()
    points = re.findall(r'name="verdict-([a-z0-9-]+)" value="hit"', form)
    verdicts = {f"verdict-{p}": "partial" for p in points}
    assert instructor_client.post(url, verdicts).status_code == 302
    again = instructor_client.post(url, verdicts)  # a double click, or back and resend
    assert again.status_code == 422
    body = again.content.decode()
    assert "already has the test" in body
    # The refused form keeps the instructor's verdicts, not the offline grader's.
    for p in points:
        assert f'name="verdict-{p}" value="partial" checked' in body
    assert Draft.objects.get(slug=CHAT).text.count(f"name: from report {report.pk}") == 1


@pytest.mark.django_db
def test_problem_reports_are_rate_limited_and_the_text_kept(
    content_loaded, candidate, candidate_client, one_rate_window
):
    attempt = flow.attempt_start(
        user=candidate, revision=Question.objects.get(slug=CHAT).current_revision
    )
    url = reverse("problem_report", args=[attempt.pk, "clarify"])
    for n in range(services.PROBLEM_REPORTS_PER_MINUTE):
        assert candidate_client.post(url, {"message": f"report {n}"}).status_code == 302
    refused = candidate_client.post(url, {"message": "one too many"})
    assert refused.status_code == 429
    assert "one too many" in refused.content.decode()
    assert ProblemReport.objects.count() == services.PROBLEM_REPORTS_PER_MINUTE


@pytest.mark.django_db
def test_problem_reports_are_capped_per_day_as_well(
    content_loaded, candidate, candidate_client, monkeypatch
):
    """Three a minute is still thousands a day in the instructors' queue."""
    monkeypatch.setattr(services, "PROBLEM_REPORTS_PER_MINUTE", 1000)
    monkeypatch.setattr(services, "PROBLEM_REPORTS_PER_DAY", 2)
    attempt = flow.attempt_start(
        user=candidate, revision=Question.objects.get(slug=CHAT).current_revision
    )
    url = reverse("problem_report", args=[attempt.pk, "clarify"])
    for n in range(2):
        assert candidate_client.post(url, {"message": f"report {n}"}).status_code == 302
    refused = candidate_client.post(url, {"message": "the third today"})
    assert refused.status_code == 429
    assert "2 problem reports. Your instructors have them" in refused.content.decode()
    assert ProblemReport.objects.count() == 2


@pytest.mark.django_db
def test_nobody_reports_on_someone_elses_attempt(content_loaded, instructor, candidate_client):
    attempt = flow.attempt_start(
        user=instructor, revision=Question.objects.get(slug=CHAT).current_revision
    )
    url = reverse("problem_report", args=[attempt.pk, "clarify"])
    assert candidate_client.post(url, {"message": "x"}).status_code == 404
    assert not ProblemReport.objects.exists()


# --- concept notes -------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_concept_note_is_written_previewed_and_published_like_a_question(
    content_loaded, instructor_client, client, tmp_path
):
    created = instructor_client.post(
        reverse("authoring:create"), {"kind": "concept", "slug": "decode-floor"}
    )
    assert created.status_code == 302 and created["Location"] == "/author/concepts/decode-floor/"
    draft = Draft.objects.get(kind=Draft.Kind.CONCEPT, slug="decode-floor")
    bodiless = draft.text.split("\n---\n")[0] + "\n---\n"
    preview = instructor_client.post(
        reverse("authoring:concept_preview", args=["decode-floor"]), {"text": bodiless}
    ).content.decode()
    assert "concept note has no body" in preview and 'data-line="7"' in preview
    # Each placeholder written (Publish refuses the template's); its formula kept.
    text = (
        draft.text.replace("Name the idea in a few words", "The decode floor")
        .replace("related: []", "related: [tpot-floor]")
        .replace(
            "One sentence that says what the idea is and why a candidate needs it.",
            "A decode step cannot be faster than reading every weight once.",
        )
        .replace("Explain the idea in your own words:", "Each step reads all the weights:")
    )
    published = instructor_client.post(
        reverse("authoring:concept_publish", args=["decode-floor"]),
        {"text": text, "base_version": str(draft.version)},
    )
    assert published.status_code == 302
    page = client.get(reverse("concept", args=["decode-floor"])).content.decode()
    assert "The decode floor" in page and "<math" in page  # $t = W / bw$ rendered once
    call_command("export_content", str(tmp_path))
    assert (tmp_path / "concepts" / "decode-floor.md").read_text(encoding="utf-8") == text
    assert content_load(root=tmp_path).concepts_saved == []


@pytest.mark.django_db
def test_a_concept_note_with_a_problem_is_not_published(content_loaded, instructor_client):
    before = Concept.objects.get(slug="tpot-floor")
    text = before.source_text.replace("slug: tpot-floor", "slug: tpot-floor\nsurprise: 1", 1)
    response = instructor_client.post(
        reverse("authoring:concept_publish", args=["tpot-floor"]),
        {"text": text, "base_version": "0"},
        follow=True,
    )
    assert refused_chain(response) == [(reverse("authoring:concept", args=["tpot-floor"]), 302)]
    body = response.content.decode()
    assert "Not published: 1 problem." in body and 'data-line="3">Line 3</a>: unknown key' in body
    assert Concept.objects.get(slug="tpot-floor").content_hash == before.content_hash


def test_direction_controls_in_a_problem_report_are_shown_to_the_instructor_not_obeyed(
    content_loaded, instructor_client
):
    """A candidate's report and the answer they shared are their characters: U+202E in them
    would reorder what the instructor reads on the editor's page."""
    problem_report(
        slug=CHAT,
        step_key="architecture",
        message="The rubric is wrong.\u202eenif si tI",
        answer_text="Add replicas.\u202e.sgnihtyreve sehcac ti",
    )
    page = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    assert "\u202e" not in page
    assert "The rubric is wrong.[U+202E]enif si tI" in page
    assert "Add replicas.[U+202E].sgnihtyreve sehcac ti" in page


@pytest.mark.django_db
def test_the_untouched_template_is_refused_at_its_placeholder_lines(instructor):
    # It validates and passes its tests, so Publish put "Write the scenario here" and
    # "Replace this line ..." before candidates.
    draft = services.question_new(slug="left-as-is", user=instructor)
    with pytest.raises(services.PublishRefused) as refused:
        services.question_publish(slug="left-as-is", text=draft.text)
    lines = draft.text.splitlines()
    problems = refused.value.problems
    assert [p.message for p in problems] == [
        "this constraint is still the template's; write what the business cares about",
        "the scenario is still the template's; write your own",
    ]
    placeholders = services.TEMPLATE_PLACEHOLDERS
    assert all(any(k in lines[p.line - 1] for k in placeholders) for p in problems)
    assert str(refused.value) == "Not published: 2 problems."
    # Written, it publishes.
    revision, created = services.question_publish(slug="left-as-is", text=written(draft.text))
    assert created and revision.number == 1
