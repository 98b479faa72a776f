"""The SLO card's number fields, as a candidate fills them: beside "p99 TTFT (ms)" they type
"300 ms", beside "Peak load (QPS)" "50 QPS". Each was refused after the submit as "Not a
number ... Enter a number, like 50 or 32k.", counted as missed, and left out of the napkin
worksheet's names, though it said exactly what the field asks. The napkin calculator now
reads the figure and converts its unit to the field's (0.3 s is 300 ms); a unit of another
kind is refused with a message that names the one the field wants."""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

import pytest

from practice.slo import parse_number, review_card
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    attempt,
    candidate,
    client_in,
    step_url,
)
from tests.practice.test_slo import BRIEF, FULL_CARD

# The figures of the full card, each written with a unit of its kind.
CARD = {**FULL_CARD, "peak_qps": "50 req/s", "ttft_p99_ms": "0.3 s", "tpot_p99_ms": "50 ms",
        "input_tokens": "512 tok/req", "output_tokens": "256 tokens",
        "context_length": "8k tok"}  # fmt: skip


def test_a_figure_written_with_its_fields_unit_is_read():
    review = review_card(CARD, BRIEF)
    assert review.errors == {}
    for label in ("Peak load", "p99 TTFT", "p99 TPOT", "Input length", "Output length"):
        assert label in review.pinned
    assert review.names["ttft_p99"] == "300 ms"  # typed as 0.3 s
    assert review.names["ctx_len"] == "8000 tok"


@pytest.mark.parametrize("typed", ["300 GB", "300 furlongs", "fast", "x = 3"])
def test_another_unit_is_refused_with_the_unit_the_field_wants(typed):
    with pytest.raises(ValueError, match=r"in ms"):
        parse_number(typed, unit="ms")


@pytest.mark.parametrize(
    ("typed", "unit", "value"),
    [("0.3 s", "ms", 300), ("300ms", "ms", 300), ("1,000", "QPS", 1000), ("50 QPS", "QPS", 50),
     ("32k", "tok", 32000), ("256 tok/req", "tok/req", 256)],
)  # fmt: skip
def test_the_napkin_calculator_reads_the_figure_and_converts_its_unit(typed, unit, value):
    assert parse_number(typed, unit=unit) == value


def test_the_submitted_card_reads_them_and_the_worksheet_has_their_names(client_in, attempt):
    response = client_in.post(
        step_url(attempt, "clarify", "submit"),
        {**CARD, "qps_kind": "peak", "text": "", "base_version": "0", "seconds": "0"},
    )
    assert response.status_code == 302
    page = client_in.get(step_url(attempt, "clarify")).content.decode()
    assert "Not read:" not in page
    estimate = client_in.get(step_url(attempt, "estimate")).content.decode()
    assert "<code>ttft_p99</code>" in estimate
