"""The napkin-math language: a table of expressions with hand-computed values and units,
one test per error kind, worksheets and rendering."""

import pytest

from planner.engine import NapkinError, evaluate, evaluate_expression, evaluate_worksheet

# (expression, value in the unit shown, unit shown). Values computed by hand.
TABLE = [
    # plain numbers and suffixes
    ("15", 15, ""),
    ("15.2", 15.2, ""),
    ("1e9", 1e9, ""),
    ("1_000_000", 1e6, ""),
    ("32k", 32000, ""),
    ("2M", 2e6, ""),
    ("3G", 3e9, ""),
    (".5", 0.5, ""),
    ("2.5e-3", 0.0025, ""),
    # operators and precedence
    ("1 + 2 * 3", 7, ""),
    ("(1 + 2) * 3", 9, ""),
    ("10 / 4", 2.5, ""),
    ("2^10", 1024, ""),
    ("2**10", 1024, ""),
    ("2^3^2", 512, ""),
    ("-2^2", -4, ""),
    ("(-2)^2", 4, ""),
    ("2^-1", 0.5, ""),
    ("-3 + 5", 2, ""),
    ("8 - 3 - 2", 3, ""),
    ("100 / 10 / 2", 5, ""),
    ("4^0.5", 2, ""),
    ("27^(1/3)", 3, ""),
    # functions
    ("ceil(9.14)", 10, ""),
    ("floor(9.99)", 9, ""),
    ("round(2.5)", 3, ""),
    ("round(2.49)", 2, ""),
    ("sqrt(16)", 4, ""),
    ("log2(1024)", 10, ""),
    ("log10(1000)", 3, ""),
    ("ln(1)", 0, ""),
    ("abs(-7)", 7, ""),
    ("min(3, 1, 2)", 1, ""),
    ("max(3, 1, 2)", 3, ""),
    ("ceil(50 / (0.7 * 7.8))", 10, ""),
    # bytes
    ("15.2 GB", 15.2, "GB"),
    ("7.6e9 * 2 B", 15.2, "GB"),
    ("1024 MiB", 1, "GiB"),
    ("1 GiB in MiB", 1024, "MiB"),
    ("1 GB in GiB", 1e9 / 2**30, "GiB"),
    ("8 bit", 1, "B"),
    ("1 byte + 8 bits", 2, "B"),
    ("2 * 28 * 4 * 128 * 2 B", 56, "KiB"),
    ("56 KiB * 32768", 1.75, "GiB"),
    ("56 KiB * 131072", 7, "GiB"),
    ("56 KiB/tok * 32768 tok", 1.75, "GiB"),
    ("56 KiB/tok * 32k tok in GB", 57344 * 32000 / 1e9, "GB"),
    ("2^10 B", 1, "KiB"),
    ("1.5 TB in GB", 1500, "GB"),
    ("100 Gbit/s in GB/s", 12.5, "GB/s"),
    # time
    ("1 h in s", 3600, "s"),
    ("90 s", 90, "s"),
    ("200 s", 200 / 60, "min"),
    ("1500 us", 1.5, "ms"),
    ("1 day in h", 24, "h"),
    ("3 min + 30 s in s", 210, "s"),
    ("15.2 GB / (0.7 * 1008 GB/s)", 15.2e9 / (0.7 * 1008e9) * 1000, "ms"),
    ("15.2 GB / (0.7 * 1008 GB/s) in ms", 15.2e9 / (0.7 * 1008e9) * 1000, "ms"),
    ("15.2 GB / (0.7 * 1008 GB/s) in s", 15.2e9 / (0.7 * 1008e9), "s"),
    ("1 / (50 tok/s)", 20, "ms/tok"),
    # tokens, requests, rates
    ("2000 tok/s / 256 tok/req", 7.8125, "req/s"),
    ("2000 tok/s / (256 tok/req)", 7.8125, "req/s"),
    ("50 QPS * 2 s in req", 100, "req"),
    ("50 QPS in req/s", 50, "req/s"),
    ("7.8125 req/s * 0.7", 5.46875, "req/s"),
    ("50 QPS / (0.7 * 2000 tok/s / 256 tok/req)", 50 / (0.7 * 7.8125), ""),
    ("ceil(50 QPS / (0.7 * 2000 tok/s / 256 tok/req))", 10, ""),
    ("512 tok + 256 tok", 768, "tok"),
    ("32k tok", 32000, "tok"),
    ("1 Mtok in tok", 1e6, "tok"),
    ("ceil(8192.5 tok)", 8193, "tok"),
    ("sqrt(16 s^2)", 4, "s"),
    # compute and money
    ("2 * 7.6e9 FLOP/tok * 2000 tok/s in TFLOP/s", 30.4, "TFLOP/s"),
    ("989 TFLOPS in TFLOP/s", 989, "TFLOP/s"),
    ("2 USD/h * 24 h", 48, "USD"),
    ("10 * 2 USD/h", 20, "USD/h"),
    ("3 USD / (1 Mtok) * 500 Mtok", 1500, "USD"),
    # typography pasted from slides
    ("3 × 4", 12, ""),
    ("10 − 4", 6, ""),
    ("15 ms  # TPOT", 15, "ms"),
]


@pytest.mark.parametrize(("text", "value", "unit"), TABLE)
def test_expression_value_and_unit(text: str, value: float, unit: str) -> None:
    result = evaluate_expression(text)
    assert result.error is None, result.error
    assert result.unit == unit
    assert result.value == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_table_has_at_least_sixty_rows() -> None:
    assert len(TABLE) >= 60


def test_exact_arithmetic_where_possible() -> None:
    assert str(evaluate("1/3 + 1/6").magnitude) == "1/2"
    assert str(evaluate("0.1 + 0.2").magnitude) == "3/10"


def test_to_unit_overrides_the_readable_choice() -> None:
    assert evaluate_expression("21.5 ms", to_unit="s").value == pytest.approx(0.0215)
    assert evaluate_expression("7.8125 req/s", to_unit="QPS").unit == "QPS"


def test_assignment_line_names_the_result() -> None:
    result = evaluate_expression("W = 7.6e9 * 2 B")
    assert result.name == "W"
    assert result.display == "15.2 GB"


# --- one test per error kind ------------------------------------------------------------------


def _error(text: str, **kwargs: object) -> tuple[str, int | None]:
    result = evaluate_expression(text, **kwargs)
    assert result.value is None
    assert result.error and result.error.endswith("."), result.error
    assert "\n" not in result.error and "Traceback" not in result.error
    return result.error, result.position


def test_adding_different_dimensions() -> None:
    message, position = _error("15 GB + 3 ms")
    assert "Cannot add bytes and time" in message
    assert position == 6


def test_comparing_different_dimensions_in_min() -> None:
    message, _ = _error("min(15 GB, 3 ms)")
    assert "min" in message and "bytes" in message and "time" in message


def test_converting_to_an_incompatible_unit() -> None:
    message, position = _error("15.2 GB in ms")
    assert "Cannot convert bytes to ms" in message
    assert position == len("15.2 GB in ")


def test_converting_with_to_unit() -> None:
    message, _ = _error("15.2 GB", to_unit="req/s")
    assert "Cannot convert" in message


def test_unknown_name() -> None:
    message, position = _error("W / bw")
    assert message == "Unknown name 'W' at column 1."
    assert position == 0


def test_unknown_function() -> None:
    message, position = _error("2 * exp(3)")
    assert "Unknown function 'exp'" in message
    assert position == 4


def test_unknown_unit_after_a_number() -> None:
    message, _ = _error("15 parsecs")
    assert "'parsecs' at column 4 is not a unit" in message


def test_division_by_zero() -> None:
    message, position = _error("1 GB / (2 - 2)")
    assert message.startswith("Division by zero")
    assert position == 5


def test_zero_to_a_negative_power() -> None:
    message, _ = _error("0^-1")
    assert message.startswith("Division by zero")


def test_log_of_zero_is_a_domain_error() -> None:
    message, _ = _error("log2(0)")
    assert "only for positive numbers" in message


def test_sqrt_of_negative_is_a_domain_error() -> None:
    message, _ = _error("sqrt(-1)")
    assert "negative number" in message


def test_fractional_power_of_a_negative_number() -> None:
    message, _ = _error("(-8)^(1/3)")
    assert "fractional power" in message


def test_result_too_large() -> None:
    message, _ = _error("1e99 * 1e99")
    assert "too large to be a napkin estimate" in message


def test_power_too_large() -> None:
    message, _ = _error("10^1000")
    assert "too large to be a napkin estimate" in message


def test_syntax_error_has_a_position() -> None:
    message, position = _error("2 * (3 + 4")
    assert "never closed" in message
    assert position == 4


@pytest.mark.parametrize(
    ("text", "says", "at"),
    [
        (
            "W / (0.7 * 1008 GB/s in ms",
            "The '(' at column 5 is not closed before 'in' at column 22: add the ')'.",
            4,
        ),
        (
            "ceil(2.5 s in ms",
            "The '(' of ceil at column 5 is not closed before 'in' at column 12: add the ')'.",
            4,
        ),
    ],
)
def test_a_bracket_left_open_before_in_names_the_bracket(text: str, says: str, at: int) -> None:
    message, position = _error(text)
    assert message == says
    assert position == at


def test_unexpected_character() -> None:
    message, position = _error("2 ; 3")
    assert message == "Unexpected character ';' at column 3."
    assert position == 2


def test_exponent_with_units() -> None:
    message, _ = _error("2^(3 s)")
    assert "exponent must be a plain number" in message


def test_rounding_a_quantity_with_units() -> None:
    message, _ = _error("ceil(21.5 ms)")
    assert "divide by a unit first" in message


def test_defining_a_unit_name() -> None:
    message, _ = _error("GB = 3")
    assert "'GB' is a unit" in message


# --- worksheets -------------------------------------------------------------------------------


def test_worksheet_lines_reuse_earlier_names() -> None:
    lines = ["W = 7.6e9 * 2 B", "bw = 0.7 * 1008 GB/s", "tpot = W / bw in ms"]
    results = evaluate_worksheet(lines)
    assert [r.kind for r in results] == ["value", "value", "value"]
    assert results[2].value == pytest.approx(21.54, abs=0.01)
    assert results[2].unit == "ms"


def test_worksheet_givens_are_predefined() -> None:
    results = evaluate_worksheet(
        ["W / (eta * bw)"], {"W": "15.2 GB", "bw": "1008 GB/s", "eta": "0.7"}
    )
    assert results[0].display == "21.54 ms"


def test_worksheet_error_does_not_stop_later_lines() -> None:
    results = evaluate_worksheet(["a = 1 GB + 1 s", "b = 2 GB", "a + b", "", "# note"])
    assert results[0].kind == "error"
    assert results[1].display == "2 GB"
    assert results[2].kind == "error"
    assert results[2].error == "'a' has no value because its own line has an error (column 1)."
    assert [r.kind for r in results[3:]] == ["blank", "blank"]


def test_worksheet_line_limit() -> None:
    with pytest.raises(NapkinError):
        evaluate_worksheet(["1"] * 201)


# --- rendering --------------------------------------------------------------------------------


def test_latex_shows_the_line_as_read() -> None:
    result = evaluate_expression(
        "tpot = W / (eta * bw) in ms",
        env={k: evaluate(v) for k, v in {"W": "15.2 GB", "eta": "0.7", "bw": "1008 GB/s"}.items()},
    )
    assert result.latex == (
        r"\mathrm{tpot} = \frac{W}{\eta \times \mathrm{bw}} \;\rightarrow\; \text{ms}"
    )


def test_latex_of_units_and_suffixes() -> None:
    assert evaluate_expression("32k tok").latex == r"32\,\text{k}\,\text{tok}"
    assert evaluate_expression("1008 GB/s").latex == r"1008\,\text{GB}/\text{s}"
    assert evaluate_expression("ceil(r_x)", env={"r_x": evaluate("2.5")}).latex == (
        r"\left\lceil r_{\mathrm{x}} \right\rceil"
    )


def test_mathml_is_rendered() -> None:
    mathml = evaluate_expression("15.2 GB / (0.7 * 1008 GB/s)").mathml
    assert mathml.startswith("<math") and "<mfrac>" in mathml
    assert "<mtext>GB</mtext>" in mathml and "<mtext>s</mtext>" in mathml  # units upright


@pytest.mark.parametrize(
    ("text", "how", "fixed"),
    [
        ("15552 + 120 tok", "1 tok", "15552 * 1 tok + 120 tok"),
        (
            "2 * 6.53e9 * (100 tok/req) + 5",
            "1 tok/req",
            "2 * 6.53e9 * (100 tok/req) + 5 * 1 tok/req",
        ),
        ("1 / (2 s) + 5", "1 /s", "1 / (2 s) + 5 * 1 /s"),
    ],
)
def test_a_plain_number_added_to_one_with_a_unit_is_told_how_to_give_it_the_unit(text, how, fixed):
    # A count worked out from plain numbers (pixels over pixels) meets a given with a unit.
    message = evaluate_expression(text).error
    assert f"Give the plain number its unit: multiply it by {how}" in message, message
    assert evaluate_expression(fixed).error is None  # what it says to write is read


def test_a_count_beside_tokens_per_request_is_also_told_how_to_make_both_plain():
    # A prompt's 3050 tokens written as a count, plus a 40 tok/req reply, times KV per token:
    # multiplying the count by 1 tok/req leaves KiB × tok/req, a wrong unit; making the
    # reply plain gives the KV of one turn.
    message = evaluate_expression("128 KiB * (3050 + 40 tok/req)").error
    assert message.endswith("where both are counts, make the other plain: divide it by 1 tok/req.")
    fixed = evaluate_expression("128 KiB * (3050 + 40 tok/req / (1 tok/req)) in MiB")
    assert fixed.error is None and (round(fixed.value, 2), fixed.unit) == (386.25, "MiB")
    # A time has no such plain count: only the plain number takes the unit.
    assert "make the other plain" not in evaluate_expression("1 / (2 s) + 5").error


def test_a_unit_after_per_is_said_in_the_singular():
    assert "tokens per request and a plain number" in evaluate_expression("1 tok/req + 5").error
    assert "Give the plain number" not in evaluate_expression("2 GB + 1 s").error
