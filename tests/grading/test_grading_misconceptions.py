"""Misconceptions against the offline grader.

Each question file states every misconception it ships in a candidate's own words (answer
tests with `flags`, run by test_content: the idea is flagged and no point it contradicts is a
hit). Here, over those answers in the whole bank: a flagged idea quotes the candidate's own
sentence. And, in misconception_answers.yaml (written before the recognisers were tuned), a
confidently wrong answer of five or more wrong ideas scores at most 0.25 on every free-text
step of the seed questions; no reference states a misconception; and a sentence that rejects
a wrong idea is not taken for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grading import grade
from questionbank import load_question_spec
from questionbank.files import CONTENT_DIR
from tests.conftest import CORE_SLUGS

from .conftest import read_front_matter, read_yaml

ANSWERS = read_yaml(
    (Path(__file__).resolve().parent / "misconception_answers.yaml").read_text(encoding="utf-8")
)
BANK_SLUGS = sorted(p.stem for p in (CONTENT_DIR / "questions").glob("*.md"))
FREE_TEXT_STEPS = ("clarify", "architecture", "bottlenecks", "tradeoffs")
WRONG_ANSWER_CEILING = 0.25


def stated_answers() -> list[tuple[str, str, str, str]]:
    """(slug, step, misconception id, answer) of every answer test in the bank flagging one."""
    out = []
    for slug in BANK_SLUGS:
        tests = read_front_matter(CONTENT_DIR / "questions" / f"{slug}.md")["tests"]
        for step, entries in tests.items():
            out += [
                (slug, step, e["flags"][0], e["answer"])
                for e in entries
                if len(e.get("flags") or ()) == 1
            ]
    return out


STATED = stated_answers()


def flagged(result) -> set[str]:
    return {m.id for m in result.misconceptions}


@pytest.mark.parametrize("slug", CORE_SLUGS)
def test_every_free_text_step_of_a_seed_question_ships_at_least_four_misconceptions(slug):
    spec = load_question_spec(slug)
    for key in FREE_TEXT_STEPS:
        assert len(spec.step(key).misconceptions) >= 4, (slug, key)


def test_the_bank_states_its_misconceptions_in_answer_tests():
    """The stated answers below are the bank's own (test_content requires one per idea)."""
    assert {s[0] for s in STATED} >= set(CORE_SLUGS)
    assert len(STATED) >= 49


@pytest.mark.parametrize(
    ("slug", "step_key", "miscon_id", "answer"), STATED, ids=[f"{s[0]}-{s[2]}" for s in STATED]
)
def test_a_flagged_idea_quotes_the_candidates_own_sentence(slug, step_key, miscon_id, answer):
    result = grade(load_question_spec(slug).step(step_key), answer, mode="rubric")
    found = {m.id: m for m in result.misconceptions}
    assert miscon_id in found, (answer, set(found))
    assert found[miscon_id].evidence and found[miscon_id].evidence in " ".join(answer.split())


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
    assert {(w[0], w[1]) for w in WRONG} == {(s, k) for s in CORE_SLUGS for k in FREE_TEXT_STEPS}


@pytest.mark.parametrize("slug", BANK_SLUGS)
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
        # The idea's own correction, in the words of its explanation.
        (
            "rl-rollout-generation",
            "bottlenecks",
            "More GPUs shorten the bulk, not the longest sample.",
            "rl-b-more-gpus-fix-tail",
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
