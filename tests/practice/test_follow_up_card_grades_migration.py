"""The migration that takes back the SLO-card and napkin-box grades given to follow-up answers
(checked as an empty card or worksheet, each a 0 blended into the answer's score) and leaves
the main answers' grades."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import User

from practice.models import Attempt, Grade, StepAnswer, Submission
from practice.scoring import submission_score
from questions.models import Question

pytestmark = pytest.mark.django_db

migration = importlib.import_module("practice.migrations.0014_follow_up_card_grades")


def _submission(attempt: Attempt, step_key: str, follow_up_id: str = "") -> Submission:
    answer = StepAnswer.objects.create(
        attempt=attempt, step_key=step_key, follow_up_id=follow_up_id, text="An answer.", version=1
    )
    return Submission.objects.create(
        answer=answer,
        number=1,
        text=answer.text,
        draft_version=1,
        grade_status=Submission.GradeStatus.DONE,
    )


def test_follow_up_answers_lose_their_card_grades_and_main_answers_keep_theirs(content_loaded):
    user = User.objects.create_user("candidate", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = Attempt.objects.create(user=user, revision=revision)
    main_clarify = _submission(attempt, "clarify")
    follow_up_clarify = _submission(attempt, "clarify", "fu-1")
    main_estimate = _submission(attempt, "estimate")
    follow_up_estimate = _submission(attempt, "estimate", "fu-2")
    for submission, card in (
        (main_clarify, "slo"),
        (follow_up_clarify, "slo"),
        (main_estimate, "checker"),
        (follow_up_estimate, "checker"),
    ):
        Grade.objects.create(submission=submission, grader="llm", score=0.8, points=[])
        Grade.objects.create(submission=submission, grader=card, score=0.0, points=[])
    before = submission_score("clarify", follow_up_clarify.grades.all())

    migration.follow_up_card_grades_go(apps, None)

    assert set(follow_up_clarify.grades.values_list("grader", flat=True)) == {"llm"}
    assert set(follow_up_estimate.grades.values_list("grader", flat=True)) == {"llm"}
    assert set(main_clarify.grades.values_list("grader", flat=True)) == {"llm", "slo"}
    assert set(main_estimate.grades.values_list("grader", flat=True)) == {"llm", "checker"}
    # The follow-up's score is now the model's alone, no longer pulled down by the empty card.
    assert before < submission_score("clarify", follow_up_clarify.grades.all()) == 0.8
