"""The `misconceptions:` key of a question file: validated with file:line, read into the spec,
and its explanations rendered (and sanitised) once, with the rest of the question."""

from __future__ import annotations

from pathlib import Path

import pytest

from questionbank import load_question_spec
from questionbank.files import parse_file, question_spec, validate_question
from questionbank.rendering import render_question

CONTENT = Path(__file__).resolve().parents[2] / "content"
CONCEPTS = {p.stem for p in (CONTENT / "concepts").glob("*.md")}
PATH = CONTENT / "questions" / "chat-api-50qps.md"
FIRST = "    misconceptions:\n      - id: c1-size-for-mean\n"


def problems_after(old: str, new: str) -> list[str]:
    text = PATH.read_text(encoding="utf-8")
    assert old in text, old
    cf = parse_file(PATH, text.replace(old, new, 1))
    return [str(p) for p in validate_question(cf, concept_slugs=CONCEPTS)]


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_the_shipped_misconceptions_are_valid_and_read_into_the_spec():
    assert problems_after(FIRST, FIRST) == []
    step = load_question_spec("chat-api-50qps").step("architecture")
    wrong = {m.id: m for m in step.misconceptions}["a1-autoscale-gpu-util"]
    assert wrong.contradicts == ("arch-autoscale-queue",)
    assert wrong.all_groups[0][0] == "autoscal"
    assert "num_requests_waiting" in wrong.explanation


def test_contradicting_a_point_of_another_step_is_reported_at_its_line():
    old = "        contradicts: [clarify-peak-qps]\n"
    found = problems_after(old, "        contradicts: [arch-prefix-router]\n")
    line = line_of(PATH.read_text(encoding="utf-8"), old)
    assert found == [
        f"{PATH}:{line}: 'arch-prefix-router' is not a rubric point of this step (its points: "
        "clarify-cost, clarify-length-mix, clarify-model-hardware, clarify-peak-qps, "
        "clarify-shared-prompt, clarify-slo-percentiles)"
    ]


def test_an_id_used_twice_in_the_question_is_reported():
    found = problems_after("      - id: c1-mean-latency\n", "      - id: c1-size-for-mean\n")
    assert "duplicate id 'c1-size-for-mean' (first used on line" in found[0]
    # ...and the answer test stating the renamed idea now names a misconception that is gone.
    assert len(found) == 2 and "no misconception 'c1-mean-latency' in 'clarify'" in found[1]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "        concepts: [fleet-sizing, slo-goodput]\n        recognise:\n",
            "        concepts: [fleet-sizin, slo-goodput]\n        recognise:\n",
            "broken concept link 'fleet-sizin'",
        ),
        (
            "      - id: c1-size-for-mean\n",
            "      - id: c1-size-for-mean\n        hint: typo\n",
            "unknown key 'hint' in misconception",
        ),
        (
            "        contradicts: [clarify-peak-qps]\n",
            "        contradicts: []\n",
            "contradicts must be a non-empty list",
        ),
        (
            "            - [provision, size, sizing, plan, design for, build for, capacity, fleet, "
            "enough]\n",
            "            - provision\n",
            "recognise.all must be a list of non-empty phrase lists",
        ),
    ],
    ids=["concept", "unknown-key", "empty-contradicts", "bad-recognise"],
)
def test_a_broken_misconception_is_reported(old, new, message):
    found = problems_after(old, new)
    assert any(message in p and p.startswith(f"{PATH}:") for p in found), found


def test_a_misconception_without_an_explanation_is_reported():
    text = PATH.read_text(encoding="utf-8")
    start = text.index("        explanation: |\n          A queue only absorbs")
    end = text.index("        concepts: [fleet-sizing, slo-goodput]\n        recognise:", start)
    cf = parse_file(PATH, text[:start] + text[end:])
    found = [str(p) for p in validate_question(cf, concept_slugs=CONCEPTS)]
    assert any("misconception is missing 'explanation'" in p for p in found), found


def test_explanations_are_rendered_and_sanitised_with_the_question():
    text = PATH.read_text(encoding="utf-8").replace(
        "          A queue only absorbs a burst",
        "          <script>alert(1)</script> A queue only absorbs a **burst**",
        1,
    )
    rendered = render_question(question_spec(parse_file(PATH, text)))
    html = rendered["steps"]["clarify"]["misconceptions"]["c1-size-for-mean"]
    assert "<script" not in html and "<strong>burst</strong>" in html
    assert "<math" in html  # the $...$ of the explanation, as MathML
