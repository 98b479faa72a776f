"""The app as interviewer against the real vLLM server: the follow-up aims at the point the
rule predicts from the model grader's own verdicts, and the model's wording is used only
when it is one short question (the tiny random model rarely manages that)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.vllm

SEEDED_ARCHITECTURE = (
    "An API gateway handles auth and rate limits. Behind it a prefix-aware router sends each "
    "request to the replica that already holds its prompt. We autoscale on queue depth, "
    "vllm:num_requests_waiting, rather than on GPU utilisation."
)


def test_the_targeted_follow_up_is_the_one_the_rule_predicts(
    use_vllm_grader, vllm_report, content_loaded
):
    from grading.probe import probe_text, weakest_point
    from mocks import services as mock
    from mocks.log import Kind
    from practice import services as flow
    from practice.models import Grade
    from questions.models import Question

    user = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=user, revision=revision, mode="app")
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    outcome = flow.step_submit(answer=answer, text=SEEDED_ARCHITECTURE, fields={}, base_version=0)
    flow.submission_grade(submission_id=outcome.submission.pk)
    model_grade = Grade.objects.get(submission=outcome.submission, grader="llm")

    # The rule, worked out here by hand from the model's verdicts: the heaviest miss, else
    # the heaviest partial (the first of equal weights, in rubric order).
    rubric = revision.question_spec.step("architecture").rubric
    verdicts = {p["id"]: p["verdict"] for p in model_grade.points}

    def heaviest(verdict):
        found = [p for p in rubric if verdicts.get(p.id) == verdict]
        return max(found, key=lambda p: p.weight) if found else None

    expected = heaviest("miss") or heaviest("partial")
    assert expected == weakest_point(rubric, model_grade.points)
    mock.session_tick(session)
    asked = list(session.events.filter(kind=Kind.FOLLOW_UP_ASKED))
    if expected is None:  # the model hit every point: nothing to probe
        assert asked == []
        return
    assert len(asked) == 1
    payload = asked[0].payload
    assert payload["point"] == expected.id
    assert payload["follow_up_id"] == f"mock:probe-{expected.id}"
    if not payload["reworded"]:
        assert payload["prompt"] == probe_text(expected)
    else:
        assert payload["prompt"].endswith("?") and len(payload["prompt"]) <= 400
    vllm_report.append(
        f"mock probe: aimed at {expected.id}, reworded={payload['reworded']}: "
        f"{payload['prompt'][:80]!r}"
    )
