"""What the load-test panel tells a candidate of the reference answer, and when: the fleet
size only once the napkin-math step (which grades it) is submitted, the router only once the
architecture step (whose rubric names it) is; the candidate's own estimate rounded up as the
checker asks; a chart that says where it stops; and the routing note's prefix cache."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest
from django.urls import reverse

from practice import services as flow
from simulator.charts import ttft_chart
from simulator.models import SimulationRun
from simulator.services import fleet_run, page_scenarios
from tests.simulator.bank import (
    feedback_panel,
    panel,
    reference_design,
    replicas_box,
    submit,
    submitted_feedback,
)

PREDICTION = "Ten replicas hold the peak with p99 TTFT under 300 ms."


def selected_router(page: str) -> str:
    return re.search(r'<option value="([^"]+)" selected>', page).group(1)


def test_a_fresh_attempt_names_neither_the_reference_fleet_nor_its_router(start):
    client, begin = start
    attempt = begin("chat-api-50qps")
    page = panel(client, attempt)
    assert replicas_box(page) == ""
    assert "10 replicas" not in page and "(the reference" not in page
    assert "your design's replicas (type them below)" in page
    assert "submitted the napkin-math step" in page
    assert selected_router(page) == "round-robin"
    assert "prefix-aware (default)" not in page and "round-robin (default)" in page


def test_a_run_without_replicas_on_a_fresh_attempt_asks_for_them(start):
    client, begin = start
    attempt = begin("chat-api-50qps")
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    refused = client.post(url, {"scenario": "baseline", "prediction": PREDICTION, "qps": "50"})
    assert refused.status_code == 422
    body = refused.content.decode()
    assert "Type the number of replicas your design runs" in body
    assert "10 replicas" not in body


def test_the_fleet_shows_once_the_estimate_is_submitted_the_router_after_architecture(start):
    client, begin = start
    attempt = begin("chat-api-50qps")
    submit(attempt, "estimate")
    page = panel(client, attempt)
    assert replicas_box(page) == "10"
    assert "10 replicas (the reference design, as the capacity planner sizes it)" in page
    assert selected_router(page) == "round-robin" and "reference answer's" not in page
    submit(attempt, "architecture")
    page = panel(client, attempt)
    assert selected_router(page) == "prefix-aware"
    assert "prefix-aware router (the reference answer's)" in page


def test_a_fleet_the_answer_states_is_not_named_before_the_estimate(start):
    client, begin = start
    attempt = begin("tensor-parallel-70b-midrange")
    page = panel(client, attempt)
    assert replicas_box(page) == ""
    assert "2 replicas" not in page and "sizes 4" not in page
    assert "least-loaded (default)" not in page
    submit(attempt, "estimate")
    page = panel(client, attempt)
    assert "2 replicas (the reference answer's; the capacity planner sizes 4)" in page


def test_the_bottlenecks_feedback_names_a_runs_per_replica_rate_only_after_the_estimate(start):
    """Bottlenecks submitted first: its feedback carries the run but not its note, whose
    per-replica rate is the planner's figure the napkin-math step grades."""
    client, begin = start
    attempt = begin("chat-api-50qps")
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    post = {"scenario": "baseline", "prediction": PREDICTION, "qps": "50", "replicas": "4"}
    assert client.post(url, post).status_code == 200
    saved = SimulationRun.objects.get(answer__attempt=attempt)
    note = html.escape(saved.runs[0]["note"])
    assert "req/s" in saved.runs[0]["note"]  # the note names the per-replica rate
    feedback = submitted_feedback(client, attempt, saved)
    assert saved.runs[0]["verdict"] in html.unescape(feedback)
    assert note not in feedback
    submit(attempt, "estimate")
    done = saved.answer.submissions.latest("pk")
    assert note in feedback_panel(client, attempt, done.pk)


def test_a_reference_fleet_the_simulator_does_not_run_waits_for_the_estimate(start):
    client, begin = start
    attempt = begin("pd-disaggregation-long-prompts")
    assert "15 prefill" not in panel(client, attempt)
    submit(attempt, "estimate")
    assert "15 prefill and 4 decode" in panel(client, attempt)


def test_a_fleet_and_router_the_brief_states_are_no_secret(start):
    client, begin = start
    attempt = begin("incident-ttft-regression")
    page = panel(client, attempt)
    assert replicas_box(page) == "9"
    assert selected_router(page) == "prefix-aware"


@pytest.mark.parametrize(
    ("slug", "quantity", "value", "replicas"),
    # 9.143 instances was rounded to 9 before the ceiling: the checker asks for 10.
    [
        ("chat-api-50qps", "n_inst", 9.143, 10),
        ("moe-mixtral-serving", "n_gpu", 4.2, 3),
        ("chat-api-50qps", "n_inst", 10.0, 10),
    ],
)
def test_the_estimate_is_rounded_up_to_whole_instances(start, slug, quantity, value, replicas):
    client, begin = start
    attempt = begin(slug)
    estimate = flow.answer_open(attempt=attempt, step_key="estimate")
    flow.quantity_check_store(
        answer=estimate,
        quantity_id=quantity,
        check={"answer": str(value), "verdict": "correct", "value": value},
    )
    page = panel(client, attempt)
    assert replicas_box(page) == str(replicas)
    assert f"{replicas} replicas (your estimate)" in page


def _run(bins: list, slo_ms: float = 300.0, **params) -> dict:
    return {
        "label": "2× load",
        "verdict": "Breaks the SLO.",
        "figures": {},
        "params": {"seconds": 240.0, "ttft_slo_ms": slo_ms, **params},
        "ttft_bins": bins,
    }


def test_a_ttft_chart_says_where_it_stops_when_a_value_runs_off_its_top():
    # At a 300 ms SLO the chart stops at 1,250 ms; a p99 of 30 s was a flat line there.
    chart = ttft_chart([_run([[0, 0.2], [5, 30.1], [10, None]], burst_at=60.0)])
    notes = [n["text"] for n in chart.notes]
    assert "▲ off the chart above 1250 ms" in notes
    off = next(n for n in chart.notes if n["text"].startswith("▲"))
    # In a row of its own above the plot, below the burst's note.
    burst = next(n for n in chart.notes if n["text"].startswith("burst"))
    assert burst["y"] < off["y"] < chart.plot_top


def test_a_ttft_chart_within_its_top_has_no_off_chart_note():
    chart = ttft_chart([_run([[0, 0.2], [5, 0.9]])])
    assert not any("off the chart" in n["text"] for n in chart.notes)


def _routing_note(slug: str) -> str:
    """The note of the routing scenario's first run on `slug`'s design, at a light load."""
    design = reference_design(slug)
    spec = page_scenarios(design)["routing"]["runs"][0]
    return fleet_run(design, replace(spec, qps=2.0, seconds=20.0))["note"]


def test_the_routing_note_does_not_claim_a_cached_prefix_for_traffic_without_one():
    # chat-api-50qps's traffic shares no prefix: its runs show 0% prefix hits, and the note
    # said every replica caches "at most one prefix shared by every request".
    note = _routing_note("chat-api-50qps")
    assert "every replica caches" not in note
    assert "share no prompt prefix" in note and "0% under either router" in note


def test_the_routing_note_gives_the_share_one_shared_prefix_opens():
    note = _routing_note("structured-extraction-api")
    assert "opens 95% of the requests" in note and "every replica caches it" in note


def test_a_runs_note_spells_out_the_replicas_rate_only_once_the_estimate_is_submitted(start):
    client, begin = start
    attempt = begin("chat-api-50qps")
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    data = {"scenario": "baseline", "prediction": PREDICTION, "qps": "50", "replicas": "12"}
    page = html.unescape(client.post(url, data).content.decode())
    assert 'class="sim-result"' in page
    assert "sim-note" not in page and "req/s)" not in page
    submit(attempt, "estimate")
    assert "sim-note" in panel(client, attempt)
