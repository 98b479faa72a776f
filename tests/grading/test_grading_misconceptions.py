"""Misconceptions against the offline grader.

The answers are in misconception_answers.yaml, written before the recognisers were tuned:
each shipped misconception stated in a candidate's own words must be flagged, with none of the
points it contradicts a hit; a confidently wrong answer of five or more wrong ideas scores at
most 0.25 on every free-text step; the references state no misconception; and a sentence that
rejects a wrong idea is not taken for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grading import grade
from questionbank import load_question_spec

ANSWERS = yaml.safe_load(
    (Path(__file__).resolve().parent / "misconception_answers.yaml").read_text(encoding="utf-8")
)
SHIPPED_SLUGS = ("chat-api-50qps", "multi-tenant-lora", "long-context-rag")
FREE_TEXT_STEPS = ("clarify", "architecture", "bottlenecks", "tradeoffs")
WRONG_ANSWER_CEILING = 0.25

STATED = [
    (slug, step, miscon_id, answer)
    for slug, steps in ANSWERS["stated"].items()
    for step, by_id in steps.items()
    for miscon_id, answer in by_id.items()
]


def flagged(result) -> set[str]:
    return {m.id for m in result.misconceptions}


@pytest.mark.parametrize("slug", SHIPPED_SLUGS)
def test_every_free_text_step_ships_at_least_four_misconceptions_each_with_a_stated_answer(slug):
    spec = load_question_spec(slug)
    for key in FREE_TEXT_STEPS:
        shipped = {m.id for m in spec.step(key).misconceptions}
        assert len(shipped) >= 4, (slug, key, shipped)
        assert shipped == set(ANSWERS["stated"][slug][key]), (slug, key)


@pytest.mark.parametrize(
    ("slug", "step_key", "miscon_id", "answer"), STATED, ids=[s[2] for s in STATED]
)
def test_a_misconception_stated_in_other_words_is_flagged_and_its_point_not_hit(
    slug, step_key, miscon_id, answer
):
    step = load_question_spec(slug).step(step_key)
    result = grade(step, answer, mode="rubric")
    assert miscon_id in flagged(result), (answer, flagged(result))
    found = next(m for m in result.misconceptions if m.id == miscon_id)
    assert found.evidence and found.evidence in " ".join(answer.split())
    contradicted = next(m for m in step.misconceptions if m.id == miscon_id).contradicts
    verdicts = {p.id: p.verdict for p in result.points}
    assert all(verdicts[point] != "hit" for point in contradicted), verdicts


WRONG = [
    (slug, step, answer)
    for slug, steps in ANSWERS["wrong"].items()
    for step, answer in steps.items()
]


@pytest.mark.parametrize(
    ("slug", "step_key", "answer"), WRONG, ids=[f"{w[0]}-{w[1]}" for w in WRONG]
)
def test_a_confidently_wrong_answer_scores_at_most_a_quarter(slug, step_key, answer):
    result = grade(load_question_spec(slug).step(step_key), answer, mode="rubric")
    assert result.score <= WRONG_ANSWER_CEILING, (result.score, result.points)
    # Four of its five wrong ideas are the step's shipped ones; the fifth is free-form.
    assert len(flagged(result)) >= 4, flagged(result)


def test_every_wrong_answer_set_covers_each_question_and_step():
    assert {(w[0], w[1]) for w in WRONG} == {(s, k) for s in SHIPPED_SLUGS for k in FREE_TEXT_STEPS}


@pytest.mark.parametrize("slug", SHIPPED_SLUGS)
def test_the_reference_answers_state_no_misconception(slug):
    spec = load_question_spec(slug)
    for step in spec.steps:
        result = grade(step, step.reference, mode="rubric")
        assert not result.misconceptions, (step.key, result.misconceptions)


@pytest.mark.parametrize(
    ("slug", "step_key", "answer", "miscon_id"),
    [
        (
            "chat-api-50qps",
            "architecture",
            "We would NOT autoscale on GPU utilisation; the signal is the queue of waiting "
            "requests.",
            "a1-autoscale-gpu-util",
        ),
        (
            "chat-api-50qps",
            "architecture",
            "The autoscaler adds replicas when the waiting queue grows rather than when GPU "
            "utilisation is high.",
            "a1-autoscale-gpu-util",
        ),
        (
            "chat-api-50qps",
            "tradeoffs",
            "AWQ is not lossless, so we run evals on real traffic before switching.",
            "t1-awq-lossless",
        ),
        (
            "chat-api-50qps",
            "bottlenecks",
            "We never push a new image to every replica at once; one replica goes first.",
            "b1-all-at-once",
        ),
        (
            "chat-api-50qps",
            "architecture",
            "GPU utilisation is a misleading autoscaling signal, because it saturates early.",
            "a1-autoscale-gpu-util",
        ),
        (
            "chat-api-50qps",
            "architecture",
            "We scale out on queue depth, while GPU utilisation stays near 100% and says little.",
            "a1-autoscale-gpu-util",
        ),
        (
            "chat-api-50qps",
            "tradeoffs",
            "Ten replicas beat one big tensor-parallel instance while the model fits one card.",
            "t1-tp-always-better",
        ),
        (
            "multi-tenant-lora",
            "architecture",
            "The gateway derives the adapter from the API key, ignoring whatever model name "
            "the client sends.",
            "a2-client-adapter-id",
        ),
        (
            "long-context-rag",
            "tradeoffs",
            "FP8 KV is not lossless, so long-context evals must check it.",
            "t3-fp8-lossless",
        ),
        # A counterfactual weighs the idea: "if we did X, we would ...".
        (
            "chat-api-50qps",
            "architecture",
            "If we autoscaled on GPU utilisation, we would scale too late, so the autoscaler "
            "watches the waiting queue.",
            "a1-autoscale-gpu-util",
        ),
        (
            "chat-api-50qps",
            "tradeoffs",
            "If AWQ were lossless we could skip evals, but it is not, so we run them.",
            "t1-awq-lossless",
        ),
        # Others' practice, answered by a "but".
        (
            "chat-api-50qps",
            "architecture",
            "Many teams autoscale on GPU utilisation, but that signal saturates early; we use "
            "the queue depth.",
            "a1-autoscale-gpu-util",
        ),
        (
            "chat-api-50qps",
            "architecture",
            "It is tempting to autoscale on GPU utilisation, yet it reads 100% at a small batch.",
            "a1-autoscale-gpu-util",
        ),
    ],
)
def test_a_sentence_rejecting_the_wrong_idea_is_not_flagged(slug, step_key, answer, miscon_id):
    result = grade(load_question_spec(slug).step(step_key), answer, mode="rubric")
    assert miscon_id not in flagged(result)


HELD_OUT = ANSWERS["held_out"]


@pytest.mark.parametrize("case", HELD_OUT, ids=[h["id"] for h in HELD_OUT])
def test_the_issues_held_out_wrong_answers_are_flagged_and_lose_the_contradicted_points(case):
    step = load_question_spec(case["question"]).step(case["step"])
    result = grade(step, case["answer"], mode="rubric")
    assert result.misconceptions, result.points
    verdicts = {p.id: p.verdict for p in result.points}
    by_id = {m.id: m for m in step.misconceptions}
    for found in result.misconceptions:
        assert all(verdicts[p] != "hit" for p in by_id[found.id].contradicts), verdicts


@pytest.mark.parametrize(
    "answer",
    [
        # A condition without "would" is the design itself.
        "If GPU utilisation passes 90%, we add a replica.",
        "When GPU utilisation is high the autoscaler adds a replica.",
        # A "but" that does not report someone else's practice leaves the idea standing.
        "We autoscale on GPU utilisation, but cap the fleet at twelve replicas.",
        "Most of the time we autoscale on GPU utilisation.",
    ],
)
def test_a_conditional_or_qualified_statement_of_the_idea_is_still_flagged(answer):
    step = load_question_spec("chat-api-50qps").step("architecture")
    assert "a1-autoscale-gpu-util" in flagged(grade(step, answer, mode="rubric"))
