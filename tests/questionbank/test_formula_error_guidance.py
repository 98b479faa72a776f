"""What an instructor needs from a napkin-math problem in a question file to fix it: a unit
that does not fit the formula is reported on the `unit` line and says what the formula gives;
a name the formula or a mistake does not know lists the names it may use."""

from __future__ import annotations

from authoring import services
from questionbank.files import parse_file, validate_question


def _template(slug: str) -> str:
    text = services.QUESTION_TEMPLATE.read_text(encoding="utf-8")
    return text.replace(services.TEMPLATE_SLUG_LINE, f"slug: {slug}", 1)


def _problems(slug: str, text: str):
    return validate_question(parse_file(f"{slug}.md", text), concept_slugs=None)


def _line(text: str, exact: str) -> int:
    return text.split("\n").index(exact) + 1


def test_a_unit_the_formula_cannot_be_shown_in_is_reported_on_the_unit_line() -> None:
    text = _template("wrong-unit")
    assert "        unit: ms\n" in text
    text = text.replace("        unit: ms\n", "        unit: GB\n", 1)
    [problem] = [p for p in _problems("wrong-unit", text) if "step_floor" in p.message]
    assert problem.line == _line(text, "        unit: GB")
    # It says what the formula gives and what to change.
    assert "gives time" in problem.message and "to GB" in problem.message
    assert "unit" in problem.message and "formula" in problem.message
    assert "ms" in problem.message  # a unit of time to write instead


def test_an_unknown_name_in_a_formula_lists_the_names_it_may_use() -> None:
    text = _template("unknown-name").replace(
        "        formula: W / bw\n", "        formula: W / bandwidth\n", 1
    )
    [problem] = [p for p in _problems("unknown-name", text) if "step_floor" in p.message]
    assert "Unknown name 'bandwidth'" in problem.message
    assert "W, bw" in problem.message


def test_a_mistake_that_replaces_no_given_lists_the_givens() -> None:
    text = _template("bad-replace").replace(
        "        tolerance: 0.05\n",
        "        tolerance: 0.05\n"
        "        mistakes:\n"
        '          - replace: {bandwidth: "2000 GB/s"}\n'
        "            hint: Use the real bandwidth.\n",
        1,
    )
    [problem] = [p for p in _problems("bad-replace", text) if "mistake" in p.message]
    assert "'bandwidth' is not a given" in problem.message
    assert "W, bw" in problem.message
