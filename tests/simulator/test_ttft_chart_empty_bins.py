"""The p99 TTFT chart at low load: a 5 s bin no request arrived in is a gap in the line, not a
breach drawn along the top edge; a bin whose requests never got a first token is still drawn
off the chart. The engine's bins say which is which (None, math.inf), and so do the saved runs
the chart draws (None, NEVER)."""

from __future__ import annotations

import math

import pytest

from simulator.charts import ttft_chart
from simulator.engine import NEVER
from simulator.services import RunSpec, fleet_run
from tests.simulator.bank import reference_design

SLUG = "chat-api-50qps"


@pytest.fixture(scope="module")
def design():
    return reference_design(SLUG)


def _points(chart) -> list[tuple[float, float]]:
    """The (x, y) points of the chart's first line."""
    d = chart.paths[0]["d"]
    return [tuple(map(float, p.split(","))) for p in d[1:].split("L")]


def _off_note(chart) -> bool:
    return any(n["text"].startswith("▲ off the chart") for n in chart.notes)


def test_a_run_that_holds_at_low_load_draws_no_breach(design):
    run = fleet_run(design, RunSpec(seconds=240, replicas=64, qps=0.5, label="light load"))
    assert run["figures"]["holds_slo"], run["verdict"]
    # Some 5 s bins at 0.5 QPS have no arrival: saved as gaps, not as bins off the chart.
    bins = [p for _, p in run["ttft_bins"]]
    assert None in bins and NEVER not in bins
    chart = ttft_chart([run])
    assert not _off_note(chart)
    assert all(y > chart.plot_top for _, y in _points(chart))
    assert len(_points(chart)) == sum(p is not None for p in bins)


def test_a_run_with_almost_no_arrivals_draws_no_breach(design):
    run = fleet_run(design, RunSpec(seconds=240, replicas=64, qps=0.01, label="light load"))
    chart = ttft_chart([run])
    assert not _off_note(chart)
    assert all(y > chart.plot_top for _, y in _points(chart))


def test_an_overloaded_run_still_draws_the_requests_that_never_got_a_first_token(design):
    run = fleet_run(design, RunSpec(seconds=120, replicas=1, qps=50, label="overload"))
    assert not run["figures"]["holds_slo"]
    bins = [p for _, p in run["ttft_bins"]]
    assert NEVER in bins
    chart = ttft_chart([run])
    assert _off_note(chart)
    tops = [y for _, y in _points(chart) if y == chart.plot_top]
    assert len(tops) >= bins.count(NEVER)


def _run(bins: list) -> dict:
    return {
        "label": "run",
        "verdict": "",
        "figures": {},
        "params": {"seconds": 15.0, "ttft_slo_ms": 300.0},
        "ttft_bins": bins,
    }


def test_the_chart_tells_an_empty_bin_from_one_that_never_got_a_first_token():
    gap = ttft_chart([_run([[0, 0.1], [5, None], [10, 0.2]])])
    assert not _off_note(gap)
    assert len(_points(gap)) == 2
    assert all(y > gap.plot_top for _, y in _points(gap))
    # As saved (NEVER) or straight from the engine (math.inf): off the chart, at its top.
    for never in (NEVER, math.inf):
        off = ttft_chart([_run([[0, 0.1], [5, None], [10, never]])])
        assert _off_note(off)
        assert [y == off.plot_top for _, y in _points(off)] == [False, True]
