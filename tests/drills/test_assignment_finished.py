"""A question assignment the candidate finished says so on the instructor's page for the
candidate, with the finished attempt's overall score as its scorecard computes it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from accounts.instructors import instructor_grant
from drills import selectors, services
from practice.models import Attempt
from practice.scorecard import scorecard
from practice.services import attempt_finish
from tests.drills.factories import graded_submission, revision_of

SLUG = "long-context-rag"


@pytest.fixture
def instructor(db):
    user = User.objects.create_user("teacher", password="a-long-Passphrase-42")
    instructor_grant(user)
    return user


@pytest.fixture
def candidate(content_loaded):
    return User.objects.create_user("learner", password="a-long-Passphrase-42")


def given_html(client, instructor, candidate) -> str:
    client.force_login(instructor)
    html = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    return html.split('data-testid="given"')[1].split("</ul>")[0]


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
