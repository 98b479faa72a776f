"""What the question checker tells an author, each at the line that holds the fault: a unit
mismatch caused by a given written without its unit, a `unit` that is no unit, a bracket left
open, an invisible direction control, and raw HTML the page removes."""

from __future__ import annotations

import re

import pytest

from questionbank.answer_test_writer import with_answer_test
from questionbank.files import parse_file, validate_concept
from tests.questionbank import question_file as qf


def test_a_given_with_no_unit_is_named_with_its_line_when_the_quantity_unit_does_not_fit():
    text = qf.edit(qf.template("no-unit"), "        value: 1008 GB/s\n", "        value: 1008\n")
    [problem] = qf.problems("no-unit", text)
    assert problem.line == qf.line(text, "        unit: ms")
    given = qf.line(text, "        value: 1008")
    assert (
        f"The given 'bw' on line {given} has no unit: if it should have one, add it."
        in problem.message
    )
    assert "'W'" not in problem.message  # W has its unit (GB): it is not named


def test_a_unitless_given_the_formula_does_not_use_is_not_named():
    text = qf.edit(
        qf.template("layers"),
        "        value: 1008 GB/s\n",
        "        value: 1008 GB/s\n"
        "      - name: layers\n        label: Layers\n        value: 32\n",
    )
    text = qf.edit(text, "        unit: ms\n", "        unit: GB\n")
    [problem] = qf.problems("layers", text)
    assert "has no unit" not in problem.message


def test_a_unitless_given_is_legitimate_when_the_units_fit():
    text = qf.edit(qf.template("mfu"), "        value: 1008 GB/s\n", "        value: 1008\n")
    text = qf.edit(text, "        unit: ms\n", "        unit: GB\n")
    assert qf.problems("mfu", text) == []


def test_a_unit_that_is_no_unit_is_reported_on_the_unit_line():
    text = qf.edit(qf.template("parsecs"), "        unit: ms\n", "        unit: parsecs\n")
    [problem] = qf.problems("parsecs", text)
    assert problem.line == qf.line(text, "        unit: parsecs") == 51
    assert "'parsecs'" in problem.message


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ("tags: [capacity-planning]", "tags: [capacity-planning", 6),
        (
            "title: Design a summarisation endpoint",
            "title: [broken",
            3,
        ),
        (
            "title: Design a summarisation endpoint",
            'title: "Design a summarisation endpoint',
            3,
        ),
        ("tags: [capacity-planning]", "tags: {capacity-planning", 6),
    ],
)
def test_a_bracket_or_quote_left_open_is_reported_on_the_line_that_opens_it(old, new, line):
    text = qf.edit(qf.template("open"), old, new)
    [problem] = qf.problems("open", text)
    assert problem.line == line
    assert "front matter is not valid YAML" in problem.message
    assert "on this line is not closed" in problem.message


def test_a_yaml_error_inside_a_line_keeps_that_line():
    text = qf.edit(qf.template("colon"), "difficulty: core", "difficulty: core: hard")
    [problem] = qf.problems("colon", text)
    assert problem.line == qf.line(text, "difficulty: core: hard")
    assert "not closed" not in problem.message


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("title: Design a", "title: Design \u202ea"),
        ("summary: Serve a", "summary: Serve \u2067a"),
        ("Write the scenario here:", "Write the \u202bscenario here:"),
        ("    - Replace this line", "    - Replace \u2066this\u2069 line"),
    ],
)
def test_an_invisible_direction_control_is_a_problem_at_its_line(old, new):
    text = qf.edit(qf.template("bidi"), old, new)
    problems = qf.problems("bidi", text)
    [line] = [n for n, row in enumerate(text.split("\n"), start=1) if new in row]
    [problem] = [p for p in problems if "direction control" in p.message]
    assert problem.line == line
    code = next(f"U+{ord(ch):04X}" for ch in new if 0x202A <= ord(ch) <= 0x2069)
    assert code in problem.message and "remove" in problem.message


def test_a_direction_control_in_a_concept_note_is_a_problem():
    text = "---\nslug: kv\ntitle: KV\nsummary: The cache.\n---\nIt \u202egrows.\n"
    [problem] = validate_concept(parse_file("kv.md", text), concept_slugs=None)
    assert problem.line == 6 and "U+202E" in problem.message


def test_raw_html_in_the_scenario_is_a_problem_at_its_line():
    text = qf.edit(
        qf.template("html"),
        "Write the scenario here:",
        "<iframe src=https://example.com></iframe>\nWrite the scenario here:",
    )
    [problem] = qf.problems("html", text)
    assert problem.line == qf.line(text, "<iframe src=https://example.com></iframe>")
    assert "<iframe>" in problem.message and "removed" in problem.message


def test_raw_html_in_a_prompt_is_a_problem_at_its_line():
    old = "      How long does one decode step take at best?"
    text = qf.edit(qf.template("html"), old, f"{old}\n      Then <script>alert(1)</script> this.")
    [problem] = qf.problems("html", text)
    assert problem.line == qf.line(text, "      Then <script>alert(1)</script> this.")
    assert "<script>" in problem.message


def test_html_the_page_keeps_or_shows_as_code_is_no_problem():
    old = "      How long does one decode step take at best?"
    text = qf.edit(
        qf.template("kept"),
        old,
        f"{old}\n      H<sub>2</sub>, `<iframe>`, <https://example.com>, a <5 ms wait.\n\n"
        "      ```\n      <script>shown as code</script>\n      ```",
    )
    assert qf.problems("kept", text) == []


def test_an_answer_test_from_a_candidate_escapes_direction_controls():
    text = qf.template("from-report")
    answer = "Peak load \u202eSPQ 05\u202c and \u2066isolated\u2069 text"
    written = with_answer_test(text, "clarify", answer=answer, expect={"pin-load": "hit"})
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", written)
    assert "\\u202E" in written and "\\u2066" in written
    cf = parse_file("from-report.md", written)
    assert cf.meta["tests"]["clarify"][-1]["answer"] == answer  # it reads back as it was
