"""Runs that come out alike or nearly empty say why: a latency chart whose run has one bin to
judge draws it as a dot (a line through one point draws nothing), an autoscaler that adds no
replica to a fleet at the page's replica cap says the cap is why, and routers compared on one
replica say that one replica takes every request."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from simulator.charts import RUN_CSS, tpot_chart, ttft_chart
from simulator.engine import NEVER, verdict
from simulator.services import PAGE_LIMITS, RunSpec, page_run, page_scenarios
from tests.simulator.bank import reference_design

SLUG = "chat-api-50qps"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def design():
    return reference_design(SLUG)


def _run(bins: list, label: str = "run") -> dict:
    return {
        "label": label,
        "verdict": "",
        "figures": {},
        "params": {"seconds": 15.0, "ttft_slo_ms": 300.0, "tpot_slo_ms": 50.0},
        "ttft_bins": bins,
        "tpot_bins": bins,
    }


def _run_lines(chart) -> list[dict]:
    """The chart's paths that draw a run (not the SLO or an event line)."""
    return [p for p in chart.paths if p["css"].split()[0] in {c.split()[0] for c in RUN_CSS}]


@pytest.mark.parametrize("draw", [ttft_chart, tpot_chart])
@pytest.mark.parametrize("value", [0.1, NEVER, math.inf])
def test_a_run_with_one_bin_to_judge_is_a_dot_with_the_lines_title(draw, value):
    chart = draw([_run([[0, None], [5, value], [10, None]], label="peak load")])
    (line,) = _run_lines(chart)
    # A zero-length subpath: what sim-dot's round caps draw as a dot.
    assert line["d"].endswith("h0") and line["d"].count("M") == 1 and "L" not in line["d"]
    assert "sim-dot" in line["css"].split()
    assert line["label"] == "peak load"


def test_a_run_with_two_bins_is_still_a_line():
    chart = ttft_chart([_run([[0, 0.1], [5, None], [10, 0.2]])])
    (line,) = _run_lines(chart)
    assert "L" in line["d"] and "sim-dot" not in line["css"]


def test_the_dot_keeps_each_compared_runs_style():
    one = _run([[0, None], [5, 0.1], [10, None]], label="a")
    other = _run([[0, 0.1], [5, None], [10, None]], label="b")
    lines = _run_lines(ttft_chart([one, other]))
    assert [p["css"] for p in lines] == [f"{css} sim-dot" for css in RUN_CSS]


def test_one_request_at_the_least_load_is_drawn(design):
    # The panel's seed sends one request in 240 s at the least load the panel takes.
    run = page_run(design, RunSpec(seconds=240, replicas=1, qps=0.001, label="one"))
    assert run["figures"]["arrived"] == 1
    (line,) = _run_lines(ttft_chart([run]))
    assert "sim-dot" in line["css"]


def test_the_dot_is_drawn_wide_with_round_caps_by_the_stylesheet():
    css = (ROOT / "simulator/static/simulator/simulator.css").read_text()
    rule = css[css.index("path.sim-dot") :].split("}")[0]
    assert "stroke-linecap: round" in rule and "stroke-width" in rule


def test_an_autoscaler_at_the_replica_cap_says_the_cap_is_why():
    # Long prompts: a load that 64 replicas cannot carry is within the page's QPS limit.
    heavy = reference_design("long-context-rag")
    # Twice the load 64 of its replicas are sized for, doubled again by the burst.
    qps = 2 * PAGE_LIMITS.replicas * heavy.qps / heavy.replicas
    (utilisation, queue) = page_scenarios(heavy)["autoscaling"]["runs"]
    runs = [
        page_run(
            heavy,
            replace(spec, replicas=PAGE_LIMITS.replicas, qps=qps),
        )
        for spec in (utilisation, queue)
    ]
    for run in runs:
        assert not run["figures"]["replicas_added_at_s"]
        assert "adds no replica" in run["verdict"], run["verdict"]
        assert f"already at the {PAGE_LIMITS.replicas}-replica cap" in run["verdict"]

        # The same run judged with room above it names no cap.
        params = run["params"]
        roomy = verdict(
            run["figures"],
            qps=params["qps"],
            replicas=params["replicas"],
            ttft_slo_ms=params["ttft_slo_ms"],
            tpot_slo_ms=params["tpot_slo_ms"],
            autoscale=params["autoscale"],
            burst_at=params["burst_at"],
            max_replicas=2 * params["replicas"],
        )
        assert "adds no replica" in roomy and "cap" not in roomy, roomy


def test_routers_compared_on_one_replica_say_why_they_are_alike(design):
    specs = page_scenarios(design)["routing"]["runs"]
    runs = [page_run(design, replace(spec, replicas=1, qps=1.0)) for spec in specs]
    assert runs[0]["figures"]["ttft_p99_ms"] == runs[1]["figures"]["ttft_p99_ms"]
    for run in runs:
        assert "With one replica every request goes to it" in run["verdict"], run["verdict"]
        assert "the routers differ only across replicas" in run["verdict"]


def test_routers_compared_on_two_replicas_say_nothing_of_one(design):
    spec = page_scenarios(design)["routing"]["runs"][0]
    run = page_run(design, replace(spec, replicas=2, qps=1.0))
    assert "With one replica" not in run["verdict"]
