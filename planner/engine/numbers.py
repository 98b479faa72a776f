"""How the engine writes a number for people: one rule for pages, commands and LaTeX."""

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
