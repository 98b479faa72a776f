"""A question file past the size limit is refused with the limit in the unit the editor uses."""

from __future__ import annotations

from questionbank.files import MAX_FILE_BYTES, parse_file


def test_a_file_past_the_limit_names_the_limit_in_kib() -> None:
    parsed = parse_file("big.md", "---\n" + "x" * MAX_FILE_BYTES)
    assert [(p.line, p.message) for p in parsed.problems] == [
        (1, f"file is larger than {MAX_FILE_BYTES // 1024} KiB")
    ]


def test_a_value_python_cannot_hold_is_a_problem_at_its_line_not_an_exception() -> None:
    """load_content, check_content and the editor all parse through here: a date that does not
    exist or an integer past int()'s digit limit was a crash (ValueError) in each of them."""
    text = "---\nslug: x\nminutes: 2024-02-30\nweight: " + "9" * 5000 + "\n---\nbody"
    parsed = parse_file("odd.md", text)
    assert [(p.line, "cannot be read" in p.message) for p in parsed.problems] == [
        (3, True),
        (4, True),
    ]
    assert "'2024-02-30'" in parsed.problems[0].message


def test_a_number_that_is_not_finite_is_a_problem_at_its_line() -> None:
    parsed = parse_file("nan.md", "---\nslug: x\nsteps:\n  weight: .nan\n  qps: -.inf\n---\n")
    assert [(p.line, p.message) for p in parsed.problems] == [
        (4, "'weight' must be a finite number"),
        (5, "'qps' must be a finite number"),
    ]
