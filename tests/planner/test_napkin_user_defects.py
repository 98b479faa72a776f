"""What a new user typed and the calculator got wrong: a worksheet name that is a unit, count
words after '/', '$' per GPU per hour, link speeds, Hz, a rate missing its /req, and a month of
hours shown in days. Each row names the input and what a candidate must see."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from planner.engine import evaluate, evaluate_expression, evaluate_text

# --- a name refused because it is a unit ------------------------------------------------------


def test_a_name_refused_as_a_unit_is_not_read_later_as_that_unit() -> None:
    first, second = evaluate_text("hours = 730\ngpus = ceil(hours / 4 h)")
    assert first.kind == "error" and "'hours' is a unit" in first.error
    assert second.kind == "error"
    assert second.quantity is None and second.value is None
    assert "'hours'" in second.error
    assert "refused" in second.error and "line 1" in second.error
    assert "unit (h)" in second.error
    assert second.position == "gpus = ceil(".__len__()


def test_a_refused_name_used_as_a_unit_after_a_number_is_still_that_unit() -> None:
    rows = evaluate_text("hours = 730\nx = 3 hours in min\ny = 2 * 90 min in hours")
    assert [row.display for row in rows[1:]] == ["180 min", "3 hours"]


def test_a_refused_name_is_not_defined_for_the_lines_after_it() -> None:
    rows = evaluate_text("h = 2\nx = h * 3")
    assert rows[1].kind == "error" and "'h'" in rows[1].error and "refused" in rows[1].error


# --- count words where a count fits ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "display"),
    [
        ("70e9 params * 2 B/param", "140 GB"),
        ("70e9 params * 2 B/param in GB", "140 GB"),
        ("70e9 params * 2 B / param in GB", "140 GB"),
        ("$2/GPU/hour * 8 GPUs * 720 hours", "11520 USD"),
        ("8 GPUs * $2/GPU/h", "16 USD/h"),
        ("2 USD/GPU/h * 8 GPUs", "16 USD/h"),
        ("100 requests / 10 s", "10 req/s"),
        ("4 tokens/request * 2 requests", "8 tok"),
        ("2000 tok/s / (256 tokens/request)", "7.812 req/s"),
        ("50 Hz * 2 s", "100"),
        ("2 GHz * 1 ms", "2e6"),
    ],
)
def test_count_words_and_dollars_read_as_candidates_mean_them(text: str, display: str):
    result = evaluate_expression(text)
    assert result.error is None
    assert result.display == display


def test_a_count_word_after_a_slash_that_is_a_defined_name_is_that_name() -> None:
    assert float(evaluate("6 B/param", {"param": evaluate("3")})) == 2


def test_a_worksheet_line_per_a_defined_count_word_follows_that_name() -> None:
    rows = evaluate_text("param = 2\nx = 6 B/param\nparam = 3\ny = 6 B/param")
    assert [rows[1].display, rows[3].display] == ["3 B", "2 B"]


def test_a_count_word_standing_alone_is_still_an_unknown_name_and_says_how_to_write_it():
    error = evaluate_expression("params * 2 B").error
    assert error.startswith("Unknown name 'params' at column 1.")
    assert "70e9 params" in error


def test_a_count_word_after_a_name_and_a_slash_is_not_silently_one() -> None:
    error = evaluate_expression("cost / GPU", {"cost": evaluate("$8")}).error
    assert error.startswith("Unknown name 'GPU' at column 8.")


# --- unknown units are met with the nearest known one ------------------------------------------


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("400 Gbps", "did you mean Gbit/s?"),
        ("400Gbps", "did you mean Gbit/s?"),
        ("25 GBps", "did you mean GB/s?"),
        ("1 GB/s in Gbps", "did you mean Gbit/s?"),
        ("x = Gbps * 2", "did you mean Gbit/s?"),
        ("3 hrs", "did you mean h?"),
        ("5 TPS", "did you mean tok/s?"),
    ],
)
def test_an_unknown_unit_names_the_nearest_known_one(text: str, hint: str) -> None:
    error = evaluate_expression(text).error
    assert error is not None and hint in error


def test_a_rate_divided_by_a_bare_token_count_suggests_tok_per_req() -> None:
    error = evaluate_expression("2000 tok/s / 256 tok in req/s").error
    assert error.startswith("Cannot convert 1 per time to req/s")
    assert "tok/req" in error


# --- a month of hours is shown in hours ---------------------------------------------------------


def test_a_time_written_in_hours_is_shown_in_hours_not_days() -> None:
    result = evaluate_expression("99.9% * 730 hours")
    assert (result.unit, result.display) == ("h", "729.3 h")
    assert result.value == pytest.approx(729.27)


@pytest.mark.parametrize(
    ("text", "display"),
    [
        ("2 days + 12 h", "2.5 day"),
        ("1 week", "7 day"),
        ("200 s", "3.333 min"),
        ("3 * 24 h", "72 h"),
    ],
)
def test_days_are_shown_only_when_days_were_written(text: str, display: str) -> None:
    assert evaluate_expression(text).display == display


def test_napkin_json_gives_a_month_of_hours_in_hours() -> None:
    out = StringIO()
    call_command("napkin", "99.9% * 730 hours", "--json", stdout=out)
    row = json.loads(out.getvalue())
    assert set(row) == {"input", "value", "unit", "latex"}
    assert row["unit"] == "h" and row["value"] == pytest.approx(729.27)


# --- commas, and a name given again -----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("x = 1,000 tok", "write 1000 (or 1e3), with no comma"),
        ("x = 12,000,000 tok/s", "write 12000000 (or 12e6), with no comma"),
        ("x = $1,000", "write 1000 (or 1e3)"),
        ("x = 2,5 ms", "not a decimal point: write 2.5"),
        # 1,008 is not 1e3: no short form that means another number.
        ("bw = 1,008 GB/s", "write 1008, with no comma"),
        ("x = 12,845,056", "write 12845056, with no comma"),
    ],
)
def test_a_comma_inside_a_number_says_how_to_write_the_number(line: str, says: str) -> None:
    (row,) = evaluate_text(line)
    assert row.kind == "error" and says in row.error
    assert row.position == line.index(",")


def test_a_comma_between_a_functions_arguments_is_still_read() -> None:
    assert [row.display for row in evaluate_text("x = max(2,5)\ny = max(1, 2)")] == ["5", "2"]


def test_a_line_that_gives_a_given_another_value_says_so() -> None:
    rows = evaluate_text("P = 70e9 param\nW = P * 2 B/param in GB", givens={"P": "8e9 param"})
    assert rows[0].kind == "value" and rows[1].display == "140 GB"
    assert any("one of the question's givens (8e9 param)" in note for note in rows[0].notes)
    assert rows[1].notes == []


def test_a_worksheet_name_defined_twice_names_the_earlier_line_and_same_value_is_quiet() -> None:
    rows = evaluate_text("n = 4\nm = 2\nn = 8\nn = 8\nP = 8e9 param", givens={"P": "8e9 param"})
    (note,) = rows[2].notes
    assert note == "n had another value from line 1; from this line on it means this one."
    assert rows[3].notes == [] and rows[4].notes == []


# --- a tiny number is too small, not too large ---------------------------------------------------


@pytest.mark.parametrize(("text", "word"), [("1e-320 s", "too small"), ("1e308 GB", "too large")])
def test_an_exponent_out_of_range_says_which_way(text: str, word: str) -> None:
    # "1e-320" was refused as "too large for a napkin estimate".
    result = evaluate_expression(text)
    assert result.error is not None and word in result.error
