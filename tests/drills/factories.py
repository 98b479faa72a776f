"""Small factories: real rows for a candidate's graded submissions."""

from __future__ import annotations

from datetime import datetime, timedelta

from practice.models import Attempt, Grade, StepAnswer, Submission
from practice.services import attempt_finish
from questions.models import Question


def revision_of(slug: str = "chat-api-50qps"):
    return Question.objects.get(slug=slug).current_revision


def graded_submission(
    *,
    user,
    at: datetime,
    step: str = "architecture",
    grades: dict[str, float],
    attempt: Attempt | None = None,
    slug: str = "chat-api-50qps",
    points: list[dict] | None = None,
) -> Submission:
    """A submission of `step` made at `at`, with one Grade per {grader: score}."""
    attempt = attempt or Attempt.objects.create(user=user, revision=revision_of(slug))
    answer, _ = StepAnswer.objects.get_or_create(attempt=attempt, step_key=step)
    number = answer.submissions.count() + 1
    submission = Submission.objects.create(
        answer=answer, number=number, text="an answer", draft_version=number
    )
    Submission.objects.filter(pk=submission.pk).update(submitted_at=at)
    for grader, score in grades.items():
        Grade.objects.create(submission=submission, grader=grader, score=score,
                             points=points or [])  # fmt: skip
    Grade.objects.filter(submission=submission).update(created_at=at)
    submission.refresh_from_db()
    return submission


def given_html(client, instructor, candidate) -> str:
    """The "Assigned so far" list of the instructor's page of `candidate`."""
    client.force_login(instructor)
    html = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    return html.split('data-testid="given"')[1].split("</ul>")[0]


def finish_attempt(candidate, slug: str, at: datetime) -> Attempt:
    """An attempt at `slug` opened from the bank (not an assignment's button), its clarify
    step graded, finished a minute after `at`."""
    attempt = Attempt.objects.create(user=candidate, revision=revision_of(slug))
    graded_submission(
        user=candidate, attempt=attempt, at=at, step="clarify", grades={"llm": 0.5}, slug=slug
    )
    attempt_finish(attempt_id=attempt.pk, now=at + timedelta(minutes=1))
    return attempt


def fix_drills_clock(monkeypatch, now: datetime) -> None:
    """The drills' one clock (services.clock, as selectors reads it too) fixed at `now`."""
    from drills import selectors, services

    monkeypatch.setattr(services, "clock", lambda: now)
    monkeypatch.setattr(selectors, "clock", lambda: now)
