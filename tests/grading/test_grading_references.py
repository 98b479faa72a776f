"""The shipped questions against the offline grader: references high, junk low.

Runs over every step and every tradeoffs follow-up of content/questions/*.md. A failure names
the question, the step and the rubric points the reference missed, which is a content issue
(its `recognise` phrases) as often as a grader one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grading import grade
from questionbank import FollowUp, QuestionSpec, StepSpec, load_question_spec
from tests.conftest import CORE_SLUGS

CONTENT = Path(__file__).resolve().parents[2] / "content" / "questions"
SHIPPED_SLUGS = tuple(sorted(p.stem for p in CONTENT.glob("*.md")))
OFF_TOPIC = (
    "My favourite pasta is carbonara; the trick is to take the pan off the heat before the "
    "eggs go in, so they turn silky instead of scrambling."
)


def gradable_parts(spec: QuestionSpec) -> list[tuple[str, StepSpec | FollowUp]]:
    parts: list[tuple[str, StepSpec | FollowUp]] = []
    for step in spec.steps:
        parts.append((step.key, step))
        for follow_up in step.follow_ups:
            parts.append((f"{step.key}/{follow_up.id}", follow_up))
    return parts


def test_the_seed_questions_are_still_shipped_and_the_bank_holds_at_least_fifteen():
    assert set(CORE_SLUGS) <= set(SHIPPED_SLUGS)
    assert len(SHIPPED_SLUGS) >= 15


@pytest.mark.parametrize("slug", SHIPPED_SLUGS)
def test_reference_answers_score_at_least_eight_tenths(slug):
    low = {}
    for name, step in gradable_parts(load_question_spec(slug)):
        result = grade(step, step.reference, mode="rubric")
        if result.score < 0.8:
            low[name] = (result.score, [p.id for p in result.points if p.verdict != "hit"])
    assert not low, f"{slug}: references below 0.8 (score, points not hit): {low}"


@pytest.mark.parametrize("slug", SHIPPED_SLUGS)
@pytest.mark.parametrize("answer", ["", OFF_TOPIC], ids=["empty", "off-topic"])
def test_empty_and_off_topic_answers_score_at_most_a_tenth(slug, answer):
    high = {}
    for name, step in gradable_parts(load_question_spec(slug)):
        score = grade(step, answer, mode="rubric").score
        if score > 0.1:
            high[name] = score
    assert not high, f"{slug}: junk scored above 0.1: {high}"


@pytest.mark.parametrize("slug", SHIPPED_SLUGS)
def test_a_reference_turned_into_a_bare_list_earns_little(slug):
    # The rubric's own words with nothing said about them: "X, Y, Z, ...".
    for name, step in gradable_parts(load_question_spec(slug)):
        terms = [group[0] for p in step.rubric for group in p.all_groups]
        score = grade(step, "Covers: " + ", ".join(terms) + ".", mode="rubric").score
        assert score <= 0.1, (name, score)
