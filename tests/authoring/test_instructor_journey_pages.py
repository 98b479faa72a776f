"""What a new instructor reads on the authoring pages before they have saved anything."""

from __future__ import annotations

import pytest
from django.urls import reverse


@pytest.mark.django_db
def test_a_new_draft_does_not_claim_to_have_been_saved(instructor_client):
    """Created from the template, nothing is saved yet: the header said "Draft version 0,
    last saved by ines" while the status under the text said "No draft saved yet"."""
    response = instructor_client.post(
        reverse("authoring:create"), {"kind": "question", "slug": "fresh-one"}
    )
    assert response.status_code == 302
    page = instructor_client.get(reverse("authoring:question", args=["fresh-one"]))
    body = page.content.decode()
    assert "No draft saved yet" in body
    assert "last saved by" not in body
    assert "Draft version 0" not in body


@pytest.mark.django_db
def test_the_new_question_form_is_reachable_from_the_top_of_the_list(instructor_client):
    """The form to start a question sits under every question and concept note; the page's
    head links to it so a new instructor does not have to scroll past the whole bank."""
    body = instructor_client.get(reverse("authoring:index")).content.decode()
    head = body[: body.index('id="questions-h"')]
    assert 'href="#new-h"' in head
    assert 'id="new-h"' in body


@pytest.mark.django_db
def test_a_failing_answer_test_says_how_to_fix_it(instructor_client):
    """ "expected kv-cache: hit, got kv-cache: miss" alone leaves a new instructor guessing
    whether to change the answer, the phrases or the expectation."""
    from authoring import services

    instructor_client.post(reverse("authoring:create"), {"kind": "question", "slug": "miss-it"})
    text = services.QUESTION_TEMPLATE.read_text(encoding="utf-8").replace(
        services.TEMPLATE_SLUG_LINE, "slug: miss-it", 1
    )
    old = "answer: The KV cache fills up first, then requests wait in the queue."
    assert old in text
    text = text.replace(old, "answer: Memory for attention state runs out first.", 1)
    body = instructor_client.post(
        reverse("authoring:question_preview", args=["miss-it"]), {"text": text}
    ).content.decode()
    assert "expected kv-cache: hit, got kv-cache: miss" in body
    assert "recognise" in body and "offline:" in body
