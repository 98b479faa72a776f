"""The question file's diagram keys: `reference_diagram`, a rubric point's `diagram` rule,
`diagram: true` on a step and `diagram` in an answer test, each checked at its line."""

from __future__ import annotations

import pytest

from questionbank.files import CONTENT_DIR, parse_file, question_spec, validate_question

CHAT = CONTENT_DIR / "questions" / "chat-api-50qps.md"


def problems_of(text: str) -> list[str]:
    cf = parse_file(CHAT, text)
    return [str(p) for p in validate_question(cf, concept_slugs=None)]


def edited(old: str, new: str) -> str:
    text = CHAT.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    return text.replace(old, new)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_the_shipped_files_carry_their_diagram_keys_into_the_spec():
    cf = parse_file(CHAT)
    assert validate_question(cf, concept_slugs=None) == []
    step = question_spec(cf).step("architecture")
    assert step.has_diagram and step.reference_diagram.startswith("flowchart LR")
    router = next(p for p in step.rubric if p.id == "arch-prefix-router")
    assert router.diagram.path[1] == ("router", "load balanc", "dispatch")
    assert "prefix aware" in router.diagram.edge_label
    assert not question_spec(cf).step("bottlenecks").has_diagram


def test_a_syntax_error_in_the_reference_diagram_is_reported_at_its_file_line():
    text = edited("  gateway --> router{Router}\n", "  gateway --> router{Router\n")
    [problem] = problems_of(text)
    line = line_of(text, "  gateway --> router{Router\n")
    assert problem.startswith(f"{CHAT}:{line}: reference_diagram: ")
    assert "'{' is not closed" in problem and "(its line 3, column 21)" in problem


def test_a_rule_needs_exactly_one_of_path_and_node():
    text = edited(
        "          node:\n            - [autoscal, hpa]\n",
        "          nodes:\n            - [autoscal, hpa]\n",
    )
    found = problems_of(text)
    assert any("unknown key 'nodes' in diagram rule" in p for p in found)
    assert any("exactly one of 'path' and 'node'" in p for p in found)


def test_a_path_needs_two_groups_and_edge_label_goes_with_a_path_only():
    text = edited(
        "          node:\n            - [autoscal, hpa]\n"
        "            - [queue, waiting, num request]\n",
        "          node:\n            - [autoscal, hpa]\n          edge_label: [queue]\n",
    )
    assert any("edge_label goes with a 'path' rule only" in p for p in problems_of(text))
    text = edited(
        "            - [router, load balanc, dispatch]\n            - [vllm, replica, engine, "
        "instance]\n          edge_label",
        "          edge_label",
    )
    assert any("diagram.path must be two or more" in p for p in problems_of(text))


def test_diagram_keys_on_a_step_without_a_diagram_box_are_refused_until_it_has_one():
    box = "    reference_diagram: |\n      flowchart LR\n        a --> b\n"
    text = edited("  bottlenecks:\n    minutes:", f"  bottlenecks:\n{box}    minutes:")
    [problem] = problems_of(text)
    assert "step 'bottlenecks' has no diagram box: add 'diagram: true'" in problem
    enabled = edited(
        "  bottlenecks:\n    minutes:", f"  bottlenecks:\n    diagram: true\n{box}    minutes:"
    )
    assert problems_of(enabled) == []
    assert question_spec(parse_file(CHAT, enabled)).step("bottlenecks").has_diagram


def test_an_answer_test_may_carry_a_diagram_only_where_the_step_has_a_box():
    cf = parse_file(CHAT)
    assert any("diagram" in t for t in cf.meta["tests"]["architecture"])
    text = edited(
        "tests:\n  clarify:\n    - name:",
        "tests:\n  clarify:\n    - diagram: |\n        flowchart LR\n          a --> b\n"
        "      name:",
    )
    [problem] = problems_of(text)
    assert "'clarify' has no diagram box" in problem


@pytest.mark.parametrize("value", ["yes please", 3])
def test_diagram_on_a_step_is_true_or_false(value):
    text = edited(
        "  bottlenecks:\n    minutes:", f"  bottlenecks:\n    diagram: {value}\n    minutes:"
    )
    assert any("diagram must be true or false" in p for p in problems_of(text))
