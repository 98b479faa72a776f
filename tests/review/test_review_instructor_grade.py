"""What an instructor's grade carries and how a request for it reads: the keyword matcher's
wrong ideas are not stated as the instructor's (it is advisory, and the candidate answered
them in their self-check), and a dispute of the candidate's own self-check reads, in the
queue and on the review page, as a request for an instructor's grade."""

from __future__ import annotations

from html import unescape

from django.urls import reverse

from practice.feedback import feedback_context
from practice.models import Grade, SelfCheck
from practice.self_check import self_check_save
from questions.models import Question
from review.services import grade_dispute, review_queue, review_store, wrong_idea_remove

from .conftest import make_submission
from .test_review_flow import ALL_MISS, ANSWER

WRONG = [{"id": "a1-autoscale-gpu-util", "evidence": "We autoscale on GPU utilisation."}]
REASON = "My answer names the queue-depth signal in its second sentence."


def self_checked(candidate, *, decision: str = SelfCheck.Decision.DISMISSED):
    """An answer the matcher flagged a wrong idea in, self-checked by the candidate (who
    answered the flag with `decision`), and sent for an instructor's grade."""
    submission = make_submission(
        user=candidate,
        text="We autoscale on GPU utilisation.",
        grades={"rubric": (0.0, ALL_MISS)},
    )
    submission.grades.filter(grader="rubric").update(misconceptions=WRONG)
    self_check_save(
        submission=submission,
        ratings={point: SelfCheck.Rating.NOT for point in ALL_MISS},
        wrong_ideas={WRONG[0]["id"]: decision},
        base_version=0,
    )
    assert submission.grades.filter(grader="self").exists()
    grade_dispute(user=candidate, submission=submission, reason=REASON)
    return submission


def test_the_instructors_grade_carries_no_wrong_idea_the_candidate_dismissed(
    content_loaded, candidate, instructor
):
    submission = self_checked(candidate)
    grade = review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    assert grade.misconceptions == []
    answer = submission.answer
    context = feedback_context(attempt=answer.attempt, answer=answer, submission=submission)
    assert context["reviewed_by_instructor"] and context["misconceptions"] == []


def test_the_self_check_summary_under_a_review_says_each_wrong_idea_in_one_sentence(
    content_loaded, candidate, instructor, client
):
    # It read "Possible wrong idea, <a sentence ending in a period>.: you did not mean it".
    submission = self_checked(candidate)
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    client.force_login(candidate)
    page = client.get(
        reverse("attempt_step", args=[submission.answer.attempt_id, "architecture"])
    ).content.decode()
    summary = page.split('class="plain-list self-check-points"')[1].split("</ul>")[0]
    assert "<li>You did not mean this possible wrong idea: " in summary
    assert ".:" not in summary


def test_a_confirmed_wrong_idea_the_instructor_removed_is_told_so_in_the_self_check_summary(
    content_loaded, candidate, instructor, client
):
    """The summary of the self-check under the review keeps what the candidate said, and
    with an idea the instructor removed from the grade, that the review found the answer
    does not hold it: the page never leaves "You meant this wrong idea" standing alone."""
    submission = self_checked(candidate, decision=SelfCheck.Decision.CONFIRMED)
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    step_url = reverse("attempt_step", args=[submission.answer.attempt_id, "architecture"])
    client.force_login(candidate)

    def summary() -> str:
        page = client.get(step_url).content.decode()
        return unescape(page.split('class="plain-list self-check-points"')[1].split("</ul>")[0])

    assert "does not hold it" not in summary()
    wrong_idea_remove(submission=submission, remover=instructor, idea_id=WRONG[0]["id"])
    said = summary()
    assert "You meant this possible wrong idea: " in said
    assert "The instructor's review found that your answer does not hold it." in said


def test_a_wrong_idea_the_candidate_confirmed_stays_unless_the_instructor_credits_the_point(
    content_loaded, candidate, instructor
):
    # The candidate stands behind a flag they confirmed: it stays, as the model's would,
    # unless the instructor credits the point it contradicts in full.
    submission = self_checked(candidate, decision=SelfCheck.Decision.CONFIRMED)
    grade = review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    assert [m["id"] for m in grade.misconceptions] == [WRONG[0]["id"]]
    credited = {**ALL_MISS, "arch-autoscale-queue": "hit"}
    grade = review_store(submission=submission, reviewer=instructor, labels=credited)
    assert grade.misconceptions == []


def test_the_model_graders_wrong_ideas_stay_unless_the_instructor_credits_the_point(
    content_loaded, candidate, instructor
):
    submission = make_submission(
        user=candidate,
        text="We autoscale on GPU utilisation.",
        grades={"llm": (0.0, ALL_MISS), "rubric": (0.0, ALL_MISS)},
    )
    submission.grades.filter(grader="llm").update(misconceptions=WRONG)
    grade = review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    assert grade.misconceptions == WRONG
    credited = {**ALL_MISS, "arch-autoscale-queue": "hit"}
    grade = review_store(submission=submission, reviewer=instructor, labels=credited)
    assert grade.misconceptions == []


def test_a_request_to_grade_a_self_check_reads_as_one_in_the_queue_and_on_the_page(
    content_loaded, client, candidate, instructor
):
    submission = self_checked(candidate)
    [entry] = review_queue(question=Question.objects.get(slug="chat-api-50qps"))
    assert "the candidate asks for an instructor's grade" in entry.reasons
    assert "disputed by the candidate" not in entry.reasons
    client.force_login(instructor)
    queue = unescape(client.get(reverse("review:queue", args=["chat-api-50qps"])).content.decode())
    assert "the candidate asks for an instructor's grade" in queue
    assert "disputed by the candidate" not in queue
    url = reverse("review:submission", args=[submission.pk])
    page = unescape(client.get(url).content.decode())
    assert "The candidate asks for an instructor's grade" in page
    assert "disputed this grade" not in page
    # Still so once a model grade arrives over the self-check (the model was down when the
    # candidate asked), and once the instructor's grade is stored over both.
    Grade.objects.create(submission=submission, grader="llm", score=0.1, points=[])
    [entry] = review_queue(question=Question.objects.get(slug="chat-api-50qps"))
    assert "the candidate asks for an instructor's grade" in entry.reasons
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    page = unescape(client.get(url).content.decode())
    assert "The candidate asks for an instructor's grade" in page


def test_a_dispute_of_the_model_graders_grade_still_reads_as_a_dispute(
    content_loaded, client, candidate, instructor
):
    submission = make_submission(
        user=candidate, text=ANSWER, grades={"llm": (0.1, ALL_MISS), "rubric": (0.1, ALL_MISS)}
    )
    grade_dispute(user=candidate, submission=submission, reason=REASON)
    [entry] = review_queue(question=Question.objects.get(slug="chat-api-50qps"))
    assert entry.reasons == ["disputed by the candidate"]
    client.force_login(instructor)
    page = client.get(reverse("review:submission", args=[submission.pk])).content.decode()
    assert "The candidate disputed this grade" in page


def test_the_review_page_shows_the_wrong_ideas_the_grade_keeps(
    content_loaded, client, candidate, instructor
):
    # The label form never asks about wrong ideas: once saved, the page says which ones the
    # grade shows the candidate, with the quote and the points each contradicts.
    submission = self_checked(candidate, decision=SelfCheck.Decision.CONFIRMED)
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    client.force_login(instructor)
    page = unescape(client.get(reverse("review:submission", args=[submission.pk])).content.decode())
    kept = page.split('class="kept-wrong-ideas"')[1].split("</ul>")[0]
    assert "We autoscale on GPU utilisation." in kept and "Contradicts: " in kept
    dismissed = self_checked(candidate)
    review_store(submission=dismissed, reviewer=instructor, labels=ALL_MISS)
    page = client.get(reverse("review:submission", args=[dismissed.pk])).content.decode()
    assert "kept-wrong-ideas" not in page
