"""What the checker says before a step is submitted about a count one away from the answer (it
names no count), and how it reads a price written with `$` in a box of money per something."""

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from planner.engine import check_quantity, evaluate_worksheet, givens_from_estimate
from planner.questions import (
    estimate_step,
    find_quantity,
    given_labels,
    question_path,
    read_front_matter,
)

Q1, TP70B, MOE = "chat-api-50qps", "tensor-parallel-70b-midrange", "moe-mixtral-serving"


def check(slug: str, quantity_id: str, answer: str, reveal: bool = False):
    estimate = estimate_step(read_front_matter(question_path(slug, Path(settings.CONTENT_DIR))))
    return check_quantity(
        find_quantity(estimate, quantity_id),
        answer,
        givens_from_estimate(estimate, upto=quantity_id),
        reveal=reveal,
        given_labels=given_labels(estimate),
    )


def names_number(hint: str, number: int) -> bool:
    return re.search(rf"(?<![\d.]){number}(?!\d|\.\d)", hint) is not None


# --- a whole number one away from a count ---------------------------------------------------


@pytest.mark.parametrize(
    ("slug", "quantity_id", "answer", "count"),
    [
        (TP70B, "tp_min", "2", 3),  # 2.084 GPUs' worth of weights, rounded up
        (TP70B, "max_streams", "45", 44),  # 44.66 streams, rounded down
        (Q1, "n_inst", "9", 10),  # 9.143 instances, rounded up
        (Q1, "max_seqs", "34", 33),  # 33.51 streams, rounded down
    ],
)
def test_a_bare_whole_number_one_away_does_not_give_the_count_away(
    slug: str, quantity_id: str, answer: str, count: int
) -> None:
    result = check(slug, quantity_id, answer)
    assert result.verdict != "not_rounded"
    assert not names_number(result.hint, count), result.hint
    assert "which gives" not in result.hint and "rounded up gives" not in result.hint


def test_a_bare_whole_number_is_judged_on_its_value() -> None:
    # 9 of 10 instances is 10% off: close, as any number that far off is; 8 is 20% off.
    assert check(Q1, "n_inst", "9").verdict == "close"
    assert check(Q1, "n_inst", "8").verdict == "wrong"


@pytest.mark.parametrize(
    ("slug", "quantity_id", "answer", "hint"),
    [
        (TP70B, "tp_min", "floor(2.084)",
         "2.084 rounded down gives 2, but this count must be rounded up."),
        (TP70B, "max_streams", "ceil(44.66)",
         "44.66 rounded up gives 45, but this count must be rounded down."),
        (Q1, "n_inst", "round(qps_peak / (rho * r_inst))",
         "9.143 rounded to the nearest whole number gives 9, but this count must be rounded up."),
    ],
)  # fmt: skip
def test_rounding_the_answer_shows_is_named_without_the_count(
    slug: str, quantity_id: str, answer: str, hint: str
) -> None:
    result = check(slug, quantity_id, answer)
    assert (result.verdict, result.hint) == ("not_rounded", hint)


def test_the_count_is_named_once_revealed() -> None:
    result = check(TP70B, "tp_min", "floor(2.084)", reveal=True)
    assert result.verdict == "not_rounded"
    assert result.hint.endswith("must be rounded up: 2.084 becomes 3.")


def test_a_bare_count_rounded_the_other_way_is_named_as_such_once_revealed() -> None:
    # Drills check with the count revealed: a bare 9 for 9.143 instances is the rounding slip
    # it is, and rated as one (Hard), not a miss.
    result = check(Q1, "n_inst", "9", reveal=True)
    assert (result.verdict, result.hint) == (
        "not_rounded",
        "9.143 rounded down gives 9, but this count must be rounded up, which gives 10.",
    )


def test_a_small_bare_count_one_off_is_not_blamed_on_a_known_mistake() -> None:
    # 1 for 1.6 instances equals what a known mistake gives: the rounding is what it shows.
    from drills import engine

    drill = engine.drill_generate("n_inst", 3)
    result = engine.drill_check(drill, str(int(drill.expected) - 1))
    assert result.verdict == "not_rounded", result.hint


def test_before_reveal_a_bare_count_rounded_the_other_way_is_told_as_its_distance_is() -> None:
    # 2 GPUs for 2.084 matched the 0.9-memory-share mistake by chance; 9 instances for 9.143
    # reads as 11 does, one either side of 10, so neither says which side the count is.
    result = check(TP70B, "tp_min", "2")
    assert (result.verdict, result.mistake) == ("wrong", None), result.hint
    nine, eleven = check(Q1, "n_inst", "9"), check(Q1, "n_inst", "11")
    assert (
        (nine.verdict, nine.hint)
        == (eleven.verdict, eleven.hint)
        == (
            "close",
            "Close, but more than 5% off; check the inputs you rounded.",
        )
    )


def test_a_value_far_from_the_right_one_rounded_the_other_way_is_not_called_rounding() -> None:
    # floor(2.9) is 2, but 2.9 is not the 2.084 this count is rounded from.
    result = check(TP70B, "tp_min", "floor(2.9)")
    assert result.verdict != "not_rounded"


def test_napkin_check_names_no_count_without_reveal() -> None:
    out = StringIO()
    call_command("napkin", "--check", Q1, "n_inst", "9", "--json", stdout=out)
    obj = json.loads(out.getvalue())
    assert "expected" not in obj and not names_number(obj["hint"], 10), obj


# --- a price written with `$` -----------------------------------------------------------------


@pytest.mark.parametrize("answer", ["$1.32", "1.32 USD", "$2.64 / 2", "1.32", "$1.32/Mtok"])
def test_a_price_per_million_tokens_written_in_usd_is_read_per_million_tokens(
    answer: str,
) -> None:
    result = check(MOE, "cost_mtok", answer)
    assert result.verdict == "correct", result.hint
    assert result.value == pytest.approx(1.32, abs=0.01) and result.unit == "USD/Mtok"


def test_the_reading_of_a_dollar_price_is_said() -> None:
    assert check(MOE, "cost_mtok", "$1.32").hint == (
        "USD with no per unit, so read in USD/Mtok: 1.32 USD/Mtok."
    )


HOURLY = {"id": "price", "label": "Fleet price", "formula": "4 * 2.5 USD/h", "unit": "USD/h"}
TOTAL = {"id": "total", "label": "Bill", "formula": "10 USD", "unit": "USD"}


def test_a_dollar_price_is_read_per_hour_in_a_box_of_usd_per_hour() -> None:
    assert check_quantity(HOURLY, "$10", {}).verdict == "correct"


def test_a_dollar_amount_in_a_box_of_usd_is_unchanged() -> None:
    result = check_quantity(TOTAL, "$10", {})
    assert (result.verdict, result.hint) == ("correct", "")


def test_an_amount_computed_with_other_units_is_not_read_per_the_box() -> None:
    # 10 USD/h times 1 h is a bill, not an hourly price: still another dimension, whether
    # written out, through a name that carries USD/h, or through a name for the bill itself.
    assert check_quantity(HOURLY, "$10/h * 1 h", {}).verdict == "wrong_unit"
    assert _check_named(HOURLY, "p * 1 h", "p = $10/h").verdict == "wrong_unit"
    assert _check_named(HOURLY, "bill", "bill = $10/h * 1 h").verdict == "wrong_unit"
    assert _check_named(HOURLY, "bill", "p = $10/h", "bill = p * 1 h").verdict == "wrong_unit"


def _env(*lines: str) -> dict:
    return {r.name: r.quantity for r in evaluate_worksheet(list(lines)) if r.name}


def _check_named(spec: dict, answer: str, *lines: str, lines_known: bool = True):
    return check_quantity(
        spec,
        answer,
        {},
        worksheet_env=_env(*lines),
        worksheet_lines=list(lines) if lines_known else None,
    )


# A price per Mtok: 6 GPUs at 2.5 USD/h serving 400 tok/s, 10.42 USD/Mtok. The hour's bill
# (15 USD) is a known mistake whose value is plain money.
PER_MTOK = {
    "id": "cost",
    "label": "Cost per million output tokens",
    "formula": "6 * 2.5 USD/h / (400 tok/s)",
    "unit": "USD/Mtok",
    "tolerance": 0.05,
    "mistakes": [
        {
            "formula": "6 * 2.5 USD/h * 1 h",
            "hint": "That is the bill for an hour; divide it by the tokens the hour serves.",
            "kind": "hourly-bill",
        }
    ],
}


@pytest.mark.parametrize("lines_known", [True, False])
@pytest.mark.parametrize(
    "lines",
    [
        ("c = $2.5*8/4.7",),  # a price worked out on the worksheet
        ("c = 4.255 USD",),
        ("gpu = $2.5", "c = gpu*8/4.7"),  # through another name worth money
    ],
)
def test_a_worksheet_name_worth_money_alone_is_read_as_the_inline_price(
    lines: tuple[str, ...], lines_known: bool
) -> None:
    spec = {"id": "cost", "label": "Cost", "formula": "20 USD/Mtok / 4.7", "unit": "USD/Mtok"}
    inline = check_quantity(spec, "$2.5*8/4.7", {})
    named = _check_named(spec, "c", *lines, lines_known=lines_known)
    assert inline.verdict == named.verdict == "correct", named.hint
    assert named.value == pytest.approx(4.255, abs=0.001) and named.unit == "USD/Mtok"
    assert named.hint == inline.hint == "USD with no per unit, so read in USD/Mtok: 4.255 USD/Mtok."


def test_a_dollar_name_is_read_per_hour_in_a_box_of_usd_per_hour() -> None:
    assert _check_named(HOURLY, "bill", "bill = $10").verdict == "correct"
    assert _check_named(HOURLY, "bill * 2 / 2", "bill = $10").verdict == "correct"


@pytest.mark.parametrize("answer", ["$15", "15 USD", "$15.4", "bill"])
def test_a_known_mistake_worth_plain_money_matches_a_price_read_per_the_box(answer: str) -> None:
    # `$15` reads as 15 USD/Mtok, which is what the candidate meant; the mistake is the 15 USD
    # bill for an hour, read the same way.
    result = _check_named(PER_MTOK, answer, "bill = 6 * $2.5")
    assert (result.verdict, result.mistake) == ("known_mistake", "hourly-bill"), result.hint
    assert result.hint.startswith("That is the bill for an hour")
    assert result.value == pytest.approx(float(answer.strip("$ USD")) if answer != "bill" else 15)


def test_the_right_price_in_dollars_is_not_taken_for_the_plain_money_mistake() -> None:
    result = check_quantity(PER_MTOK, "$10.42", {})
    assert result.verdict == "correct", result.hint
    assert check_quantity(PER_MTOK, "$30", {}).verdict == "wrong"


@pytest.mark.parametrize("answer", ["$93.6 / 1100", "cost_night / 1100", "$93.6 / 1090"])
def test_a_price_worked_out_in_dollars_is_not_taken_for_a_slip(answer: str) -> None:
    # The night's bill over the night's 1,100 Mtok, in dollars: read per Mtok, it is the price
    # (or within tolerance of it), and no input of its was left out.
    result = check("offline-batch-summaries", "cost_mtok_all", answer)
    assert result.verdict == "correct", (result.verdict, result.hint)
