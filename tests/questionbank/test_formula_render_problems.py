"""A formula that does not render as math (the converter fails on it, or does not know a
command in it) is a problem at its line, found in the same pass as raw HTML: in the scenario,
in a step's prompt, in a concept note; formulas that render, and dollars in code, are none."""

from __future__ import annotations

from questionbank.files import parse_file, validate_concept
from questionbank.rendering import latex_problem
from tests.questionbank import question_file as qf

PROMPT = "      How long does one decode step take at best?"


def test_the_renderer_tells_a_formula_that_fails_and_an_unknown_command():
    assert "arguments" in latex_problem(r"\frac{1}{")
    assert "`\\unknowncmd` is not a command" in latex_problem(r"\unknowncmd{2}")
    assert latex_problem(r"\frac{a}{b} \times 10^{9}\,\text{GB}") is None


def test_a_formula_that_fails_in_the_scenario_is_a_problem_at_its_line():
    bad = r"Each step reads $\frac{1}{$ of the weights."
    text = qf.edit(
        qf.template("formula"), "Write the scenario here:", f"{bad}\nWrite the scenario here:"
    )
    [problem] = qf.problems("formula", text)
    assert problem.line == qf.line(text, bad)
    assert problem.message.startswith(r"the formula `\frac{1}{` does not render: ")


def test_an_unknown_command_in_a_prompt_is_a_problem_at_its_line():
    bad = r"      Then double it: $\unknowncmd{2}$ tokens."
    text = qf.edit(qf.template("formula"), PROMPT, f"{PROMPT}\n{bad}")
    [problem] = qf.problems("formula", text)
    assert problem.line == qf.line(text, bad)
    assert r"the formula `\unknowncmd{2}` does not render" in problem.message
    assert r"`\unknowncmd` is not a command the converter knows" in problem.message


def test_a_display_formula_that_fails_is_a_problem_at_the_line_it_starts():
    text = qf.edit(
        qf.template("formula"), PROMPT, f"{PROMPT}\n\n      $$\n      \\left( x\n      $$"
    )
    [problem] = qf.problems("formula", text)
    assert problem.line == qf.line(text, "      \\left( x")
    assert r"a `\left` has no `\right`" in problem.message


def test_a_formula_and_raw_html_are_each_told_once_in_one_pass():
    bad = r"      $\frac{1}{$ and <iframe src=x></iframe>"
    text = qf.edit(qf.template("formula"), PROMPT, f"{PROMPT}\n{bad}")
    problems = qf.problems("formula", text)
    assert [p.line for p in problems] == [qf.line(text, bad)] * 2
    assert sorted("does not render" in p.message for p in problems) == [False, True]


def test_a_formula_that_fails_in_a_concept_note_is_a_problem():
    text = "---\nslug: kv\ntitle: KV\nsummary: The cache.\n---\nIt grows as $\\sqrt$.\n"
    [problem] = validate_concept(parse_file("kv.md", text), concept_slugs=None)
    assert problem.line == 6 and "does not render" in problem.message


def test_formulas_that_render_and_dollars_in_code_are_no_problem():
    text = qf.edit(
        qf.template("kept"),
        PROMPT,
        f"{PROMPT}\n      About $\\frac{{2 P}}{{B}} \\approx 8\\,\\text{{ms}}$, not "
        "`$\\frac{1}{$`; costs $5 and $6.\n\n      ```\n      $\\unknowncmd$\n      ```",
    )
    assert qf.problems("kept", text) == []
