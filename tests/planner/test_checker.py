"""The checker: verdicts, generic mistakes named in hints, rounding, reveal, solving."""

from pathlib import Path

import pytest

from planner.engine import (
    FormulaError,
    NapkinError,
    check_quantity,
    evaluate,
    givens_from_estimate,
    solve_for,
)
from planner.questions import estimate_step, given_labels, read_front_matter

FIXTURE = Path(__file__).parent / "fixtures" / "questions" / "napkin-fixture.md"
ESTIMATE = estimate_step(read_front_matter(FIXTURE))
QUANTITIES = {q["id"]: q for q in ESTIMATE["quantities"]}


def check(quantity_id: str, answer: str, reveal: bool = False, **kwargs: object):
    return check_quantity(
        QUANTITIES[quantity_id],
        answer,
        givens_from_estimate(ESTIMATE, upto=quantity_id),
        reveal=reveal,
        given_labels=given_labels(ESTIMATE),
        **kwargs,
    )


# --- the seed's figures from the question's quantities --------------------------------------


def test_tpot_floor_quantity_is_21_5_ms() -> None:
    result = check("tpot_floor", "21.5 ms", reveal=True)
    assert result.verdict == "correct"
    assert result.expected == pytest.approx(21.5, abs=0.05)


def test_kv_per_token_quantity_is_56_kib() -> None:
    assert check("kv_per_token", "56 KiB", reveal=True).expected == 56


def test_kv_per_32k_stream_quantity_is_1_75_gib() -> None:
    assert check("kv_32k", "1.75 GiB", reveal=True).expected == pytest.approx(1.75)


def test_r_inst_quantity_is_7_8_req_s() -> None:
    result = check("r_inst", "7.8 req/s", reveal=True)
    assert result.verdict == "correct"
    assert result.expected == pytest.approx(7.8125)


def test_n_inst_quantity_is_10() -> None:
    assert check("n_inst", "10", reveal=True).expected == 10


# --- verdicts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quantity_id", "answer", "verdict"),
    [
        ("tpot_floor", "21.5 ms", "correct"),
        ("tpot_floor", "W / (eta * bw)", "correct"),
        ("tpot_floor", "0.0215 s", "correct"),
        ("tpot_floor", "21.5", "correct"),  # a bare number is read in the quantity's unit
        ("r_inst", "8.3 req/s", "close"),
        ("tpot_floor", "15 GB", "wrong_unit"),
        ("tpot_floor", "172 ms", "wrong"),
        ("n_inst", "10", "correct"),
        ("n_inst", "9.14", "not_rounded"),
        ("n_inst", "floor(9.14)", "not_rounded"),  # the right value, rounded the wrong way
        ("n_inst", "9", "close"),  # a bare whole number shows no rounding: judged on its value
        ("n_inst", "11", "close"),
        ("r_inst", "2000 tok/s", "known_mistake"),  # authored, of another dimension
        ("tpot_floor", "W / bw in ms", "known_mistake"),  # authored
    ],
)
def test_verdicts(quantity_id: str, answer: str, verdict: str) -> None:
    assert check(quantity_id, answer).verdict == verdict


def test_wrong_unit_hint_names_the_expected_dimension() -> None:
    result = check("tpot_floor", "15 GB")
    assert result.hint == "Expected time (in ms); your answer is bytes."


def test_wrong_unit_hint_for_a_count_names_no_unit() -> None:
    """A fleet size is a plain number: the hint says so once, not '(in a plain number)'."""
    result = check("n_inst", "15 GB")
    assert result.hint == "Expected a plain number; your answer is bytes."


def test_authored_mistake_hint() -> None:
    assert "efficiency" in check("tpot_floor", "15.1 ms").hint


# --- generic slips and the mistakes the fixture declares ------------------------------------


@pytest.mark.parametrize(
    ("quantity_id", "answer", "words"),
    [
        ("kv_per_token", "56 MiB", "Off by a factor of 1024: one prefix step off (MiB for KiB?)"),
        ("kv_32k", "1.75 GB", "(1024/1000)^3 = 1.074: decimal versus binary units (GB vs GiB)"),
        ("tpot_floor", "0.0215", "milliseconds versus seconds"),
        ("tpot_floor", "21540", "milliseconds versus seconds"),
        ("kv_per_token", "448 KiB", "bits versus bytes"),
        ("kv_per_token", "28 KiB", "K and V"),
        ("kv_per_token", "112 KiB", "K and V"),
        ("kv_per_token", "392 KiB", "query heads"),
        ("n_inst", "7", "utilisation target"),
        ("n_inst", "4", "mean traffic"),
        ("tpot_floor", "23.13 ms", "Check the unit of W (Weight bytes of Qwen2.5-7B in BF16)"),
    ],
)
def test_generic_mistakes_are_named(quantity_id: str, answer: str, words: str) -> None:
    result = check(quantity_id, answer)
    assert result.verdict == "known_mistake"
    assert words in result.hint


# --- reveal, worksheet names, errors -----------------------------------------------------------


def test_expected_only_when_revealed() -> None:
    assert check("n_inst", "9").expected is None
    assert "becomes" not in check("n_inst", "9").hint
    assert check("n_inst", "9", reveal=True).expected == 10


def test_answer_may_use_the_candidates_worksheet_names() -> None:
    env = {"my_r": evaluate("2000 tok/s / 256 tok/req")}
    assert check("n_inst", "ceil(qps_peak / (0.7 * my_r))", worksheet_env=env).verdict == (
        "correct"
    )


def test_broken_answer_raises_napkin_error() -> None:
    with pytest.raises(NapkinError) as caught:
        check("tpot_floor", "W / (eta *")
    assert caught.value.position == len("W / (eta *")


def test_broken_formula_is_an_authoring_error() -> None:
    with pytest.raises(FormulaError):
        check_quantity({"id": "x", "formula": "nope * 2", "unit": "ms"}, "1 ms", {})


def test_formula_unit_mismatch_is_an_authoring_error() -> None:
    with pytest.raises(FormulaError):
        check_quantity({"id": "x", "formula": "2 GB", "unit": "ms"}, "1 ms", {})


def test_earlier_quantity_ids_are_usable_rounded() -> None:
    givens = givens_from_estimate(ESTIMATE, upto="n_gpu")
    assert givens["n_inst"] == "ceil(qps_peak / (rho * r_inst))"
    assert check("n_gpu", "10", reveal=True).expected == 10


# --- solving for an unknown --------------------------------------------------------------------


def test_what_peak_qps_do_ten_instances_sustain() -> None:
    givens = givens_from_estimate(ESTIMATE, upto="n_inst")
    result = solve_for("ceil(qps_peak / (rho * r_inst))", "qps_peak", "10", givens)
    assert result.error is None
    assert result.unit == "req/s"
    assert result.value == pytest.approx(10 * 0.7 * 7.8125)


def test_solving_needs_a_reachable_target() -> None:
    givens = {"x": "2 GB"}
    assert solve_for("x * x / GB", "x", "-1 GB", givens).error
    assert solve_for("2 GB", "x", "1 GB", givens).error == "The formula does not use 'x'."
