"""Fixtures for the review tests: graded submissions made directly, without the grading task."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice.models import Attempt, Grade, StepAnswer, Submission
from questions.models import Question

SLUG = "chat-api-50qps"


def make_submission(
    *,
    user: User,
    step_key: str = "architecture",
    text: str = "An answer.",
    grades: dict[str, tuple[float, dict[str, str]]] | None = None,
    review_reason: str = "",
    is_preview: bool = False,
    attempt: Attempt | None = None,
    extra_grades: dict[str, dict] | None = None,
) -> Submission:
    """A graded submission of one step: `grades` maps a grader to (score, {point: verdict})."""
    if attempt is None:
        revision = Question.objects.get(slug=SLUG).current_revision
        attempt = Attempt.objects.create(user=user, revision=revision, is_preview=is_preview)
    answer, _ = StepAnswer.objects.get_or_create(
        attempt=attempt, step_key=step_key, defaults={"text": text, "version": 1}
    )
    submission = Submission.objects.create(
        answer=answer,
        number=answer.submissions.count() + 1,
        text=text,
        draft_version=answer.submissions.count() + 1,
        grade_status=Submission.GradeStatus.DONE,
        review_reason=review_reason,
    )
    for grader, (score, verdicts) in (grades or {}).items():
        Grade.objects.create(
            submission=submission,
            grader=grader,
            score=score,
            model="test-model" if grader == "llm" else "",
            points=[
                {"id": pid, "verdict": v, "evidence": "", "comment": ""}
                for pid, v in verdicts.items()
            ],
        )
    for grader, fields in (extra_grades or {}).items():
        Grade.objects.create(submission=submission, grader=grader, **fields)
    return submission


@pytest.fixture
def candidate(db):
    return User.objects.create_user("candidate", password="a-long-Passphrase-42")


@pytest.fixture
def instructor(db):
    from accounts.instructors import instructor_grant

    user = User.objects.create_user("teacher", password="a-long-Passphrase-42")
    instructor_grant(user)
    return user
