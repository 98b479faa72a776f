"""Edge cases instructors meet in the editor: front-matter values YAML reads but a question
cannot hold (each a problem at its line, never a crash of the preview, the editor page,
publishing or a preview attempt), a file saved with a byte order mark, and a stale tab's
refused page."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.urls import reverse

from authoring import selectors, services
from authoring.models import Draft
from questions.models import QuestionRevision
from tests.authoring.conftest import refused_chain, refused_to, written

SLUG = "odd-values"


def _template(**replace: str) -> str:
    text = services.QUESTION_TEMPLATE.read_text(encoding="utf-8")
    text = written(text.replace(services.TEMPLATE_SLUG_LINE, f"slug: {SLUG}", 1))
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new, 1)
    return text


def _line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


# A value libyaml parses but PyYAML cannot turn into Python: a date that does not exist, an
# integer past Python's digit limit for int(str).
UNREADABLE = {
    "impossible date": ("minutes: 45", "minutes: 2024-02-30"),
    "integer of 5,000 digits": ("minutes: 45", "minutes: 1" + "0" * 5000),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", UNREADABLE, ids=list(UNREADABLE))
def test_a_value_yaml_cannot_read_is_a_problem_at_its_line(instructor_client, instructor, case):
    old, new = UNREADABLE[case]
    text = _template(**{old: new})
    draft = services.question_new(slug=SLUG, user=instructor)
    line = _line_of(text, new)

    preview = instructor_client.post(
        reverse("authoring:question_preview", args=[SLUG]), {"text": text}
    )
    assert preview.status_code == 200
    body = preview.content.decode()
    assert f'data-line="{line}"' in body and "cannot be read" in body

    # The draft is saved with it; its editor still opens, and publishing says why not.
    saved = instructor_client.post(
        reverse("authoring:question_save", args=[SLUG]),
        {"text": text, "base_version": draft.version},
        headers={"HX-Request": "true"},
    )
    assert saved.status_code == 200
    assert instructor_client.get(reverse("authoring:question", args=[SLUG])).status_code == 200
    published = instructor_client.post(
        reverse("authoring:question_publish", args=[SLUG]),
        {"text": text, "base_version": Draft.objects.get(slug=SLUG).version},
        follow=True,
    )
    assert refused_chain(published) == [(reverse("authoring:question", args=[SLUG]), 302)]
    assert f'data-line="{line}">Line {line}</a>:' in published.content.decode()
    assert Draft.objects.get(slug=SLUG).text == text


NOT_FINITE = {
    "weight .nan": ("weight: 1", "weight: .nan"),
    "peak_qps .inf": ("peak_qps: 10", "peak_qps: .inf"),
    "minutes .nan": ("minutes: 45", "minutes: .NaN"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", NOT_FINITE, ids=list(NOT_FINITE))
def test_a_number_that_is_not_finite_is_refused_not_stored(instructor_client, instructor, case):
    old, new = NOT_FINITE[case]
    text = _template(**{old: new})
    draft = services.question_new(slug=SLUG, user=instructor)
    line = _line_of(text, new)

    preview = instructor_client.post(
        reverse("authoring:question_preview", args=[SLUG]), {"text": text}
    ).content.decode()
    assert f'data-line="{line}"' in preview and "finite number" in preview

    published = instructor_client.post(
        reverse("authoring:question_publish", args=[SLUG]),
        {"text": text, "base_version": draft.version},
        follow=True,
    )
    assert refused_chain(published) == [(reverse("authoring:question", args=[SLUG]), 302)]
    assert f'data-line="{line}">Line {line}</a>:' in published.content.decode()
    tried = instructor_client.post(reverse("authoring:question_try", args=[SLUG]), follow=True)
    assert refused_chain(tried) == [(reverse("authoring:question", args=[SLUG]), 302)]
    assert "finite number" in tried.content.decode()
    assert not QuestionRevision.objects.filter(question__slug=SLUG).exists()


# Longer than the columns that store them (PostgreSQL enforces a column's length; SQLite
# does not): each passed every check, then publishing or trying it was a 500 there.
TOO_LONG = {"title": "title: " + "Long " * 41, "summary": "summary: " + "Long " * 101}


@pytest.mark.django_db
@pytest.mark.parametrize("key", TOO_LONG)
def test_a_title_or_summary_longer_than_the_site_stores_is_a_problem(
    instructor_client, instructor, key
):
    text = _template(**{f"{key}: ": TOO_LONG[key]})
    draft = services.question_new(slug=SLUG, user=instructor)
    line = _line_of(text, TOO_LONG[key])

    published = instructor_client.post(
        reverse("authoring:question_publish", args=[SLUG]),
        {"text": text, "base_version": draft.version},
        follow=True,
    )
    assert refused_chain(published) == [(reverse("authoring:question", args=[SLUG]), 302)]
    assert f"Line {line}</a>: &#x27;{key}&#x27; is" in published.content.decode()
    tried = instructor_client.post(reverse("authoring:question_try", args=[SLUG]))
    assert refused_to(tried["Location"]) == reverse("authoring:question", args=[SLUG])
    assert not QuestionRevision.objects.filter(question__slug=SLUG).exists()


@pytest.mark.django_db
def test_a_concept_note_with_an_unreadable_value_is_a_problem(instructor_client, instructor):
    services.draft_new(kind=Draft.Kind.CONCEPT, slug="odd-note", user=instructor)
    text = "---\nslug: odd-note\ntitle: 2024-13-01\nsummary: s.\n---\nBody.\n"
    preview = instructor_client.post(
        reverse("authoring:concept_preview", args=["odd-note"]), {"text": text}
    )
    assert preview.status_code == 200
    assert 'data-line="3"' in preview.content.decode()


@pytest.mark.django_db
def test_a_file_saved_with_a_byte_order_mark_publishes_with_no_change_left(
    instructor_client, instructor
):
    # Windows editors often start a UTF-8 file with a byte order mark; it is not text.
    draft = services.question_new(slug=SLUG, user=instructor)
    text = _template(**{"title: ": "title: Saved on Windows, "})
    upload = SimpleUploadedFile(f"{SLUG}.md", b"\xef\xbb\xbf" + text.encode())
    response = instructor_client.post(
        reverse("authoring:question_upload", args=[SLUG]),
        {"file": upload, "base_version": draft.version},
    )
    assert response.status_code == 302
    assert Draft.objects.get(slug=SLUG).text == text
    revision, created = services.question_publish(slug=SLUG, text=Draft.objects.get(slug=SLUG).text)
    assert created and revision.source_text == text
    (row,) = [r for r in selectors.question_rows() if r.slug == SLUG]
    assert not row.has_draft  # nothing left unpublished


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["question_save", "question_publish"])
def test_a_stale_tabs_refusal_links_to_the_newer_draft(instructor_client, instructor, action):
    """The refused page's address is the form's (…/save/, …/publish/): reloading it would
    send the stale text again, so the refusal links to the editor, which loads the newer
    draft."""
    services.question_new(slug=SLUG, user=instructor)
    save = reverse("authoring:question_save", args=[SLUG])
    instructor_client.post(save, {"text": "tab A", "base_version": "0"}, HTTP_HX_REQUEST="true")
    page = instructor_client.post(
        reverse(f"authoring:{action}", args=[SLUG]), {"text": "tab B", "base_version": "0"}
    )
    assert page.status_code == 409
    editor = reverse("authoring:question", args=[SLUG])
    assert f'<a href="{editor}" id="load-newer">' in page.content.decode()


def _blocked_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the interleaving is held by PostgreSQL's row locks"
)
@pytest.mark.django_db(transaction=True)
def test_two_instructors_creating_one_new_question_at_once_is_a_refusal(instructor_client):
    """Both find the slug free; the second's insert waits on the first's, still committing,
    and its unique constraint then refused it: a 500 instead of "There is already ..."."""
    colleague = User.objects.create_user("colette")
    created, done = threading.Event(), threading.Event()

    def colleague_creates() -> None:
        try:
            with transaction.atomic():
                services.question_new(slug=SLUG, user=colleague)
                created.set()
                while not done.is_set() and not _blocked_on_a_lock():  # until ours blocks theirs
                    done.wait(0.01)
        finally:
            created.set()
            connection.close()

    thread = threading.Thread(target=colleague_creates)
    thread.start()
    created.wait()
    try:
        response = instructor_client.post(
            reverse("authoring:create"), {"kind": "question", "slug": SLUG}
        )
    finally:
        done.set()
        thread.join()
    assert response.status_code == 422
    assert f"There is already a question &#x27;{SLUG}&#x27;" in response.content.decode()
    assert Draft.objects.get(slug=SLUG).updated_by == colleague
