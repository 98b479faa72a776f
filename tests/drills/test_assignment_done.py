"""An assignment is done by the work it asks for, however the candidate started it: a
finished attempt of the assigned question opened from the bank, or a set of the assigned
kind started from /drills/ with every drill answered, both after the assignment was made.
The instructor's pages then say how it went and the candidate's pages stop offering it."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from drills import selectors, services
from drills.models import DrillItem
from tests.drills.factories import finish_attempt, given_html

SLUG = "long-context-rag"
KIND = "kv_per_token"


def finish_set(candidate, kind: str, at):
    """A set of `kind` started from /drills/ (not the assignment's button), every drill
    answered, four of them right."""
    drill_set = services.drill_set_start(user=candidate, kind=kind, now=at)
    DrillItem.objects.filter(drill_set=drill_set).update(verdict="correct", answered_at=at)
    DrillItem.objects.filter(drill_set=drill_set, position=5).update(verdict="wrong")
    return drill_set


def test_a_question_finished_from_the_bank_completes_its_assignment(instructor, candidate, client):
    now = timezone.now()
    services.assignment_create(
        instructor=instructor, candidate=candidate, question_slug=SLUG, now=now
    )
    finish_attempt(candidate, SLUG, now + timedelta(hours=1))

    assert "Finished" in given_html(client, instructor, candidate)
    assert "50% overall" in given_html(client, instructor, candidate)
    assert selectors.assignments_open(user=candidate) == []
    client.force_login(candidate)
    assert 'data-testid="assignments"' not in client.get("/").content.decode()
    summary = selectors.candidate_summaries().object_list[0]
    assert summary.user == candidate and summary.open_assignments == 0


def test_a_question_finished_before_it_was_assigned_leaves_it_open(instructor, candidate, client):
    now = timezone.now()
    finish_attempt(candidate, SLUG, now - timedelta(hours=2))
    services.assignment_create(
        instructor=instructor, candidate=candidate, question_slug=SLUG, now=now
    )
    assert "Not started" in given_html(client, instructor, candidate)
    assert len(selectors.assignments_open(user=candidate)) == 1


def test_a_set_of_the_kind_started_from_drills_completes_a_drill_assignment(
    instructor, candidate, client
):
    now = timezone.now()
    services.assignment_create(instructor=instructor, candidate=candidate, kind=KIND, now=now)
    half = services.drill_set_start(user=candidate, kind=KIND, now=now + timedelta(minutes=5))
    DrillItem.objects.filter(drill_set=half, position__lte=2).update(verdict="correct")
    # A set half answered is not the work done.
    assert "Not started" in given_html(client, instructor, candidate)
    assert len(selectors.assignments_open(user=candidate)) == 1

    finish_set(candidate, KIND, now + timedelta(hours=1))
    assert "5 of 5 answered, 4 right" in given_html(client, instructor, candidate)
    assert selectors.assignments_open(user=candidate) == []


def test_work_done_another_way_lets_the_instructor_assign_it_again(instructor, candidate):
    now = timezone.now()
    services.assignment_create(
        instructor=instructor, candidate=candidate, question_slug=SLUG, now=now
    )
    finish_attempt(candidate, SLUG, now + timedelta(hours=1))
    again = services.assignment_create(
        instructor=instructor, candidate=candidate, question_slug=SLUG, now=now + timedelta(hours=3)
    )
    assert [v.assignment for v in selectors.assignments_open(user=candidate)] == [again]


def test_done_assignments_are_read_in_the_same_queries_for_many_as_for_one(
    instructor, candidate, client
):
    now = timezone.now()

    def queries() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as home:
            selectors.assignments_open(user=candidate)
        with CaptureQueriesContext(connection) as listing:
            selectors.candidate_summaries()
        return len(home), len(listing)

    services.assignment_create(instructor=instructor, candidate=candidate, kind=KIND, now=now)
    services.assignment_create(
        instructor=instructor, candidate=candidate, question_slug=SLUG, now=now
    )
    one = queries()
    for slug in ("chat-api-50qps", "multi-tenant-lora"):
        services.assignment_create(
            instructor=instructor, candidate=candidate, question_slug=slug, now=now
        )
        finish_attempt(candidate, slug, now + timedelta(hours=1))
    services.assignment_create(instructor=instructor, candidate=candidate, kind="ttft", now=now)
    finish_set(candidate, "ttft", now + timedelta(hours=1))
    many = queries()
    assert many <= one, f"{one} queries for two open assignments, {many} for five"


def test_the_recommendation_does_not_offer_the_question_already_assigned(
    instructor, candidate, client
):
    first = selectors.recommendation(user=candidate)
    assert first.action == "Open the question"
    slug = first.url.strip("/").split("/")[-1]
    services.assignment_create(instructor=instructor, candidate=candidate, question_slug=slug)
    after = selectors.recommendation(user=candidate)
    assert after.url != first.url
    client.force_login(candidate)
    home = client.get("/").content.decode()
    offered = home.split('data-testid="recommendation"')[1].split("Due today")[0]
    assert f'href="{first.url}"' not in offered and f'href="{after.url}"' in offered
