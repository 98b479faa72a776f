"""Seams an instructor's first walk through authoring and review tripped on: a dispute sent
from a preview attempt (which never reaches the queue), item statistics of a point added in
a later revision, and the way from the editor to a question's review pages and back."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.urls import reverse

from authoring.services import question_publish
from practice.models import Attempt
from practice.step_page import feedback_context
from questions.models import Question
from review.item_stats import question_item_stats
from review.models import GradeDispute
from review.services import review_queue

from .conftest import SLUG, make_submission


def test_a_preview_attempt_offers_no_dispute_and_refuses_one(content_loaded, client, instructor):
    """The queue leaves preview attempts out, so a dispute sent from one would be confirmed
    ("an instructor will review this grade") and then never seen by anyone."""
    submission = make_submission(
        user=instructor, is_preview=True, grades={"llm": (0.0, {"arch-gateway": "miss"})}
    )
    context = feedback_context(
        attempt=submission.answer.attempt, answer=submission.answer, submission=submission
    )
    notices = [f for f in context["feedback_fragments"] if f.template.startswith("review/")]
    assert all(not n.context["can_dispute"] for n in notices)

    client.force_login(instructor)
    response = client.post(
        reverse("review:dispute", args=[submission.pk]),
        {"reason": "My answer names the gateway in its first sentence."},
    )
    assert response.status_code == 422
    page = response.content.decode()
    assert "preview" in page
    assert "My answer names the gateway in its first sentence." in page  # the text comes back
    assert not GradeDispute.objects.exists()
    assert review_queue(question=Question.objects.get(slug=SLUG)) == []


def test_item_statistics_count_a_point_only_over_answers_whose_revision_has_it(
    content_loaded, candidate
):
    """A point added in revision 2 was never asked of answers made on revision 1: they are not
    misses of it (which would flag the new point 'too hard' at 0%)."""
    question = Question.objects.get(slug=SLUG)
    old = question.current_revision
    # Two candidates on revision 1, both hit the gateway point.
    for name in ("c1", "c2"):
        make_submission(
            user=User.objects.create_user(name),
            grades={"self": (1.0, {"arch-gateway": "hit", "arch-replicas": "hit"})},
        )
    text = old.source_text.replace(
        "    rubric:\n      - id: arch-gateway",
        "    rubric:\n"
        "      - id: arch-new-point\n"
        "        says: A brand new point, added after the first cohort answered.\n"
        "        weight: 1\n"
        "        recognise:\n"
        "          all:\n"
        "            - [brand new point]\n"
        "      - id: arch-gateway",
        1,
    )
    assert text != old.source_text
    question_publish(slug=SLUG, text=text)
    question.refresh_from_db()
    assert question.current_revision.number == old.number + 1
    # One candidate on revision 2 hits the new point.
    attempt = Attempt.objects.create(
        user=User.objects.create_user("c3"), revision=question.current_revision
    )
    make_submission(
        user=attempt.user,
        attempt=attempt,
        grades={"self": (1.0, {"arch-new-point": "hit", "arch-gateway": "hit"})},
    )
    stats = question_item_stats(question=question)
    step = next(s for s in stats["steps"] if s["key"] == "architecture")
    points = {p.id: p for p in step["points"]}
    new = points["arch-new-point"]
    assert new.n == 1 and new.hit_rate == 1.0, new
    assert "too hard" not in new.flag
    assert points["arch-gateway"].n == 3 and points["arch-gateway"].hit_rate == 1.0


def test_the_editor_and_a_questions_review_pages_link_each_other(
    content_loaded, client, instructor
):
    """An instructor who edits a question reaches its queue, calibration and item statistics
    from the editor, and gets back to the editor from each of them."""
    client.force_login(instructor)
    editor = reverse("authoring:question", args=[SLUG])
    review_pages = [
        reverse("review:queue", args=[SLUG]),
        reverse("review:calibration", args=[SLUG]),
        reverse("review:items", args=[SLUG]),
    ]
    page = client.get(editor).content.decode()
    for url in review_pages:
        assert f'href="{url}"' in page, url
    for url in review_pages:
        body = client.get(url, follow=True).content.decode()
        assert f'href="{editor}"' in body, url
