"""A published revision is made the draft from its page, as an upload would make a file the
draft: a new draft version, refused over unpublished edits unless the box is ticked, the
draft then unchanged; instructors only, and only by a POST."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from authoring import services
from authoring.models import Draft
from questions.models import Question

CHAT = "chat-api-50qps"
CHAT_FILE = Path(settings.CONTENT_DIR) / "questions" / f"{CHAT}.md"
SECOND = "\nA line the second revision adds."
UNPUBLISHED_LINE = "\nAn edit typed since the last publish."


@pytest.fixture
def two_revisions(content_loaded):
    """The shipped question as revision 1, then an edit of it published as revision 2."""
    first = CHAT_FILE.read_text(encoding="utf-8")
    revision, created = services.question_publish(slug=CHAT, text=first + SECOND)
    assert created and revision.number == 2
    return first


def _restore_url(number: int) -> str:
    return reverse("authoring:revision_restore", args=[CHAT, number])


def _restore(client, number: int, version: int, **extra):
    return client.post(_restore_url(number), {"base_version": str(version), **extra}, follow=True)


def _save(client, text: str, version: int) -> Draft:
    client.post(
        reverse("authoring:question_save", args=[CHAT]),
        {"text": text, "base_version": str(version)},
        HTTP_HX_REQUEST="true",
    )
    return Draft.objects.get(slug=CHAT)


def _words(response) -> str:
    return " ".join(html.unescape(response.content.decode()).split())


@pytest.mark.django_db
def test_a_revision_becomes_the_draft_when_nothing_is_unpublished(two_revisions, instructor_client):
    page = _words(instructor_client.get(reverse("authoring:revision", args=[CHAT, 1])))
    assert "Make this revision the draft" in page
    assert 'id="restore-replace"' not in page  # nothing unpublished: nothing to ask
    response = _restore(instructor_client, 1, 0)
    assert response.redirect_chain[-1][0] == reverse("authoring:question", args=[CHAT])
    assert "Revision 1 is now the draft (version 1); publish it to make it current." in _words(
        response
    )
    draft = Draft.objects.get(slug=CHAT)
    assert draft.text == two_revisions and draft.version == 1
    assert draft.base_revision == 2  # publishing it replaces revision 2, as it means to
    # The current revision is still 2 until the draft is published.
    assert Question.objects.get(slug=CHAT).current_revision.number == 2


@pytest.mark.django_db
def test_a_restore_over_unpublished_edits_is_refused_and_the_draft_kept(
    two_revisions, instructor_client
):
    edited = two_revisions + SECOND + UNPUBLISHED_LINE
    _save(instructor_client, edited, 0)
    page = _words(instructor_client.get(reverse("authoring:revision", args=[CHAT, 1])))
    assert "Replace my unpublished draft" in page  # the box is offered
    response = _restore(instructor_client, 1, 1)
    assert response.status_code == 422
    page = _words(response)
    assert "Not restored: this draft holds edits that are not published" in page
    assert "and the revision would replace them" in page
    assert '"Replace my unpublished draft"' in page and "This draft is unchanged." in page
    draft = Draft.objects.get(slug=CHAT)
    assert draft.text == edited and draft.version == 1


@pytest.mark.django_db
def test_a_restore_with_the_box_ticked_replaces_unpublished_edits(two_revisions, instructor_client):
    _save(instructor_client, two_revisions + SECOND + UNPUBLISHED_LINE, 0)
    response = _restore(instructor_client, 1, 1, replace_draft="yes")
    assert "Revision 1 is now the draft (version 2)" in _words(response)
    draft = Draft.objects.get(slug=CHAT)
    assert draft.text == two_revisions and draft.version == 2


@pytest.mark.django_db
def test_a_restore_from_a_stale_page_is_refused_and_the_draft_kept(
    two_revisions, instructor_client
):
    # The page loaded with no draft saved (version 0); another tab saved since.
    _save(instructor_client, two_revisions + SECOND + " Another tab's edit.", 0)
    response = _restore(instructor_client, 1, 0, replace_draft="yes")
    assert response.status_code == 409
    assert "the revision was not made the draft over it" in _words(response)
    draft = Draft.objects.get(slug=CHAT)
    assert draft.text.endswith(" Another tab's edit.") and draft.version == 1


@pytest.mark.django_db
def test_only_an_instructor_may_restore(two_revisions, client, candidate_client, instructor_client):
    assert candidate_client.post(_restore_url(1), {"base_version": "0"}).status_code == 404
    assert candidate_client.get(reverse("authoring:revision", args=[CHAT, 1])).status_code == 404
    signed_out = client.post(_restore_url(1), {"base_version": "0"})
    assert signed_out.status_code == 302 and "next=" in signed_out["Location"]
    # A number that is no published revision is none to restore.
    assert instructor_client.post(_restore_url(9), {"base_version": "0"}).status_code == 404
    assert not Draft.objects.exists()


@pytest.mark.django_db
def test_a_get_writes_nothing(two_revisions, instructor_client):
    assert instructor_client.get(_restore_url(1)).status_code == 405
    assert instructor_client.get(reverse("authoring:revision", args=[CHAT, 1])).status_code == 200
    assert not Draft.objects.exists()
