"""What review says to people reads right: an instructor's word reaches the candidate with
their verdict, a dispute's reason is quoted without a stray period, counts agree in number."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from practice.errors import FlowError
from practice.feedback import feedback_context
from review.services import REVIEW_COMMENT_MAX_CHARS, review_store

from .conftest import make_submission
from .test_review_flow import ALL_MISS, ANSWER

NOTE = "The queue-depth signal is right; say which metric the autoscaler reads."


def test_an_instructors_note_reaches_the_candidate_with_the_verdict(
    content_loaded, candidate, instructor
):
    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, comment=NOTE)
    answer = submission.answer
    context = feedback_context(attempt=answer.attempt, answer=answer, submission=submission)
    assert context["reviewed_by_instructor"] and context["review_comment"] == NOTE


def test_a_verdict_without_a_note_shows_none(content_loaded, candidate, instructor):
    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    answer = submission.answer
    context = feedback_context(attempt=answer.attempt, answer=answer, submission=submission)
    assert context["reviewed_by_instructor"] and context["review_comment"] == ""


def test_a_note_too_long_is_refused_and_nothing_stored(content_loaded, candidate, instructor):
    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    with pytest.raises(FlowError, match=str(REVIEW_COMMENT_MAX_CHARS)):
        review_store(
            submission=submission,
            reviewer=instructor,
            labels=ALL_MISS,
            comment="x" * (REVIEW_COMMENT_MAX_CHARS + 1),
        )
    assert not submission.grades.filter(grader="instructor").exists()


def test_a_dispute_reason_ending_in_a_period_is_quoted_without_another(
    content_loaded, client, candidate
):
    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    client.force_login(candidate)
    client.post(
        reverse("review:dispute", args=[submission.pk]),
        {"reason": "My answer names the gateway point."},
    )
    attempt = submission.answer.attempt
    page = client.get(f"/attempts/{attempt.pk}/steps/architecture/").content.decode()
    assert "You disputed this grade" in page
    assert "point.”" in page and "point.”." not in page


def test_exporting_one_labelled_answer_says_one_answer(content_loaded, tmp_path):
    from questions.models import Question
    from review.calibration_sets import labels_import, shipped_labels

    question = Question.objects.get(slug="chat-api-50qps")
    labels_import(question=question, entries=shipped_labels(question=question)[:1])
    err = io.StringIO()
    call_command(
        "export_labels", question=question.slug, output=str(tmp_path / "l.jsonl"), stderr=err
    )
    assert "wrote 1 labelled answer to" in err.getvalue()
