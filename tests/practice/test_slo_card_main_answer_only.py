"""A step's own check belongs to its main answer: the SLO card on clarify, the napkin boxes on
estimate. A follow-up asked on the step (a feature's own question, practice.extensions) has no
card and no boxes, yet it was checked as empty ones: a 0.0 grade blended into its score."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice import extensions
from practice import services as flow
from practice.extensions import AttemptExtension
from practice.models import Attempt, Grade
from questionbank import FollowUp
from questions.models import Question

pytestmark = pytest.mark.django_db

SLUG = "chat-api-50qps"


class AskedLive(AttemptExtension):
    """A feature whose follow-ups ("live:N") are graded against the step's rubric."""

    def owns_follow_up(self, follow_up_id: str) -> bool:
        return follow_up_id.startswith("live:")

    def follow_up_spec(self, revision, step_key, follow_up_id):
        step = revision.question_spec.step(step_key)
        return FollowUp(id=follow_up_id, prompt="", reference=step.reference, rubric=step.rubric)


@pytest.fixture
def attempt(content_loaded, monkeypatch):
    monkeypatch.setattr(extensions, "_registered", [*extensions.registered(), AskedLive()])
    user = User.objects.create_user("asked", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug=SLUG).current_revision
    return Attempt.objects.create(user=user, revision=revision)


def _graded(attempt, follow_up_id: str, text: str, fields: dict, step_key: str = "clarify"):
    answer = flow.answer_open(attempt=attempt, step_key=step_key, follow_up_id=follow_up_id)
    outcome = flow.step_submit(answer=answer, text=text, fields=fields, base_version=0)
    return flow.submission_grade(submission_id=outcome.submission.pk)


def test_a_follow_up_on_clarify_gets_no_slo_card_grade(attempt):
    reply = _graded(attempt, "live:1", "Most clients send max_tokens=4096; we cap at 2048.", {})
    assert not Grade.objects.filter(submission=reply, grader="slo").exists()
    assert Grade.objects.filter(submission=reply, grader="rubric").exists()


def test_the_main_answer_on_clarify_still_gets_its_card_checked(attempt):
    card = {"model": "Qwen2.5-7B-Instruct", "peak_qps": "50", "ttft_p99_ms": "300"}
    main = _graded(attempt, "", "Peak 50 QPS, p99 TTFT 300 ms.", card)
    assert Grade.objects.get(submission=main, grader="slo").slo_review["pinned"]


def test_a_follow_up_on_estimate_gets_no_napkin_check_grade(attempt):
    reply = _graded(attempt, "live:2", "I would measure TPOT at batch 8.", {}, step_key="estimate")
    assert not Grade.objects.filter(submission=reply, grader="checker").exists()
    assert Grade.objects.filter(submission=reply, grader="rubric").exists()
    main = _graded(attempt, "", "W = 15.2 GB.", {}, step_key="estimate")
    assert Grade.objects.filter(submission=main, grader="checker").exists()
