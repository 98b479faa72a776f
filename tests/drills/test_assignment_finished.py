"""A question assignment the candidate finished says so on the instructor's page for the
candidate, with the finished attempt's overall score as its scorecard computes it."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from drills import selectors, services
from practice.models import Attempt
from practice.scorecard import scorecard
from practice.services import attempt_finish
from tests.drills.factories import given_html, graded_submission, revision_of

SLUG = "long-context-rag"


def test_a_finished_question_assignment_says_finished_with_the_scorecards_overall(
    instructor, candidate, client
):
    assignment = services.assignment_create(
        instructor=instructor, candidate=candidate, question_slug=SLUG
    )
    services.assignment_start(assignment=assignment)
    attempt = Attempt.objects.create(user=candidate, revision=revision_of(SLUG))
    now = timezone.now()
    for step, score in (("clarify", 0.9), ("architecture", 0.4)):
        graded_submission(
            user=candidate, attempt=attempt, at=now, step=step, grades={"llm": score}, slug=SLUG
        )
    assert "Started" in given_html(client, instructor, candidate)  # not finished yet

    attempt_finish(attempt_id=attempt.pk, now=now + timedelta(minutes=1))
    overall = scorecard(attempt)["overall"]
    assert overall == 0.65
    when = timezone.localtime(now + timedelta(minutes=1))
    given = given_html(client, instructor, candidate)
    assert f"Finished {when:%b} {when.day}: 65% overall" in given
    assert "Started" not in given


def test_an_attempt_finished_before_the_assignment_was_started_does_not_finish_it(
    instructor, candidate
):
    earlier = Attempt.objects.create(user=candidate, revision=revision_of(SLUG))
    attempt_finish(attempt_id=earlier.pk, now=timezone.now() - timedelta(days=2))
    assignment = services.assignment_create(
        instructor=instructor, candidate=candidate, question_slug=SLUG
    )
    services.assignment_start(assignment=assignment)
    [status] = selectors.assignments_given(candidate=candidate)
    assert status.status.startswith("Started")


def test_a_finished_attempt_with_no_score_yet_says_so(instructor, candidate):
    assignment = services.assignment_create(
        instructor=instructor, candidate=candidate, question_slug=SLUG
    )
    services.assignment_start(assignment=assignment)
    attempt = Attempt.objects.create(user=candidate, revision=revision_of(SLUG))
    attempt_finish(attempt_id=attempt.pk)
    [status] = selectors.assignments_given(candidate=candidate)
    assert status.status.startswith("Finished") and status.status.endswith("not scored yet")


def test_the_given_list_costs_the_same_queries_for_many_finished_questions_as_for_one(
    instructor, candidate, client
):
    """Each finished attempt's overall score is read for the whole list at once, not three
    queries per finished assignment."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def finish_one(slug: str, at) -> None:
        assignment = services.assignment_create(
            instructor=instructor, candidate=candidate, question_slug=slug
        )
        services.assignment_start(assignment=assignment, now=at)
        attempt = Attempt.objects.create(user=candidate, revision=revision_of(slug))
        graded_submission(
            user=candidate, attempt=attempt, at=at, step="clarify", grades={"llm": 0.5}, slug=slug
        )
        attempt_finish(attempt_id=attempt.pk, now=at + timedelta(minutes=1))

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            given_html(client, instructor, candidate)
        return len(captured)

    now = timezone.now()
    finish_one(SLUG, now - timedelta(hours=3))
    one = queries()
    for i, slug in enumerate(("chat-api-50qps", "multi-tenant-lora")):
        finish_one(slug, now - timedelta(hours=2 - i))
    many = queries()
    assert many <= one, f"{one} queries for 1 finished question, {many} for 3"
    assert given_html(client, instructor, candidate).count("50% overall") == 3
