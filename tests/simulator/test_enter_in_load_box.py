"""Enter in the panel's "Load (QPS)" box runs the first scenario, "Peak load", which runs at
the load typed: its result was titled "Peak load" at 2 QPS. A run at a load other than the
design's peak is named by the load it ran at."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from playwright.sync_api import expect

from tests.simulator.test_simulator_browser import PREDICTION, _bottlenecks_step

FIGURES = {
    "prefill_only": False, "ttft_p50_ms": 150, "ttft_p99_ms": 230, "tpot_p99_ms": 42.0,
    "goodput_share": 1.0, "shed": 0, "timed_out": 0, "failed": 0, "prefix_hit_rate": 0,
}  # fmt: skip


def result(label: str, qps: float, peak: float) -> str:
    saved = {
        "design": {"qps": qps, "plan": {"qps": peak}},
        "prediction": "p",
        "runs": [{"label": label, "verdict": "v", "figures": FIGURES}],
    }
    return render_to_string("simulator/_result.html", {"saved": saved, "charts": []})


def test_a_peak_load_run_below_the_peak_is_titled_by_its_load():
    page = result("peak load", qps=2, peak=50)
    assert '<h3 class="h4">Steady load at 2 QPS</h3>' in page
    assert '<th scope="row">steady load at 2 QPS</th>' in page
    assert "peak load" not in page.lower()


@pytest.mark.parametrize("label", ["peak load", "a replica dies at 30 s"])
def test_a_run_at_the_peak_or_of_another_scenario_keeps_its_title(label):
    page = result(label, qps=50, peak=50.0)
    assert f'<h3 class="h4">{label[0].upper()}{label[1:]}</h3>' in page
    assert "Steady load" not in result("a replica dies at 30 s", qps=2, peak=50)


@pytest.mark.browser
def test_enter_in_the_load_box_runs_at_that_load_and_says_so(browser, live_server_url):
    page, errors, _ = _bottlenecks_step(browser, live_server_url, "enterer")
    page.set_viewport_size({"width": 360, "height": 740})
    panel = page.locator("#simulator-panel")
    panel.locator("#sim-prediction").fill(PREDICTION)
    panel.locator("#sim-qps").fill("2")
    panel.locator("#sim-qps").press("Enter")
    expect(panel.locator(".sim-result h3")).to_have_text("Steady load at 2 QPS")
    expect(panel.locator(".sim-verdict").first).to_contain_text("2 QPS")
    assert errors == []
    page.context.close()
