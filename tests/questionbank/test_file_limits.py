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


def test_minutes_past_a_mock_interviews_length_are_a_problem_at_their_line() -> None:
    """A question's minutes set its mock interview's clock: 10**22 minutes is past timedelta's
    range, so starting the mock failed with a server error."""
    from questionbank.files import CONTENT_DIR, validate_question

    text = (CONTENT_DIR / "questions" / "chat-api-50qps.md").read_text()
    assert "\nminutes: 45\n" in text and "\n    minutes: 5\n" in text
    text = text.replace("\nminutes: 45\n", "\nminutes: 10000000000000000000000\n", 1)
    text = text.replace("\n    minutes: 5\n", "\n    minutes: 300\n", 1)
    cf = parse_file("chat-api-50qps.md", text)
    problems = [(p.line, p.message) for p in validate_question(cf, concept_slugs=None)]
    lines = text.split("\n")
    assert [lines[line - 1].strip() for line, _ in problems] == [
        "minutes: 10000000000000000000000",
        "minutes: 300",
    ]
    assert all("at most 240" in message for _, message in problems)
