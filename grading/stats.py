"""Summary statistics over latency samples, shared by the /grader/ page and the benches."""

from __future__ import annotations

import math


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0..100) by nearest rank; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[rank]
