"""The load-test panel on the bottlenecks step, its saved runs in the feedback, and the
planner's "simulate" page."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import services as flow
from questions.models import Question
from simulator.models import SimulationRun
from simulator.services import (
    PAGE_LIMITS,
    PAGE_WINDOW_S,
    Design,
    RunSpec,
    expected_requests,
    fleet_run,
    page_run,
    page_scenarios,
    page_window,
    scenario_titles,
)
from tests.simulator.bank import open_reference, reference_design, submitted_feedback

PREDICTION = "Nine replicas at 72% still hold p99 TTFT under 300 ms."


@pytest.fixture
def candidate(content_loaded, client):
    user = User.objects.create_user("sim", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    open_reference(attempt)  # the panel offers the reference fleet once its steps are in
    client.force_login(user)
    return client, attempt


def panel_url(attempt) -> str:
    return reverse("simulator:panel", kwargs={"attempt_id": attempt.pk})


def run_url(attempt) -> str:
    return reverse("simulator:run", kwargs={"attempt_id": attempt.pk})


def test_only_the_bottlenecks_step_loads_the_panel(candidate):
    client, attempt = candidate
    for step, shown in (("bottlenecks", True), ("architecture", False)):
        page = client.get(f"/attempts/{attempt.pk}/steps/{step}/").content.decode()
        assert (panel_url(attempt) in page) is shown


def test_the_panel_offers_the_seed_fleet_and_the_scenarios(candidate):
    client, attempt = candidate
    page = client.get(panel_url(attempt)).content.decode()
    assert 'id="sim-replicas" name="replicas" min="1" max="64" value="10"' in page
    for title in (
        "Kill a replica",
        "2× load",
        "Cold start",
        "Round-robin vs prefix-aware",
        "GPU-utilisation vs queue-depth autoscaling",
    ):
        assert title in page


def test_the_fleet_comes_from_the_candidates_checked_estimate(candidate):
    client, attempt = candidate
    estimate = flow.answer_open(attempt=attempt, step_key="estimate")
    flow.quantity_check_store(
        answer=estimate,
        quantity_id="n_inst",
        check={"answer": "12", "verdict": "wrong", "value": 12.0},
    )
    page = client.get(panel_url(attempt)).content.decode()
    assert 'value="12"' in page and "your estimate" in page


def test_someone_elses_panel_and_run_are_404(candidate):
    client, attempt = candidate
    User.objects.create_user("other", password="a-long-Passphrase-42")
    client.force_login(User.objects.get(username="other"))
    assert client.get(panel_url(attempt)).status_code == 404
    post = {"scenario": "kill-replica", "prediction": PREDICTION}
    assert client.post(run_url(attempt), post).status_code == 404
    assert not SimulationRun.objects.exists()


def test_a_run_needs_a_prediction_first(candidate):
    client, attempt = candidate
    response = client.post(run_url(attempt), {"scenario": "kill-replica", "prediction": "  "})
    assert response.status_code == 422
    assert "Write what you expect first" in response.content.decode()
    assert not SimulationRun.objects.exists()


def test_a_page_run_is_bounded(candidate):
    client, attempt = candidate
    post = {"scenario": "baseline", "prediction": PREDICTION, "replicas": "500"}
    response = client.post(run_url(attempt), post)
    assert response.status_code == 422
    assert "replicas must be between 1 and 64" in response.content.decode()


def test_a_load_below_the_briefs_mean_is_simulated_not_refused(candidate):
    # The chat brief's mean is 20 QPS: a run at 10 was refused with "A mean of 20 QPS is
    # above the peak of 10 QPS", a mean the candidate never typed.
    client, attempt = candidate
    post = {"scenario": "baseline", "prediction": PREDICTION, "qps": "10"}
    response = client.post(run_url(attempt), post)
    assert response.status_code == 200, response.content.decode()
    verdict = SimulationRun.objects.get().runs[0]["verdict"]
    assert verdict.startswith("Holds the SLO at 10 QPS on 10 replicas")


@pytest.mark.parametrize(
    ("box", "typed", "words"),
    [
        ("replicas", "2.5", "The number of replicas must be a whole number from 1 to 64"),
        ("replicas", "ten", "The number of replicas must be a whole number from 1 to 64"),
        ("replicas", "1e5", "The number of replicas must be between 1 and 64"),
        ("qps", "fifty", "The load (QPS) must be a number from 0.001 to 400"),
    ],
)
def test_a_box_that_is_not_a_number_is_told_and_keeps_what_was_typed(candidate, box, typed, words):
    # Such a box was silently replaced by the design's figure, and the run went ahead on it.
    client, attempt = candidate
    post = {"scenario": "baseline", "prediction": PREDICTION, box: typed}
    response = client.post(run_url(attempt), post)
    assert response.status_code == 422
    page = html.unescape(response.content.decode())
    assert words in re.search(r'id="sim-error">([^<]+)<', page)[1]
    assert re.search(rf'id="sim-{box}" name="{box}"[^>]* value="{re.escape(typed)}"', page)
    assert PREDICTION in page
    assert not SimulationRun.objects.exists()


def test_a_run_is_saved_with_the_answer_and_shown_in_its_feedback(candidate):
    client, attempt = candidate
    response = client.post(
        run_url(attempt), {"scenario": "kill-replica", "prediction": PREDICTION, "qps": "50"}
    )
    assert response.status_code == 200
    saved = SimulationRun.objects.get()
    assert saved.answer.step_key == "bottlenecks" and saved.answer.attempt_id == attempt.pk
    assert saved.prediction == PREDICTION
    assert saved.runs[0]["params"]["kill_at"] == 60.0
    page = response.content.decode()
    assert saved.runs[0]["verdict"] in page and "<svg" in page
    # Submitted and graded, the step's feedback carries the run.
    feedback = submitted_feedback(client, attempt, saved)
    assert "Load tests saved with this answer" in feedback
    assert PREDICTION in feedback and saved.runs[0]["verdict"] in feedback


def test_the_planner_offers_simulate_and_the_page_runs_its_fleet(client, content_loaded):
    query = "model=qwen2.5-7b-instruct&gpu=rtx-4090&weights=awq-int4&knee_tok_s=2000&qps=50"
    planner = client.get(f"/planner/capacity/?{query}").content.decode()
    assert 'id="plan-simulate"' in planner
    page = client.get(f"{reverse('simulator:page')}?{query}&scenario=kill-replica")
    assert page.status_code == 200
    text = page.content.decode()
    assert "a replica killed at 60 s" in text and "<svg" in text


@pytest.mark.parametrize("query", ["", "?question=moe-mixtral-serving", "bare"])
def test_the_simulate_link_of_a_plan_first_shown_simulates_the_same_fleet(
    client, content_loaded, query
):
    """The plan a page first shows comes from the defaults or a question's brief, not from the
    request: its simulate link carries those inputs, and simulates the fleet the page sized.
    The simulator's bare address simulates the planner's first plan."""
    planner = client.get(f"/planner/capacity/{query if query != 'bare' else ''}").content.decode()
    instances = re.search(r'<span class="pl-big">(\d+)</span> instances', planner).group(1)
    link = html.unescape(re.search(r'id="plan-simulate" href="([^"]+)"', planner).group(1))
    page = client.get(link if query != "bare" else reverse("simulator:page"))
    assert page.status_code == 200
    assert re.search(rf"Holds the SLO at [\d.]+ QPS on {instances} replicas", page.content.decode())
    # The breadcrumb back to the planner keeps the plan.
    text = page.content.decode()
    back = html.unescape(re.search(r'href="(/planner/capacity/\?[^"]+)"', text)[1])
    planned = client.get(back).content.decode()
    assert f'<span class="pl-big">{instances}</span> instances' in planned


def test_a_fleet_larger_than_the_page_simulates_is_refused_with_what_to_do(client, content_loaded):
    # A blank prompt length fills the 8,192-token context: a fleet of well over 64 replicas.
    response = client.get(f"{reverse('simulator:page')}?model=qwen2.5-7b-instruct&qps=50")
    assert response.status_code == 422
    error = re.search(r'id="sim-error">([^<]+)<', response.content.decode())[1]
    assert re.match(r"This plan needs (\d+) replicas; this page simulates up to 64\.", error)
    assert int(re.match(r"This plan needs (\d+)", error)[1]) > 64
    assert "lower peak QPS" in error


def test_the_simulate_page_refuses_bad_planner_inputs(client, content_loaded):
    response = client.get(f"{reverse('simulator:page')}?model=qwen2.5-7b-instruct&qps=-1")
    assert response.status_code == 422


@pytest.mark.parametrize(
    ("replicas", "words"),
    [
        ("abc", "The number of replicas must be a whole number from 1 to 64"),
        # Asked for, not planned: "This plan needs 100 replicas" was not so.
        ("100", "The number of replicas must be between 1 and 64."),
    ],
)
def test_the_simulate_page_tells_a_bad_replicas_in_its_address(
    client, content_loaded, replicas, words
):
    response = client.get(f"{reverse('simulator:page')}?replicas={replicas}")
    assert response.status_code == 422
    assert words in html.unescape(response.content.decode())


def test_the_simulate_page_says_which_slo_it_judges_by(client, content_loaded):
    # "The SLO breaks" was shown with no SLO on the page; a blank planner TTFT SLO is judged
    # against a default the candidate never typed.
    query = "qps=10&prompt_len=512&tpot_slo_ms=40"
    page = client.get(f"{reverse('simulator:page')}?{query}").content.decode()
    assert re.search(r"Holds the SLO|the SLO breaks", page)
    assert "Judged against the SLO p99 TTFT ≤ 1000 ms (the planner's TTFT SLO is blank" in page
    assert "p99 TPOT ≤ 40 ms." in page


@pytest.mark.parametrize("key", ["baseline", "double-load", "kill-replica", "cold-start",
                                 "autoscaling", "routing"])  # fmt: skip
def test_every_scenario_at_the_pages_top_load_fits_its_request_budget(key):
    # At 400 QPS (the voice-agent brief's peak, and the panel's largest load) every scenario
    # was refused: "That run would send about 96,000 requests; the limit here is 60,000.
    # Shorten the window", a window the panel has no box for.
    design = Design(plan_kwargs={}, replicas=7, qps=400, ttft_slo_ms=200, tpot_slo_ms=20,
                    input_tokens=3050, output_tokens=40)  # fmt: skip
    for run in page_scenarios(design)[key]["runs"]:
        fitted = page_window(replace(run, qps=400.0))
        assert expected_requests(fitted, qps=400.0) <= PAGE_LIMITS.requests
        assert fitted.seconds < PAGE_WINDOW_S and f"{fitted.seconds:g} s" in fitted.label
        last_event = max((fitted.kill_at or 0) + (fitted.restart_after or 0), fitted.burst_at or 0)
        assert fitted.seconds >= last_event + 30
        # A load that fits is run over the whole window, as before.
        assert page_window(replace(run, qps=50.0)) == replace(run, qps=50.0)


def test_the_voice_agent_design_runs_on_the_panel_at_its_peak(bank_loaded, client):
    user = User.objects.create_user("voice", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="voice-agent-latency-budget").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    open_reference(attempt)
    client.force_login(user)
    response = client.post(run_url(attempt), {"scenario": "baseline", "prediction": PREDICTION})
    assert response.status_code == 200, html.unescape(response.content.decode())
    [run] = SimulationRun.objects.get().runs
    assert run["params"]["qps"] == 400 and run["params"]["seconds"] == 150
    assert run["verdict"].startswith(("Holds the SLO at 400 QPS", "At 400 QPS"))
    assert run["label"] == "peak load over 150 s"
    assert "Simulated over 150 s, not 240: a page runs up to 60,000 requests" in run["note"]
    assert run["note"] in html.unescape(response.content.decode())


def test_a_runs_table_scrolls_in_a_box_with_its_name(candidate):
    # On a phone the run's table scrolls in its own box, named for when it overflows
    # (scroll.js makes it a keyboard stop then; the browser test presses its keys).
    client, attempt = candidate
    post = {"scenario": "baseline", "prediction": PREDICTION, "qps": "10"}
    page = client.post(run_url(attempt), post).content.decode()
    wrap = re.search(r'<div class="pl-table-wrap[^"]*"[^>]*>', page)[0]
    assert "scroll-x" in wrap and 'data-scroll-label="The run' in wrap, wrap


def test_the_embedding_question_runs_on_the_panel_as_a_prefill_only_fleet(bank_loaded, client):
    # The panel said "The load simulator cannot run this question's design".
    user = User.objects.create_user("embed", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="embedding-rerank-service").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    open_reference(attempt)
    client.force_login(user)
    page = html.unescape(client.get(panel_url(attempt)).content.decode())
    assert "cannot run" not in page
    assert 'name="replicas" min="1" max="64" value="15"' in page
    assert "SLO p99 latency ≤ 500 ms" in page and "TPOT ≤" not in page
    # Nor does the example prediction speak of TTFT (it offered the chat seed's "p99 TTFT").
    assert "TTFT" not in page, re.findall(r".{60}TTFT.{20}", page)
    assert "run as the catalogue's Qwen2.5-7B-Instruct, the same Qwen2-7B shape" in page
    assert "Round-robin vs prefix-aware" not in page  # nothing is cached to route by
    # Sized by the simulator's prefill-only model: the planner does not size this service.
    assert "15 replicas (the reference design, sized by its prefill throughput)" in page
    response = client.post(run_url(attempt), {"scenario": "baseline", "prediction": PREDICTION})
    assert response.status_code == 200, html.unescape(response.content.decode())
    [run] = SimulationRun.objects.get().runs
    assert run["verdict"].startswith("Holds the SLO at 20 QPS on 15 replicas: p99 latency")
    page = html.unescape(response.content.decode())
    assert "p50 / p99 latency (ms)" in page and "p99 TPOT" not in page
    assert "p99 latency over time" in page


def test_an_autoscaling_run_at_400_qps_keeps_room_for_the_autoscaler_to_act():
    # The window was cut to 105 s with the burst at 60 s: 45 s, less than a 30 s cold start
    # after a 15 s scaling period, so both autoscalers added nothing and the two runs were the
    # same run.
    design = reference_design("voice-agent-latency-budget")
    runs = []
    for spec in page_scenarios(design)["autoscaling"]["runs"]:
        fitted = page_window(replace(spec, qps=400.0))
        assert fitted.seconds - fitted.burst_at >= fitted.cold_start_s + 2 * 15
        assert expected_requests(fitted, qps=400.0) <= PAGE_LIMITS.requests
        runs.append(page_run(design, replace(spec, replicas=design.replicas, qps=400.0)))
    util, queue = runs
    assert "burst at 30 s over 90 s" in queue["label"]
    assert "The burst comes at 30 s, not 60" in queue["note"]
    assert queue["figures"]["replicas_added_at_s"]
    assert util["figures"] != queue["figures"] and util["verdict"] != queue["verdict"]


def test_an_autoscaling_run_too_short_for_the_autoscaler_says_so():
    design = reference_design("chat-api-50qps")
    spec = RunSpec(seconds=80, burst_at=60.0, autoscale="queue", cold_start_s=30.0)
    run = fleet_run(design, spec)
    assert (
        "The window ends 20 s after the burst, too short for the autoscaler to act"
        in (run["verdict"])
    )
    longer = fleet_run(design, replace(spec, seconds=150))
    assert "too short" not in longer["verdict"]


def test_each_chart_is_named_by_its_own_title_with_the_panel_and_the_feedback_on_one_page(
    candidate,
):
    # Every chart was id="" and labelled by "-title -desc": a screen reader named all six
    # charts of the step (the panel's last run and the saved one in the feedback) after the
    # first one's title.
    client, attempt = candidate
    post = {"scenario": "baseline", "prediction": PREDICTION, "qps": "10"}
    panel = client.post(run_url(attempt), post).content.decode()
    saved = SimulationRun.objects.get()
    feedback = submitted_feedback(client, attempt, saved)
    step = panel + feedback  # the panel is swapped into the step beside its feedback
    ids = re.findall(r'\sid="([^"]*)"', step)
    assert "" not in ids and len(ids) == len(set(ids)), sorted(ids)
    charts = re.findall(r'<svg[^>]*role="img" aria-labelledby="([^"]+)"', step)
    assert len(charts) == 8, charts  # p99 TTFT, p99 TPOT, waiting, replicas; twice
    titles = []
    for labels in charts:
        title_id = labels.split()[0]
        titles.append(re.search(rf'<title id="{title_id}">([^<]+)</title>', step)[1])
    assert len(set(titles)) == 4 and len(titles) == 8, titles


@pytest.mark.parametrize("slug", ["voice-agent-latency-budget", "embedding-rerank-service"])
def test_the_panels_buttons_are_the_scenarios_a_run_takes(slug):
    # The panel names its buttons without building the runs (the routing traffic asks the
    # planner, about 11 ms a page): the two must list the same scenarios.
    design = reference_design(slug)
    runs = page_scenarios(design)
    assert scenario_titles(design) == {key: s["title"] for key, s in runs.items()}
    assert ("routing" in runs) is (design.pooled is None)


def test_the_panel_says_the_planner_marks_the_long_context_design_infeasible_and_why(
    content_loaded, client
):
    # The 21 replicas are the planner's fleet for the load, not a fleet it says holds the
    # 2 s TTFT: the panel says it cannot, and that the TPOT SLO it judges by is a default.
    user = User.objects.create_user("rag", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="long-context-rag").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    client.force_login(user)
    # The planner's figures for the reference design show once the napkin-math step is in.
    assert "sim-plan-caveat" not in client.get(panel_url(attempt)).content.decode()
    open_reference(attempt)
    page = html.unescape(client.get(panel_url(attempt)).content.decode())
    caveat = page.split('id="sim-plan-caveat">')[1].split("</p>")[0]
    assert "marks this design infeasible at the peak" in caveat
    assert "10% of requests that miss the prefix cache" in caveat
    assert "6,927 ms, against the 2,000 ms SLO" in caveat
    assert "p99 TPOT ≤ 100 ms (the question sets none: a default)" in page
    assert "p99 TTFT ≤ 2000 ms, p99" in page  # the question's own TTFT SLO is not a default
    # A design the planner holds says nothing of the kind.
    chat = Question.objects.get(slug="chat-api-50qps").current_revision
    other = flow.attempt_start(user=user, revision=chat)
    open_reference(other)
    assert "sim-plan-caveat" not in client.get(panel_url(other)).content.decode()


@pytest.mark.parametrize("slug", ["agentic-prefix-sharing", "chat-api-50qps"])
def test_a_routing_runs_label_names_its_router_and_the_note_its_traffic_once(slug):
    # The traffic is said once, in the note: in each label the heading "A vs B" would say it
    # twice and wrap to five lines on a 360 px phone.
    runs = page_scenarios(reference_design(slug))["routing"]["runs"]
    assert [run.label for run in runs] == ["round-robin", "prefix-aware"]
    # A question without prefix groups has its note written with the run, from its plan.
    assert all(run.extra.get("traffic_note") or run.extra.get("unrouted") for run in runs)
