"""How the engine writes a number for people (one rule for pages, commands and LaTeX), and
which digits it reads."""

from __future__ import annotations

import math


def format_number(x: float) -> str:
    """About four significant digits, all integer digits kept: 21.54, 7.812, 57344, 1.2e12."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    magnitude = abs(x)
    if magnitude >= 1e6 or magnitude < 1e-3:
        # .3e, not .4g: .4g writes 1.1e-4 without an exponent.
        mantissa, _, exponent = f"{x:.3e}".partition("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    decimals = max(0, 3 - math.floor(math.log10(magnitude)))
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_figure(x: float) -> str:
    """`x` as the planner's sentences print a figure: a whole number with thousands separators
    (10,000,000), any other to about four significant digits (0.7, 1e-4)."""
    return f"{x:,.0f}" if float(x).is_integer() else format_number(x)


def foreign_digit(text: str) -> str | None:
    """The first digit in `text` other than 0-9, or None. Python's int() and float() read any
    script's digits ("٥٠" as 50, "５０" too) and the worksheet's parser reads only 0-9: every box
    a number is typed in reads as the worksheet does."""
    return next((ch for ch in text if ch.isdigit() and not ch.isascii()), None)
