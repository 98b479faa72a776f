"""What a QA walk of the vision-language-api bottlenecks step found: the 2x-load verdict
said the load before the burst, not the one the SLO broke at, beside a TTFT chart that showed
nothing wrong while the verdict blamed TPOT; goodput read 99.9% in the verdict and 100% in
the table; the routing comparison named one router of two; the charts' text was 5 px on a
phone."""

from __future__ import annotations

import html
import re

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from simulator.models import SimulationRun

VL = "vision-language-api"
PREDICTION = "At twice the load the decode batch grows and p99 TPOT passes its SLO."


def run(client, attempt, **post) -> str:
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    response = client.post(url, {"prediction": PREDICTION} | post)
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def chart_titles(page: str) -> list[str]:
    return re.findall(r'<title id="[^"]*-title">([^<]+)</title>', page)


def test_the_2x_load_verdict_says_the_load_the_slo_broke_at_and_charts_the_tpot_it_blames(
    start,
):
    client, begin = start
    attempt = begin(VL)
    page = run(client, attempt, scenario="double-load", replicas="18", qps="40")
    saved = SimulationRun.objects.get(answer__attempt=attempt).runs[0]
    verdict = saved["verdict"]
    assert verdict.startswith("At 40 QPS, doubled to 80 QPS from 60 s, on 18 replicas"), verdict
    assert "p99 TPOT is" in verdict, verdict
    # The page charts the TPOT the verdict blames, beside the TTFT, against its SLO...
    assert chart_titles(page)[:2] == ["p99 TTFT over time", "p99 TPOT over time"]
    assert "SLO 50 ms" in page
    # ...and the TPOT it charts passes that SLO after the burst, not before it.
    before = [p for t, p in saved["tpot_bins"] if p is not None and t + 5 <= 30]
    after = [p for t, p in saved["tpot_bins"] if p is not None and t >= 90]
    assert max(before) * 1000 <= 50 < max(after) * 1000


def test_a_run_saved_without_tpot_bins_still_draws_its_charts():
    from simulator.charts import run_charts

    runs = [
        {
            "label": "peak load",
            "verdict": "Holds.",
            "params": {"seconds": 10, "ttft_slo_ms": 800, "tpot_slo_ms": 50},
            "figures": {"prefill_only": False},
            "ttft_bins": [[0, 0.2], [5, 0.3]],
            "series": [[0, 0, 1, 2], [5, 1, 1, 2]],
        }
    ]
    titles = [c.title for c in run_charts(runs)]
    assert titles == ["p99 TTFT over time", "Requests waiting", "Replicas serving"]
    tpot = run_charts([runs[0] | {"tpot_bins": [[0, 0.03], [5, None]]}])[1]
    assert tpot.title == "p99 TPOT over time"
    assert tpot.paths[0]["d"].count("L") == 0  # the bin where none finished is not drawn


@pytest.mark.parametrize(
    ("share", "text"),
    [(1.0, "100%"), (0.9998, "99.9%"), (0.9995, "99.9%"), (0.23, "23%"), (0.5004, "50%"),
     (0.0001, "0.1%"), (0.0, "0%")],
)  # fmt: skip
def test_goodput_reads_one_way_and_never_100_for_a_run_that_lost_requests(share, text):
    from simulator.engine import goodput_text

    assert goodput_text(share) == text


def test_the_table_rounds_goodput_as_the_verdict_does():
    figures = {
        "prefill_only": False, "ttft_p50_ms": 150, "ttft_p99_ms": 230, "tpot_p99_ms": 42.0,
        "goodput_share": 0.99975, "shed": 0, "timed_out": 0, "failed": 2, "prefix_hit_rate": 0,
    }  # fmt: skip
    saved = {
        "design": {},
        "prediction": "p",
        "runs": [{"label": "a replica dies", "verdict": "v", "figures": figures}],
    }
    page = render_to_string("simulator/_result.html", {"saved": saved, "charts": []})
    cells = re.findall(r'<td class="pl-num">([^<]*)</td>', page)
    assert "99.9%" in cells and "100%" not in cells, cells


def test_the_routing_comparison_names_both_routers_in_its_verdicts(start):
    client, begin = start
    attempt = begin(VL)
    run(client, attempt, scenario="routing", replicas="18", qps="40")
    saved = SimulationRun.objects.get(answer__attempt=attempt)
    first, second = (r["verdict"] for r in saved.runs)
    # Each names its router first, then the traffic both send (its repeated images).
    assert re.search(r"18 replicas \(round-robin[;)]", first), first
    assert re.search(r"18 replicas \(prefix-aware[;)]", second), second
    # The scorecard shows the verdicts saved with the run.
    page = html.unescape(
        client.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
    )
    assert "(round-robin;" in page and "(prefix-aware;" in page


def test_a_plain_run_on_round_robin_does_not_name_it():
    from simulator.services import RunSpec, scenario_text

    assert scenario_text(RunSpec(router="round-robin")) == ""
    assert scenario_text(RunSpec(router="round-robin", names_router=True)) == "round-robin"
    burst = RunSpec(router="prefix-aware", burst_at=60.0)
    assert scenario_text(burst) == "2× load from 60 s; prefix-aware"
    assert scenario_text(burst, burst=False) == "prefix-aware"


@pytest.mark.browser
def test_the_charts_text_stays_legible_on_a_phone(browser, live_server_url):
    """At 360 px a 640-unit chart is drawn at about 270 px: its 12-unit text was 5 px."""
    from tests.conftest import save_screenshot
    from tests.simulator.test_simulator_browser import PREDICTION as KILL
    from tests.simulator.test_simulator_browser import _bottlenecks_step

    page, errors, _ = _bottlenecks_step(browser, live_server_url, "phone")
    page.set_viewport_size({"width": 360, "height": 800})
    panel = page.locator("#simulator-panel")
    panel.locator("#sim-prediction").fill(KILL)
    panel.get_by_role("button", name="Kill a replica").click()
    chart = panel.locator("svg.pl-svg").first
    chart.wait_for()
    chart.scroll_into_view_if_needed()
    heights = chart.evaluate(
        "svg => [...svg.querySelectorAll('text')].map(t => t.getBoundingClientRect().height)"
    )
    # A text box is about 1.2 of its font size: 12 px tall is 10 px text.
    assert min(heights) >= 12, heights
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    save_screenshot(page, "simulator-chart-360")
    page.set_viewport_size({"width": 1280, "height": 900})
    heights = chart.evaluate(
        "svg => [...svg.querySelectorAll('text')].map(t => t.getBoundingClientRect().height)"
    )
    assert 12 <= min(heights) and max(heights) <= 30, heights  # as drawn before on a desktop
    save_screenshot(page, "simulator-chart-1280")
    assert errors == []
    page.context.close()


def test_the_scorecard_says_how_many_load_tests_it_leaves_out(start):
    # Only the newest runs are listed: a candidate whose considered prediction has dropped
    # below later ones is told there are more, not shown a list that looks whole.
    client, begin = start
    attempt = begin(VL)
    run(client, attempt, scenario="baseline", replicas="18", qps="40")
    first = SimulationRun.objects.get(answer__attempt=attempt)
    for n in range(6):
        SimulationRun.objects.create(
            answer=first.answer,
            user=first.user,
            scenario=first.scenario,
            prediction=f"guess {n}",
            design=first.design,
            runs=first.runs,
        )
    page = html.unescape(
        client.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
    )
    assert "The 5 newest of your 7 load tests." in page
    assert "guess 5" in page and "guess 1" in page and PREDICTION not in page
