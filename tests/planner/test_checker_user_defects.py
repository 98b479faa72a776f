"""What a new user met in the checker: two slips that cancel passed as correct, and a count
rounded the wrong way was called the right value. Against the shipped questions."""

from pathlib import Path

import pytest
from django.conf import settings

from planner.engine import check_quantity, evaluate_worksheet, givens_from_estimate
from planner.engine.errors import NapkinError
from planner.engine.worksheet import evaluate
from planner.questions import (
    estimate_step,
    find_quantity,
    given_labels,
    question_path,
    read_front_matter,
)

Q1, Q3 = "chat-api-50qps", "long-context-rag"


def check(slug: str, quantity_id: str, answer: str, worksheet: str = "", reveal: bool = False):
    estimate = estimate_step(read_front_matter(question_path(slug, Path(settings.CONTENT_DIR))))
    givens = givens_from_estimate(estimate, upto=quantity_id)
    lines = worksheet.split("\n") if worksheet else []
    env = {
        r.name: r.quantity
        for r in evaluate_worksheet(lines, givens_from_estimate(estimate))
        if r.name and r.quantity is not None
    }
    return check_quantity(
        find_quantity(estimate, quantity_id),
        answer,
        givens,
        reveal=reveal,
        worksheet_env=env,
        worksheet_lines=lines,
        given_labels=given_labels(estimate),
    )


# --- two slips that cancel ----------------------------------------------------------------------


def test_datasheet_memory_and_no_reserve_are_named_though_the_value_is_in_tolerance() -> None:
    # 24 GB x 0.9 - 5.5 GB = 16.1 GB, within 5% of the right 15.7 GB only because the two slips
    # (datasheet GB for the driver's 23.65 GiB, no runtime reserve) offset each other.
    result = check(Q3, "kv_pool", "24 GB * mem_util - W_awq")
    assert result.verdict == "known_mistake"
    assert result.mistake == "datasheet-memory"
    assert "24 GB is the datasheet figure" in result.hint
    assert "reserve" in result.hint.split("datasheet figure", 1)[1]


def test_the_same_slips_through_a_worksheet_line_are_named_too() -> None:
    result = check(Q3, "kv_pool", "usable - W_awq", worksheet="usable = 24 GB * mem_util")
    assert (result.verdict, result.mistake) == ("known_mistake", "datasheet-memory")


def test_a_worksheet_name_whose_line_is_not_shown_is_judged_on_its_value() -> None:
    estimate = estimate_step(read_front_matter(question_path(Q3, Path(settings.CONTENT_DIR))))
    env = {r.name: r.quantity for r in evaluate_worksheet(["usable = 24 GB * 0.9"])}
    result = check_quantity(
        find_quantity(estimate, "kv_pool"),
        "usable - W_awq",
        givens_from_estimate(estimate, upto="kv_pool"),
        worksheet_env=env,
    )
    assert result.verdict == "correct"


@pytest.mark.parametrize(
    "answer",
    [
        "vram * mem_util - W_awq - reserve",
        "23.65 GiB * 0.9 - 5.5 GB - 1.5 GiB",
        "25.4 GB * 0.9 - 5.5 GB - 1.6 GB",
        "24 GiB * mem_util - W_awq - reserve",
        "15.7 GB",
        "15.74",
    ],
)
def test_right_answers_with_names_or_numbers_stay_correct(answer: str) -> None:
    assert check(Q3, "kv_pool", answer).verdict == "correct"


def test_a_fleet_with_its_headroom_and_peak_stays_correct() -> None:
    assert check(Q1, "n_inst", "ceil(qps_peak / (rho * r_inst))").verdict == "correct"
    assert check(Q1, "n_inst", "ceil(50 / (0.7 * 7.8))").verdict == "correct"


# --- a count rounded the wrong way ------------------------------------------------------------


def test_a_count_rounded_down_is_not_called_the_right_value() -> None:
    # 50 / (0.7 x 7.8125) = 9.14 instances; 9 is not the answer, 9.14 rounds up to 10.
    result = check(Q1, "n_inst", "floor(qps_peak / (rho * r_inst))")
    assert result.verdict == "not_rounded"
    assert "Right value" not in result.hint
    assert result.hint == "9.143 rounded down gives 9, but this count must be rounded up."


def test_a_count_rounded_up_where_it_must_go_down_says_where_it_goes() -> None:
    result = check(Q1, "max_seqs", "ceil(33.51)")
    assert "Right value" not in result.hint
    assert result.hint == "33.51 rounded up gives 34, but this count must be rounded down."


# A candidate who floors their own value rounded the right way: a wrong whole number then
# comes from the value before rounding (8k tokens read as 8,000), not from the direction.
EIGHT_K = "\n".join(
    [
        "usable = 0.9 * 23.65 GiB - 5.5 GB - 1.5 GiB",
        "per_seq = 56 KiB * 8k",
        "n = floor(usable / per_seq)",
    ]
)


@pytest.mark.parametrize("answer", ["floor(usable / per_seq)", "n", "(n)"])
def test_a_count_floored_from_a_wrong_value_is_not_said_to_be_rounded_up(answer: str) -> None:
    result = check(Q1, "max_seqs", answer, worksheet=EIGHT_K)
    assert (result.verdict, result.value) == ("close", 34.0)
    assert "rounded up" not in result.hint
    assert "check the inputs you rounded" in result.hint


def test_a_count_rounded_up_without_rho_is_named_though_it_is_the_floor_of_the_right_value():
    # 10 QPS / 4 req/s = 2.5, rounded up 3: rho forgotten. 3 is also 3.57 rounded down, which
    # only an answer that rounds 3.57 itself shows.
    for answer, worksheet in (("ceil(10 QPS / (4 QPS))", ""), ("n", "n = ceil(10 QPS / (4 QPS))")):
        result = check(Q3, "n_inst", answer, worksheet=worksheet)
        assert (result.verdict, result.mistake) == ("known_mistake", "utilisation-target")
    assert check(Q3, "n_inst", "floor(3.57)").verdict == "not_rounded"


def test_the_value_before_rounding_is_the_counts_own() -> None:
    # n_inst = 10 QPS / (0.7 x 16 streams / 4 s) = 3.571: the 16 streams are whole, so the
    # hint never quotes 3.41 (the value with 16.76 streams, which nobody computes).
    revealed = check(Q3, "n_inst", "3.57", reveal=True)
    assert revealed.verdict == "not_rounded" and revealed.hint.endswith("3.571 becomes 4.")
    # Where the count's own value is whole (10 instances x TP 1), the one before rounding is.
    assert check(Q1, "n_gpu", "9.14", reveal=True).hint.endswith("9.143 becomes 10.")


def test_a_worksheet_name_defined_from_itself_is_judged_on_its_value() -> None:
    worksheet = "usable = 24 GB * mem_util\nusable = usable * 1"
    assert check(Q3, "kv_pool", "usable - W_awq", worksheet=worksheet).verdict == "correct"


# A count of tokens or requests written out, or left off, where the box asks for the quantity
# without it (drill and question boxes ask for a TPOT in ms, KV bytes per token in KiB).
TPOT = {"id": "tpot", "label": "TPOT floor", "formula": "W / bw", "unit": "ms"}
RATE = {"id": "r", "label": "r_inst", "formula": "10 req / (3.4 s)", "unit": "req/s"}
COUNT_GIVENS = {"W": "16 GB", "bw": "3.35 TB/s"}


@pytest.mark.parametrize(
    ("spec", "answer", "read"),
    [
        (TPOT, "4.776 ms/tok", "read as 4.776 ms, the unit asked for: tokens count as 1"),
        (TPOT, "4.776 ms/req", "read as 4.776 ms, the unit asked for: requests count as 1"),
        (RATE, "2.94 /s", "read as 2.94 req/s, the unit asked for: requests count as 1"),
    ],
)
def test_a_count_written_out_or_left_off_is_read_in_the_unit_asked_for(spec, answer, read):
    result = check_quantity(spec, answer, COUNT_GIVENS)
    assert result.verdict == "correct" and read in result.hint


@pytest.mark.parametrize(
    ("spec", "answer", "verdict"),
    [
        (TPOT, "9 ms/tok", "wrong"),  # read across, then judged on its value as ever
        (TPOT, "4.776 ms/tok^2", "wrong_unit"),  # two counts apart is another quantity
        (TPOT, "4.776 tok", "wrong_unit"),
        (RATE, "2.94 tok/s", "wrong_unit"),  # tokens for requests is not a count left off
    ],
)
def test_other_dimensions_are_still_judged_as_before(spec, answer, verdict):
    assert check_quantity(spec, answer, COUNT_GIVENS).verdict == verdict


def test_a_request_read_as_one_in_the_box_says_how_the_worksheet_takes_it() -> None:
    # The box accepts the number; the worksheet keeps requests as a unit, so the note says how
    # to write the same value there. A count of tokens read as 1 needs no such note.
    said = check_quantity(RATE, "2.94 /s", COUNT_GIVENS).hint
    assert "On the worksheet requests stay a unit: write the 1 req out" in said
    assert "On the worksheet" not in check_quantity(TPOT, "4.776 ms/tok", COUNT_GIVENS).hint


@pytest.mark.parametrize(
    "expression",
    ["15552 tok/req + 120 tok", "120 tok - 15552 tok/req", "max(2 s/req, 1 s)"],
)
def test_a_per_request_amount_beside_a_total_on_the_worksheet_says_how_to_cross(expression):
    with pytest.raises(NapkinError, match="multiply the per-request amount by 1 req"):
        evaluate(expression, {})


@pytest.mark.parametrize(
    ("expression", "hint"),
    [
        # Prefill FLOPs with the prompt in tokens: the attention term counts token pairs.
        (
            "2 * 7e9 * 512 tok + 2 * 28 * 3584 * (512 tok)^2",
            "The tokens × tokens side has one more factor of tokens: divide it by 1 tok (or "
            "multiply the other by 1 tok).",
        ),
        (
            "(512 tok)^2 - 512 tok",
            "The tokens × tokens side has one more factor of tokens: divide it by 1 tok",
        ),
        ("1/s + 2 req/s", "The requests per time side has one more factor of requests"),
    ],
)
def test_two_amounts_a_count_apart_on_the_worksheet_say_which_side_to_divide(expression, hint):
    with pytest.raises(NapkinError) as refused:
        evaluate(expression, {})
    assert hint in str(refused.value)


@pytest.mark.parametrize("expression", ["1 GB + 1 GB/s", "2 s + 3 s^2", "3 req + 4 tok"])
def test_amounts_a_time_or_two_counts_apart_get_no_advice_to_cross_by_one_unit(expression):
    # 1 s is no neutral amount of time, and tokens for requests is another quantity.
    with pytest.raises(NapkinError) as refused:
        evaluate(expression, {})
    assert str(refused.value).endswith(")."), str(refused.value)


@pytest.mark.parametrize("expression", ["1/s + 2 req/s", "3 req + 4", "3 req + 4 tok"])
def test_other_mismatches_on_the_worksheet_get_no_per_request_advice(expression):
    with pytest.raises(NapkinError) as refused:
        evaluate(expression, {})
    assert "per-request amount" not in str(refused.value)
