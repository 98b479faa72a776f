"""An architecture answer only the keyword matcher read, and the self-check form's posts: what
the self-check tests build on."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.urls import reverse

from practice.models import Attempt, Grade, StepAnswer, Submission
from questionbank import load_question_spec
from questions.models import Question

SLUG = "chat-api-50qps"
ARCH = load_question_spec(SLUG).step("architecture")
WEIGHTS = {p.id: p.weight for p in ARCH.rubric}
# A matcher score no page may show as a grade: "37%" appears nowhere else on these pages.
MATCHER_SCORE = 0.37
GPU_UTIL = "The autoscaler adds a replica whenever average GPU utilization goes above 80 percent."


def expected_score(credit: dict[str, float]) -> float:
    """The weighted share of credit, worked out here from the rubric's weights."""
    return round(sum(WEIGHTS[p] * c for p, c in credit.items()) / sum(WEIGHTS.values()), 4)


def offline_submission(user: User, *, misconceptions: list[dict] | None = None) -> Submission:
    """An architecture answer that only the keyword matcher read (no model configured)."""
    revision = Question.objects.get(slug=SLUG).current_revision
    attempt = Attempt.objects.create(user=user, revision=revision)
    answer = StepAnswer.objects.create(
        attempt=attempt, step_key="architecture", text="A gateway. " + GPU_UTIL, version=1
    )
    submission = Submission.objects.create(
        answer=answer,
        number=1,
        text=answer.text,
        draft_version=1,
        grade_status=Submission.GradeStatus.DONE,
    )
    Grade.objects.create(
        submission=submission,
        grader="rubric",
        score=MATCHER_SCORE,
        points=[
            {"id": "arch-gateway", "verdict": "hit", "evidence": "A gateway.", "comment": ""},
            *(
                {"id": p, "verdict": "miss", "evidence": "", "comment": ""}
                for p in WEIGHTS
                if p != "arch-gateway"
            ),
        ],
        misconceptions=misconceptions or [],
    )
    return submission


def all_rated(rating: str = "covered", **overrides: str) -> dict[str, str]:
    return {p: overrides.get(p.replace("-", "_"), rating) for p in WEIGHTS}


def post_ratings(client, submission: Submission, data: dict, **kwargs):
    url = reverse(
        "submission_self_check",
        kwargs={"attempt_id": submission.answer.attempt_id, "submission_id": submission.pk},
    )
    return client.post(url, data, **kwargs)


def form(ratings: dict[str, str], version: int) -> dict[str, str]:
    return {"base_version": str(version), **{f"rating-{p}": r for p, r in ratings.items()}}
