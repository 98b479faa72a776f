"""What review says to people reads right: an instructor's word reaches the candidate with
their verdict, a dispute's reason is quoted without a stray period, counts agree in number."""

from __future__ import annotations

import io
import re

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


def test_an_instructors_note_cannot_reorder_the_candidates_page(
    content_loaded, candidate, instructor, client
):
    """The note's direction controls were obeyed: text after a U+202E showed reversed."""
    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    note = "Good start \u202eelbat a ti ekam\u202c then the router."
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, comment=note)
    answer = submission.answer
    client.force_login(candidate)
    page = client.get(f"/attempts/{answer.attempt_id}/steps/{answer.step_key}/").content.decode()
    shown = page.split("The instructor's note:</strong> ")[1].split("</p>")[0]
    assert shown == "<bdi>Good start [U+202E]elbat a ti ekam[U+202C] then the router.</bdi>"


def test_a_verdict_without_a_note_shows_none(content_loaded, candidate, instructor):
    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    answer = submission.answer
    context = feedback_context(attempt=answer.attempt, answer=answer, submission=submission)
    assert context["reviewed_by_instructor"] and context["review_comment"] == ""


def test_a_note_too_long_is_refused_and_nothing_stored(content_loaded, candidate, instructor):
    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    with pytest.raises(FlowError, match=f"the limit is {REVIEW_COMMENT_MAX_CHARS:,}"):
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


def _page_text(response) -> str:
    from html import unescape

    return " ".join(re.sub(r"<[^>]+>", " ", unescape(response.content.decode())).split())


def test_a_second_instructor_reads_whose_verdicts_they_are(content_loaded, client, instructor):
    """Two instructors open the blind form; the first saves, the second is refused. From then on
    the second reads the first one's verdicts: the page must not call them theirs, and the
    instructor's column names who labelled it."""
    from django.contrib.auth.models import User

    from accounts.instructors import instructor_grant

    candidate = User.objects.create_user("reviewee")
    other = User.objects.create_user("second-teacher")
    instructor_grant(other)
    submission = make_submission(
        user=candidate, text=ANSWER, review_reason="a gap", grades={"llm": (0.1, ALL_MISS)}
    )
    url = reverse("review:submission", args=[submission.pk])
    client.force_login(instructor)
    first = {f"point-{k}": v for k, v in {**ALL_MISS, "arch-gateway": "hit"}.items()}
    client.post(url, first, follow=True)
    client.force_login(other)
    refused = _page_text(
        client.post(url, {f"point-{k}": v for k, v in ALL_MISS.items()}, follow=True)
    )
    assert "Not saved: teacher saved a review" in refused
    later = _page_text(client.get(url))
    for text in (refused, later):
        assert "Your verdicts beside" not in text and "Your verdict is now" not in text, text
        assert "teacher's verdicts beside the others" in text
        assert "teacher's verdict is now the candidate's grade" in text
        assert "Instructor: teacher" in text
    client.force_login(instructor)
    own = _page_text(client.get(url))
    assert "Your verdicts beside the others" in own and "teacher's verdict" not in own
    assert "Instructor: teacher" in own


def test_a_refused_stale_review_repeats_the_verdicts_as_the_form_showed_them(
    content_loaded, candidate, instructor
):
    """The repeated verdicts name each point by its text (cut short), never by an id the form
    does not show, joined without a stray full stop."""
    from review.services import ReviewedMeanwhile

    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    labels = {**ALL_MISS, "arch-gateway": "hit", "arch-replicas": "partial"}
    with pytest.raises(ReviewedMeanwhile) as refused:
        review_store(submission=submission, reviewer=instructor, labels=labels, blind=True)
    message = str(refused.value)
    assert "arch-" not in message, message
    assert ".;" not in message and ".”" not in message, message
    says = _rubric_says(submission)
    gateway, replicas = says["arch-gateway"], says["arch-replicas"]
    assert f"“{gateway[:20]}" in message and f"“{replicas[:20]}" in message
    named = re.findall(r"“([^”]*)”: (hit|partial|miss)", message)
    # In the rubric's order, as the form lists them; a long point is cut short.
    assert [v for _, v in named] == [labels[p] for p in says], message
    assert all(len(name) <= 61 for name, _ in named), named
    assert message.endswith("miss."), message


def test_a_missing_verdict_is_named_without_a_stray_full_stop(
    content_loaded, candidate, instructor
):
    submission = make_submission(user=candidate, text=ANSWER, grades={"rubric": (0.1, ALL_MISS)})
    labels = {k: v for k, v in ALL_MISS.items() if k not in ("arch-gateway", "arch-replicas")}
    with pytest.raises(FlowError) as refused:
        review_store(submission=submission, reviewer=instructor, labels=labels)
    message = str(refused.value)
    assert "2 missing: “" in message and ".;" not in message and ".”" not in message, message
    assert message.endswith("”."), message


def _rubric_says(submission) -> dict[str, str]:
    from practice.services import step_spec

    answer = submission.answer
    spec = step_spec(answer.attempt.revision, answer.step_key, answer.follow_up_id)
    return {p.id: p.says for p in spec.rubric}


def test_loading_the_shipped_set_says_which_count_is_the_steps(content_loaded, client, instructor):
    """The set spans the question's steps while the page counts one: the banner's total
    read as a mismatch with the page's count below it unless it says which is which."""
    from review.models import CalibrationLabel

    client.force_login(instructor)
    load = reverse("review:calibration_load", args=["chat-api-50qps"])
    text = _page_text(client.post(load, {"step": "architecture"}, follow=True))
    total = CalibrationLabel.objects.count()
    here = CalibrationLabel.objects.filter(step_key="architecture").count()
    steps = CalibrationLabel.objects.values("step_key").distinct().count()
    assert 0 < here < total, (here, total)
    assert f"{total} new answers and 0 updated, across its {steps} steps" in text, text
    assert f"Architecture now has {here} labelled answers, {here} of them new." in text, text
    assert f"{here} labelled answers for this step" in text
