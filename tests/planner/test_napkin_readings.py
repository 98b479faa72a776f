"""How the calculator reads what candidates actually type: `7B`, `32k`, count words, `%`, `$`,
and a batch of lines that build on each other. Each row names the input and what a candidate
must see."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from planner.engine import evaluate_expression

SEVEN_B = "7B reads as 7 bytes; for 7 billion parameters write 7e9 or 7G."


# --- 7B is 7 bytes, and the candidate is told --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "display", "note"),
    [
        ("7B * 2", "14 B", SEVEN_B),
        ("70B * 2", "140 B", "70B reads as 70 bytes; for 70 billion parameters write 70e9 or 70G."),
        ("7e9 * 2 B in GB", "14 GB", None),
        ("7G * 2 B in GB", "14 GB", None),
        ("2 B * 7", "14 B", None),  # bytes written apart from the number are plainly bytes
    ],
)
def test_a_number_glued_to_b_is_bytes_with_a_note(text: str, display: str, note: str | None):
    result = evaluate_expression(text)
    assert result.display == display
    assert result.notes == ([note] if note else [])


def test_7b_in_a_line_that_fails_on_units_names_the_likely_cause() -> None:
    result = evaluate_expression("7B * 2 B in GB")
    assert result.error == ("Cannot convert bytes × bytes to GB (bytes). " + SEVEN_B)


# --- 32k is 32,000; 32Ki is 32,768 -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "display", "notes"),
    [
        (
            "56 KiB * 32k in GiB",
            "1.709 GiB",
            ["32k reads as 32,000; for a power of two such as 32,768 write 32Ki."],
        ),
        ("56 KiB * 32Ki in GiB", "1.75 GiB", []),
        ("56 KiB * 32768 in GiB", "1.75 GiB", []),
        ("56 KiB * 128Ki in GiB", "7 GiB", []),
        ("2M tok / (1Mi tok)", "1.907", []),
        ("8k", "8000", ["8k reads as 8,000; for a power of two such as 8,192 write 8Ki."]),
        # Only a power of two may mean 1024 of them: 500k documents are never 512,000.
        ("500k req * 2.2k tok/req in Mtok", "1100 Mtok", []),
        ("3k tok/s", "3000 tok/s", []),
    ],
)
def test_k_is_a_thousand_and_ki_is_1024_and_k_says_so(text: str, display: str, notes: list):
    result = evaluate_expression(text)
    assert (result.display, result.notes) == (display, notes)


# --- words that are not units ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "display"),
    [
        ("10 GPUs", "10"),
        ("33 streams", "33"),
        ("7e9 params * 2 B in GB", "14 GB"),
        ("4 replicas * 2", "8"),
        ("(9 + 1) instances", "10"),
        ("1 week in h", "168 h"),
    ],
)
def test_count_words_label_a_number_and_weeks_are_time(text: str, display: str) -> None:
    assert evaluate_expression(text).display == display


@pytest.mark.parametrize(
    ("text", "start", "close"),
    [
        ("10 GPUz", "'GPUz' at column 4 is not a unit.", "Close ones: GPU, GPUs."),
        ("15 parsecs", "'parsecs' at column 4 is not a unit.", "Close ones: secs"),
        ("3 fortnights", "'fortnights' at column 3 is not a unit.", ""),
    ],
)
def test_a_word_after_a_number_that_is_no_unit_is_named_with_the_close_ones(
    text: str, start: str, close: str
) -> None:
    error = evaluate_expression(text).error
    assert error.startswith(start)
    assert close in error
    assert "Missing an operator" not in error


def test_a_count_word_used_as_a_name_is_still_a_name() -> None:
    from planner.engine import evaluate

    assert float(evaluate("2 * params", {"params": evaluate("7.6e9")})) == 15.2e9


# --- % and $ ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "display"),
    [
        ("70%", "0.7"),
        ("24 GiB * 90% in GiB", "21.6 GiB"),
        ("$2.5/h * 24 h", "60 USD"),
        ("$2.5/h", "2.5 USD/h"),
        ("$1k", "1000 USD"),
    ],
)
def test_percent_and_dollars(text: str, display: str) -> None:
    assert evaluate_expression(text).display == display


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("70 %", "'%' at column 4 must follow its number with no space, as in 70%."),
        ("$ 2", "'$' at column 1 must come straight before a number, as in $2.5/h"),
    ],
)
def test_percent_and_dollars_written_apart_say_how_to_write_them(text: str, error: str):
    assert evaluate_expression(text).error.startswith(error)


# --- a batch is one worksheet ------------------------------------------------------------------


def test_napkin_batch_lines_build_on_each_other(tmp_path: Path) -> None:
    batch = tmp_path / "lines.txt"
    batch.write_text("W = 15.2 GB\nbw = 1008 GB/s\nW / (0.7 * bw) in ms\n")
    out = StringIO()
    call_command("napkin", "--batch", str(batch), "--json", stdout=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [row.get("error") for row in rows] == [None, None, None]
    assert rows[2]["value"] == pytest.approx(21.54, abs=0.01)
    assert rows[2]["unit"] == "ms"


def test_napkin_batch_a_name_whose_line_failed_stays_undefined(tmp_path: Path) -> None:
    batch = tmp_path / "lines.txt"
    batch.write_text("x = 3\nx = 1 GB + 1 s\nx * 2\n")
    out = StringIO()
    call_command("napkin", "--batch", str(batch), "--json", stdout=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows[1]["error"].startswith("Cannot add")
    assert rows[2]["error"] == "Unknown name 'x' at column 1."
