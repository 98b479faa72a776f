"""The load-test charts' text at a phone's width and a desktop's: every label inside its chart
(the axis's title below the heading above it, not over it), and an event's note clear of the
lines the runs draw."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS, save_screenshot
from tests.simulator.test_simulator_browser import PREDICTION, _bottlenecks_step

pytestmark = pytest.mark.browser

# Each chart's text and lines in page pixels: every <text> against its <svg>, and each event
# note against the runs' lines (the points of the paths drawn in the plot).
MEASURE = """
svg => {
  const box = r => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  const chart = box(svg.getBoundingClientRect());
  const texts = [...svg.querySelectorAll('text')].map(t => (
    {text: t.textContent, css: t.getAttribute('class'), ...box(t.getBoundingClientRect())}
  ));
  const m = svg.getScreenCTM();
  const points = [];
  for (const path of svg.querySelectorAll('path.pl-series, path.pl-bound')) {
    const length = path.getTotalLength();
    for (let at = 0; at <= length; at += 2) {
      const p = path.getPointAtLength(at);
      points.push({x: m.a * p.x + m.c * p.y + m.e, y: m.b * p.x + m.d * p.y + m.f});
    }
  }
  return {chart, texts, points};
}
"""


def _inside(inner: dict, outer: dict, slack: float = 0.5) -> bool:
    return (
        inner["left"] >= outer["left"] - slack
        and inner["right"] <= outer["right"] + slack
        and inner["top"] >= outer["top"] - slack
        and inner["bottom"] <= outer["bottom"] + slack
    )


@pytest.mark.parametrize("width", [360, 1280])
def test_the_charts_text_stays_in_its_chart_and_off_the_lines(browser, live_server_url, width):
    page, errors, _ = _bottlenecks_step(browser, live_server_url, f"charts{width}")
    page.set_viewport_size({"width": width, "height": 900})
    panel = page.locator("#simulator-panel")
    panel.locator("#sim-prediction").fill(PREDICTION)
    panel.get_by_role("button", name="Kill a replica").click()
    charts = panel.locator("svg.pl-svg")
    expect(charts).to_have_count(4)
    charts.first.scroll_into_view_if_needed()
    save_screenshot(page, f"simulator-chart-text-{width}")
    for k in (0, 3):  # the first chart and the last, close up
        charts.nth(k).locator("xpath=..").screenshot(
            path=str(ARTIFACTS / f"simulator-chart-text-{width}-{k}.png")
        )
    notes = 0
    for k in range(charts.count()):
        drawn = charts.nth(k).evaluate(MEASURE)
        for text in drawn["texts"]:
            assert _inside(text, drawn["chart"]), (k, text, drawn["chart"])
            if "pl-pool" in (text["css"] or ""):  # the note of the replica's death
                notes += 1
                on = [
                    p
                    for p in drawn["points"]
                    if text["left"] <= p["x"] <= text["right"]
                    and text["top"] <= p["y"] <= text["bottom"]
                ]
                assert not on, (k, text, on[:3])
    assert notes == 4  # one on each chart
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert errors == []
    page.context.close()
