"""An answer one unit prefix step off: 1024 away with a binary prefix (64 MiB for 64 KiB), 1000
away with a decimal one (64 MB for 64 KB). The hint names the step, and only an answer within
the quantity's tolerance after that factor gets it."""

import pytest

from planner.engine import check_quantity


def check(expected: str, unit: str, answer: str, tolerance: float = 0.02):
    spec = {"id": "size", "label": "Size", "formula": "x", "unit": unit, "tolerance": tolerance}
    return check_quantity(spec, answer, {"x": expected})


@pytest.mark.parametrize(
    ("expected", "unit", "answer", "words", "kind"),
    [
        # 1024 is 2.4% from 1000: under a 2% tolerance only the binary step catches these.
        (
            "64 KiB",
            "KiB",
            "64 MiB",
            "Off by a factor of 1024: one prefix step off (MiB for KiB?)",
            "factor-1024",
        ),
        ("64 KiB", "KiB", "65536 KiB", "one prefix step off (MiB for KiB?)", "factor-1024"),
        ("64 KiB", "KiB", "64.5 MiB", "one prefix step off (MiB for KiB?)", "factor-1024"),
        (
            "64 MiB",
            "MiB",
            "64 KiB",
            "Off by a factor of 1024: one prefix step off (KiB for MiB?)",
            "factor-1024",
        ),
        ("4 GiB", "GiB", "4 TiB", "one prefix step off (TiB for GiB?)", "factor-1024"),
        # The decimal step names the prefixes too.
        (
            "64 KB",
            "KB",
            "64 MB",
            "Off by a factor of 1000: one prefix step off (MB for KB?)",
            "factor-1000",
        ),
        (
            "64 MB",
            "MB",
            "64 KB",
            "Off by a factor of 1000: one prefix step off (KB for MB?)",
            "factor-1000",
        ),
    ],
)
def test_one_prefix_step_off_is_named(expected, unit, answer, words, kind) -> None:
    result = check(expected, unit, answer)
    assert result.verdict == "known_mistake"
    assert words in result.hint
    assert result.mistake == kind


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        # A bare number is read in the box's unit: one 1024 times too large was counted in
        # bytes, one 1024 times too small in MiB.
        ("131072", "one prefix step off (B for KiB?)"),
        ("0.125", "one prefix step off (MiB for KiB?)"),
    ],
)
def test_a_bare_number_a_step_off_names_the_prefix_it_was_counted_in(answer, words) -> None:
    result = check("128 KiB", "KiB", answer)
    assert result.verdict == "known_mistake" and result.mistake == "factor-1024"
    assert words in result.hint


def test_the_binary_step_is_named_under_the_default_tolerance_too() -> None:
    # Within 5% the factor of 1000 also matches; the nearer factor, 1024, wins.
    result = check("64 KiB", "KiB", "64 MiB", tolerance=0.05)
    assert result.mistake == "factor-1024"
    assert "(MiB for KiB?)" in result.hint


@pytest.mark.parametrize(
    "answer",
    [
        "6400 KiB",  # 100 times
        "32 MiB",  # 512 times
        "66 MiB",  # 1056 times: 3.1% past 1024, past the 2% tolerance
        "128 MiB",  # 2048 times: two steps of the fraction, not one of the prefix
    ],
)
def test_an_answer_off_by_another_factor_gets_no_prefix_step_hint(answer) -> None:
    result = check("64 KiB", "KiB", answer)
    assert result.verdict == "wrong"
    assert "prefix step" not in result.hint
    assert result.hint.startswith("Not within tolerance")
