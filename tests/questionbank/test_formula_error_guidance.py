"""What an instructor needs from a napkin-math problem in a question file to fix it: a unit
that does not fit the formula is reported on the `unit` line and says what the formula gives;
a name the formula or a mistake does not know lists the names it may use."""

from __future__ import annotations

from tests.questionbank import question_file as qf


def test_a_unit_the_formula_cannot_be_shown_in_is_reported_on_the_unit_line() -> None:
    text = qf.template("wrong-unit")
    assert "        unit: ms\n" in text
    text = text.replace("        unit: ms\n", "        unit: GB\n", 1)
    [problem] = [p for p in qf.problems("wrong-unit", text) if "step_floor" in p.message]
    assert problem.line == qf.line(text, "        unit: GB")
    # It says what the formula gives and what to change.
    assert "gives time" in problem.message and "to GB" in problem.message
    assert "unit" in problem.message and "formula" in problem.message
    assert "ms" in problem.message  # a unit of time to write instead


def test_an_unknown_name_in_a_formula_lists_the_names_it_may_use() -> None:
    text = qf.template("unknown-name").replace(
        "        formula: W / bw\n", "        formula: W / bandwidth\n", 1
    )
    [problem] = [p for p in qf.problems("unknown-name", text) if "step_floor" in p.message]
    assert "Unknown name 'bandwidth'" in problem.message
    assert "W, bw" in problem.message


def test_a_mistake_that_replaces_no_given_lists_the_givens() -> None:
    text = qf.template("bad-replace").replace(
        "        tolerance: 0.05\n",
        "        tolerance: 0.05\n"
        "        mistakes:\n"
        '          - replace: {bandwidth: "2000 GB/s"}\n'
        "            hint: Use the real bandwidth.\n",
        1,
    )
    [problem] = [p for p in qf.problems("bad-replace", text) if "mistake" in p.message]
    assert "'bandwidth' is not a given" in problem.message
    assert "W, bw" in problem.message
