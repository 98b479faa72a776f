"""A strong answer that names a wrong idea only to reject it is not flagged.

The sentences are in rejecting_answers.yaml, written before the recogniser was tuned against
them. Each is appended to its step's reference answer: the misconception it discusses must
not be flagged, no point of the reference that it contradicts may drop from hit, and the
score must stay at or above 0.8. The `fresh_wrong` and `across_a_consequence` sets hold wrong
ideas in new wordings that must still be flagged.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from grading import grade
from questionbank import load_question_spec

from .conftest import read_yaml

ANSWERS = read_yaml(
    (Path(__file__).resolve().parent / "rejecting_answers.yaml").read_text(encoding="utf-8")
)
STRONG_FLOOR = 0.8
REJECTING = [(part, *case) for part in ("audit", "own") for case in ANSWERS[part]]
FRESH_WRONG = ANSWERS["fresh_wrong"] + ANSWERS["across_a_consequence"]


@cache
def reference_verdicts(slug: str, step_key: str) -> dict[str, str]:
    step = load_question_spec(slug).step(step_key)
    return {p.id: p.verdict for p in grade(step, step.reference, mode="rubric").points}


def test_the_audit_set_holds_all_28_sentences_and_ours_at_least_ten():
    assert len(ANSWERS["audit"]) == 28
    assert len(ANSWERS["own"]) >= 10


@pytest.mark.parametrize(
    ("part", "slug", "step_key", "miscon_id", "sentence"),
    REJECTING,
    ids=[f"{r[0]}-{r[3]}-{i}" for i, r in enumerate(REJECTING)],
)
def test_a_reference_with_a_rejected_wrong_idea_appended_is_not_flagged(
    part, slug, step_key, miscon_id, sentence
):
    step = load_question_spec(slug).step(step_key)
    shipped = {m.id: m for m in step.misconceptions}
    assert miscon_id in shipped, (slug, step_key, miscon_id)
    result = grade(step, f"{step.reference}\n\n{sentence}", mode="rubric")
    assert miscon_id not in {m.id for m in result.misconceptions}, result.misconceptions
    before = reference_verdicts(slug, step_key)
    after = {p.id: p.verdict for p in result.points}
    for point in shipped[miscon_id].contradicts:
        if before[point] == "hit":
            assert after[point] == "hit", (point, after[point])
    assert result.score >= STRONG_FLOOR, result.score


@pytest.mark.parametrize(
    ("slug", "step_key", "miscon_id", "sentence"),
    FRESH_WRONG,
    ids=[f"{f[2]}-{i}" for i, f in enumerate(FRESH_WRONG)],
)
def test_a_wrong_idea_in_fresh_wording_is_flagged(slug, step_key, miscon_id, sentence):
    step = load_question_spec(slug).step(step_key)
    result = grade(step, sentence, mode="rubric")
    assert miscon_id in {m.id for m in result.misconceptions}, result.misconceptions
    contradicted = next(m for m in step.misconceptions if m.id == miscon_id).contradicts
    verdicts = {p.id: p.verdict for p in result.points}
    assert all(verdicts[p] != "hit" for p in contradicted), verdicts
