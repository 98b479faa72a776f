"""The checker's decimal-versus-binary hints claim only what the answer and the givens show: a
given read with the wrong prefix is one written with that prefix, and a slip of 1.024 is named
only for an answer near the slipped value itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from drills import engine
from planner.engine import check_quantity, givens_from_estimate
from planner.engine.errors import NapkinError
from planner.engine.parser import parse_line
from planner.engine.worksheet import evaluate_line
from planner.questions import (
    estimate_step,
    find_quantity,
    given_labels,
    question_path,
    read_front_matter,
)

# Llama-3.1-8B's KV per token: 2 × 32 × 8 × 128 × 2 B = 128 KiB; the drill judges it within 1%.
KV_SEED = 560999675650596


def chat_api(quantity_id: str, answer: str):
    estimate = estimate_step(
        read_front_matter(question_path("chat-api-50qps", Path(settings.CONTENT_DIR)))
    )
    return check_quantity(
        find_quantity(estimate, quantity_id),
        answer,
        givens_from_estimate(estimate, upto=quantity_id),
        given_labels=given_labels(estimate),
    )


def kv_drill():
    drill = engine.drill_generate("kv_per_token", KV_SEED)
    assert drill.expected == 128
    assert dict((g.name, g.value) for g in drill.givens)["kv_bytes"] == "2 B"
    return drill


# --- A given read with the wrong prefix


def test_a_given_in_plain_bytes_is_never_read_with_a_prefix_in_a_question():
    result = chat_api("kv_per_token", "60.1 KiB")
    assert result.mistake != "input-unit"
    assert "Check the unit of kv_bytes" not in result.hint


def test_a_given_in_plain_bytes_is_never_read_with_a_prefix_in_a_drill():
    result = engine.drill_check(kv_drill(), "138")
    assert result.mistake != "input-unit"
    assert "Check the unit of" not in result.hint


def spec(formula: str, unit: str, tolerance: float = 0.01) -> dict:
    return {"id": "x", "formula": formula, "unit": unit, "tolerance": tolerance}


def test_a_given_in_gib_read_as_gb_names_the_prefix_it_carries():
    # 24 GiB read as 24 GB, less 5 GB: 19 GB where 20.77 GB is right.
    givens = {"vram": "24 GiB", "W": "5 GB"}
    result = check_quantity(spec("vram - W", "GB"), "19 GB", givens)
    assert result.mistake == "input-unit", result.hint
    assert "its value is in GiB, and reading it as GB moves it by a factor of 1.074" in (
        result.hint
    )


def test_a_given_in_mb_is_read_one_prefix_step_off_not_three():
    # 80 MB read as 80 MiB is 1.049 larger, the step its MB carries; a GB-vs-GiB reading of
    # it (1.074) or a KB-vs-KiB one (1.024) is a prefix it does not carry.
    givens = {"adapter": "80 MB", "base": "1000 MB"}
    quantity = spec("base + adapter * 10", "MB", 0.005)
    result = check_quantity(quantity, f"{1000 + 800 * 1.024**2:.3f} MB", givens)
    assert result.mistake == "input-unit", result.hint
    assert "its value is in MB, and reading it as MiB moves it by a factor of 1.049" in (
        result.hint
    )
    for wrong in (1000 + 800 * 1.024**3, 1000 + 800 * 1.024):
        result = check_quantity(quantity, f"{wrong:.3f} MB", givens)
        assert result.mistake != "input-unit", result.hint


def test_a_rate_given_in_gb_per_s_names_its_unit_as_written():
    result = check_quantity(
        spec("W / bw", "ms"),
        f"{15.2e9 / (1008 * 1024**3) * 1000:.4f} ms",
        {"W": "15.2 GB", "bw": "1008 GB/s"},
    )
    assert result.mistake == "input-unit", result.hint
    assert "Check the unit of bw: its value is in GB/s, and reading it as GiB/s" in result.hint


def test_a_given_in_kib_is_never_said_to_be_in_gb():
    givens = {"page": "16 KiB", "head": "100 KiB"}
    quantity = spec("head + page * 4", "KiB", 0.002)
    result = check_quantity(quantity, f"{100 + 64 / 1.024**3:.3f} KiB", givens)
    assert "GB" not in result.hint and "GiB" not in result.hint, result.hint
    result = check_quantity(quantity, f"{100 + 64 / 1.024:.3f} KiB", givens)
    assert result.mistake == "input-unit", result.hint
    assert "its value is in KiB, and reading it as KB moves it by a factor of 1.024" in (
        result.hint
    )


# --- A slip of 1.024 claimed only near the slipped value


@pytest.mark.parametrize(("answer", "verdict"), [
    ("125", "known_mistake"),  # 128 / 1.024
    ("126", "close"),  # 1.6% off, nearer 125 but not near it
    ("127", "correct"),
    ("129", "correct"),
    ("130", "close"),  # 130 / 128 = 1.016, not the 1.024 the slip would say
    ("131", "known_mistake"),  # 128 × 1.024 = 131.07
    ("131.072", "known_mistake"),
])  # fmt: skip
def test_a_kb_for_kib_slip_is_claimed_only_near_the_slipped_value(answer, verdict):
    result = engine.drill_check(kv_drill(), answer)
    assert result.verdict == verdict, result.hint
    if verdict == "known_mistake":
        assert result.mistake == "gb-vs-gib"
        assert "(1024/1000)^1 = 1.024" in result.hint
    else:
        assert "1.024" not in result.hint


def test_an_answer_past_a_wide_tolerance_is_not_blamed_on_a_slip_that_would_pass():
    # Under 5% a KB-vs-KiB slip (2.4%) would itself be accepted; 6% off is close, not a slip.
    result = check_quantity(spec("x0 * 1", "KiB", 0.05), "106 KiB", {"x0": "100 KiB"})
    assert result.verdict == "close", result.hint


def test_the_gb_for_gib_slip_is_still_named_at_its_own_value():
    result = check_quantity(
        spec("kv * 1", "GiB", 0.05), f"{1.75 * 1.024**3:.3f}", {"kv": "1.75 GiB"}
    )
    assert result.mistake in ("gb-vs-gib", "input-unit"), result.hint
    assert "1.074" in result.hint


def test_a_declared_mistake_keeps_the_quantitys_own_tolerance():
    quantity = {
        **spec("a * 2", "GB", 0.05),
        "mistakes": [{"formula": "a * 2.2", "hint": "Declared.", "kind": "declared"}],
    }
    # 4.5 GB is 2.3% from the declared 4.4 GB and 12.5% from 4 GB: within 5% of the mistake.
    result = check_quantity(quantity, "4.5 GB", {"a": "2 GB"})
    assert (result.verdict, result.mistake) == ("known_mistake", "declared")


# --- An overflowing power names its size


@pytest.mark.parametrize("text", ["huge = 10^10^10", "10^10^10^10"])
def test_an_overflowing_power_names_its_power_of_ten_exactly(text):
    line = parse_line(text)
    with pytest.raises(NapkinError) as caught:
        evaluate_line(line, {})
    assert "about 1e10000000000," in caught.value.message


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("24 GiB", [("GiB", "GB", 3)]),
        ("1008 GB/s", [("GB/s", "GiB/s", 3)]),
        ("1 GB^2", [("GB^2", "GiB^2", 6)]),  # misread twice over: 1.024^6
        ("2 B", []),
        # A sum or quotient of terms has no one unit whose misreading scales the whole given.
        ("24 GiB + 512 MiB", []),
        ("1/(2 GB)", []),
    ],
)
def test_a_prefix_slip_is_read_from_a_given_that_is_one_number_with_its_unit(given, expected):
    from planner.engine.checker import _written_prefixes

    assert [(p.written, p.swapped, p.n) for p in _written_prefixes(given)] == expected


def test_a_gb_figure_two_and_a_half_percent_off_is_close_not_a_kb_slip():
    """A figure in GB 1.024 away from the right one, under a 2% tolerance, is as likely a
    rounding as a KB-for-KiB slip deep in a chain: it is told close. The slip of the value's
    own prefix (GB for GiB, 1.074) is still named."""
    drill = engine.drill_generate("weights", 1)
    assert drill.unit == "GB" and drill.quantity.get("tolerance", 0.02) == 0.02
    rounded = engine.drill_check(drill, f"{drill.expected / 1.024:.2f} GB")
    assert (rounded.verdict, rounded.mistake) == ("close", None)
    assert "KiB" not in rounded.hint
    mixed = engine.drill_check(drill, f"{drill.expected / 1.024**3:.2f} GB")
    assert (mixed.verdict, mixed.mistake) == ("known_mistake", "gb-vs-gib")
    assert "GB vs GiB" in mixed.hint
