"""The simulator against queueing theory, Little's law and the seed's claims about the chat
question's design (10 replicas of Qwen2.5-7B AWQ on RTX 4090s, the measured 2000 tok/s knee)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from questionbank import load_question_spec
from simulator.engine import (
    ReplicaModel,
    Scenario,
    SimulationError,
    Workload,
    erlang_c,
    figures,
    mmc_waits,
    simulate,
    verdict,
)
from simulator.engine.figures import slo_breaks
from simulator.engine.fleet import DONE, SHED, Result
from simulator.services import (
    COMMAND_LIMITS,
    PAGE_LIMITS,
    RunRefused,
    RunSpec,
    design_from_brief,
    fleet_run,
    page_scenarios,
    routed_traffic,
)
from tests.simulator.bank import BANK, reference_design

CHAT = design_from_brief(load_question_spec("chat-api-50qps").brief, slug="chat-api-50qps")


def run(**spec) -> dict:
    return fleet_run(CHAT, RunSpec(**{"seconds": 300.0, **spec}))["figures"]


# --- queueing theory ---------------------------------------------------------------------


def mmc_replica(servers: int) -> ReplicaModel:
    """One replica as an M/M/c queue: c slots, 1 ms steps whatever the batch, no prefill, so
    a request's service is its output length in ms (exponential lengths: ~exponential)."""
    return ReplicaModel(
        max_batch=servers,
        kv_tokens=10**9,
        step_base_s=0.001,
        step_per_stream_s=0.0,
        prefill_s_per_token=0.0,
    )


def test_an_mmc_configuration_lands_on_erlang_c():
    servers, lam, mean_tokens = 10, 7.0, 1000
    waits, services = [], []
    for seed in (1, 2, 3):
        result = simulate(
            mmc_replica(servers),
            Workload(qps=lam, input_tokens=1, output_tokens=mean_tokens, length_dist="exponential"),
            Scenario(replicas=1, seconds=6000, seed=seed, timeout_s=1e9, max_queue=10**9),
        )
        for a, s, f, d in zip(
            result.arrival, result.admitted_at, result.first_token, result.finish, strict=True
        ):
            if not math.isnan(d):
                waits.append(s - a)
                services.append(d - f)
    mean_service = sum(services) / len(services)
    p_wait, mean_wait = erlang_c(servers=servers, arrival_rate=lam, service_rate=1 / mean_service)
    step = 0.001  # a request joins at the next step boundary: up to one step is not a queue
    measured_p = sum(w > 1.1 * step for w in waits) / len(waits)
    measured_mean = sum(waits) / len(waits)
    assert measured_p == pytest.approx(p_wait, rel=0.05)
    assert measured_mean == pytest.approx(mean_wait, rel=0.08)


def test_erlang_c_matches_a_textbook_value():
    # 2 servers, offered load 1 Erlang: P(wait) = 1/3, mean wait = (1/3) / (2 - 1).
    assert erlang_c(servers=2, arrival_rate=1.0, service_rate=1.0) == pytest.approx((1 / 3, 1 / 3))


def test_the_plain_mmc_simulation_agrees_with_the_fleet_on_the_same_arrivals():
    result = simulate(
        mmc_replica(4),
        Workload(qps=3.0, input_tokens=1, output_tokens=1000, length_dist="exponential"),
        Scenario(replicas=1, seconds=2000, seed=5, timeout_s=1e9, max_queue=10**9),
    )
    done = [i for i, d in enumerate(result.finish) if not math.isnan(d)]
    arrivals = [result.arrival[i] for i in done]
    services = [result.finish[i] - result.first_token[i] for i in done]
    plain = mmc_waits(arrivals, services, 4)
    ours = [result.admitted_at[i] - result.arrival[i] for i in done]
    assert sum(ours) / len(ours) == pytest.approx(sum(plain) / len(plain), rel=0.05, abs=0.002)


# --- Little's law on every run --------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"qps": 100},
        {"kill_at": 60.0},
        {"kill_at": 60.0, "restart_after": 30.0, "router": "least-loaded"},
        {"burst_at": 60.0, "autoscale": "queue", "cold_start_s": 30.0},
        {"burst_at": 60.0, "autoscale": "utilisation", "chunked_prefill": True},
        {"router": "prefix-aware", "prefix_groups": 500, "prefix_tokens": 384},
    ],
)
def test_littles_law_holds_on_every_run(spec):
    figs = run(**spec)
    assert figs["little_law_error"] < 0.02
    assert figs["arrived"] == sum(
        figs[k] for k in ("completed", "shed", "timed_out", "failed", "in_flight")
    )


def test_littles_law_from_the_finished_requests_alone_in_a_steady_run():
    figs = fleet_run(CHAT, RunSpec(seconds=600.0))["figures"]
    little = figs["little_law"]
    assert figs["in_flight"] < 0.01 * figs["arrived"]
    # lambda from the completions and W of the completed: what a load test can measure.
    lam_done = figs["completed"] / 600.0
    assert abs(little["L"] - lam_done * little["W"]) / little["L"] < 0.02


# --- acceptance: the chat question's seed design ---------------------------------------------


def test_the_seed_design_holds_the_slo_at_50_qps():
    figs = run(qps=50)
    assert CHAT.replicas == 10
    assert figs["ttft_p99_ms"] <= 300
    assert figs["tpot_p99_ms"] <= 50
    assert figs["holds_slo"]


def test_the_seed_design_breaks_the_slo_at_100_qps():
    figs = run(qps=100)
    assert figs["ttft_p99_ms"] > 300
    assert figs["queue_end"] > 100


def test_one_dead_replica_at_50_qps_makes_p99_ttft_worse():
    healthy, killed = run(qps=50), run(qps=50, kill_at=30.0)
    assert killed["ttft_p99_ms"] > healthy["ttft_p99_ms"]
    assert killed["replicas_min"] == 9


def test_past_the_knee_the_nine_left_cannot_hold_what_ten_just_held():
    """The seed: one dead replica of ten past the knee cascades without headroom."""
    load = 72  # 92% of the ten replicas' saturated rate
    ten, nine = run(qps=load), run(qps=load, kill_at=60.0)
    assert ten["ttft_p99_ms"] <= 300 and ten["queue_end"] < 20
    assert nine["ttft_p99_ms"] > 300
    assert nine["queue_end"] > 10 * ten["queue_end"] + 100  # and it keeps growing


# --- the seed's qualitative claims ------------------------------------------------------------


def test_round_robin_re_prefills_the_shared_prompts_that_prefix_aware_routing_keeps():
    shared = {"prefix_groups": 2000, "prefix_tokens": 384}
    rr = run(router="round-robin", **shared)
    aware = run(router="prefix-aware", **shared)
    # 2000 first sightings of 15000 requests are misses for any router.
    assert aware["prefix_hit_rate"] > 0.8 > 0.5 > rr["prefix_hit_rate"]
    assert rr["prefill_tokens"] > 1.5 * aware["prefill_tokens"]
    assert aware["ttft_p50_ms"] < rr["ttft_p50_ms"]


def test_gpu_utilisation_scaling_lands_later_than_queue_depth():
    burst = {"burst_at": 60.0, "cold_start_s": 30.0, "seconds": 400.0}
    util = run(autoscale="utilisation", **burst)
    queue = run(autoscale="queue", **burst)
    assert queue["replicas_added_at_s"] and util["replicas_added_at_s"]
    assert util["replicas_added_at_s"][0] > queue["replicas_added_at_s"][0]
    assert util["ttft_p99_ms"] > queue["ttft_p99_ms"]


def test_a_replica_back_after_a_cold_start_rejoins():
    figs = run(kill_at=30.0, restart_after=60.0)
    assert figs["replicas_min"] == 9 and figs["replicas_max"] == 10
    assert any(
        e["what"].endswith("ready (cold start)") and e["t"] == pytest.approx(90.0)
        for e in figs["events"]
    )


@pytest.mark.parametrize("autoscale", ["queue", "utilisation"])
def test_an_autoscaler_brings_back_a_fleet_whose_every_replica_died(autoscale):
    """One replica, killed: with nothing ready there is no metric to read, and the autoscaler
    never asked for a replica; its floor of one brings one back after a cold start."""
    figs = run(replicas=1, qps=2.0, kill_at=30.0, autoscale=autoscale, cold_start_s=20.0)
    assert figs["replicas_added_at_s"], figs["events"]
    assert figs["replicas_max"] == 1 and figs["replicas_min"] == 0
    assert figs["completed"] > 2.0 * 60  # it serves again after the cold start


def test_a_window_with_no_arrival_says_so_rather_than_that_the_slo_broke():
    result = fleet_run(CHAT, RunSpec(seconds=60.0, qps=0.001))
    assert result["figures"]["arrived"] == 0
    assert "no request arrived" in result["verdict"]
    assert "SLO breaks" not in result["verdict"]


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    a, b = run(seed=3), run(seed=3)
    a.pop("wall_s"), b.pop("wall_s")
    assert a == b
    c = run(seed=4)
    assert c["arrived"] != a["arrived"]


# --- bounds --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"seconds": 4000}, "window"),
        ({"qps": 0}, "load"),
        ({"replicas": 0}, "replicas"),
        ({"kill_at": 900.0, "seconds": 600.0}, "kill time"),
        ({"qps": 1900, "seconds": 3600}, "requests"),
    ],
)
def test_a_run_out_of_bounds_is_refused_in_a_sentence(spec, words):
    with pytest.raises(RunRefused, match=words):
        fleet_run(CHAT, RunSpec(**spec), limits=COMMAND_LIMITS)


def test_a_page_run_is_capped_smaller_than_the_command():
    with pytest.raises(RunRefused, match="window"):
        fleet_run(CHAT, RunSpec(seconds=600.0), limits=PAGE_LIMITS)


def test_an_unknown_router_is_refused():
    with pytest.raises(RunRefused, match="router"):
        fleet_run(CHAT, replace(RunSpec(seconds=10.0), router="random"))
    with pytest.raises(SimulationError):
        simulate(
            mmc_replica(1),
            Workload(qps=1, input_tokens=1, output_tokens=1),
            Scenario(replicas=1, seconds=1, autoscale="cpu"),
        )


@pytest.mark.parametrize("slug", BANK)
def test_every_question_of_the_bank_gets_a_fleet_its_weights_fit(slug: str) -> None:
    """Each question's seed design is the one its reference answer settles on (quantised
    weights, TP, speculation), so the panel opens on a fleet that fits, not on a refusal or
    on a fleet sized for BF16 weights at TP=1."""
    design = reference_design(slug)
    if design is None:
        return
    assert 1 <= design.replicas <= PAGE_LIMITS.replicas, (slug, design.replicas)


def test_a_window_shorter_than_the_answers_says_tpot_is_not_measured():
    # Reasoning answers run for minutes: in 20 s first tokens come but nothing finishes, and
    # the verdict formatted a TPOT it did not have (a TypeError out of `simulate`).
    slug = "reasoning-model-long-outputs"
    design = design_from_brief(load_question_spec(slug).brief, slug=slug)
    result = fleet_run(design, RunSpec(seconds=20.0))
    assert result["figures"]["completed"] == 0 and result["figures"]["arrived"] > 0
    assert "no request finished in the window, so TPOT is not measured" in result["verdict"]
    assert "Holds the SLO" not in result["verdict"]


# --- prefill-only requests (embeddings, rerank scores) -------------------------------------


def pooled_replica(**fields) -> ReplicaModel:
    """1 ms per prompt token, a 12 ms weight-read floor, nothing decodes."""
    return ReplicaModel(
        **{
            "max_batch": 64,
            "kv_tokens": 10**9,
            "step_base_s": 0.012,
            "step_per_stream_s": 0.0,
            "prefill_s_per_token": 0.001,
            "prefill_floor_s": 0.012,
            **fields,
        }
    )


def one_request(replica: ReplicaModel, workload: Workload, replicas: int = 1):
    """A lone request (the first arrival of a slow Poisson stream) and its latency."""
    result = simulate(replica, workload, Scenario(replicas=replicas, seconds=2000, seed=3))
    assert result.status[0] == 1  # DONE
    return result, result.first_token[0] - result.arrival[0]


def test_a_prefill_only_request_answers_at_the_end_of_its_prefill_with_no_tpot():
    result = simulate(
        pooled_replica(),
        Workload(qps=2, input_tokens=100, output_tokens=1, pooled=True, length_dist="fixed"),
        Scenario(replicas=2, seconds=120, seed=1, ttft_slo_s=0.5),
    )
    done = [i for i, s in enumerate(result.status) if s == 1]
    assert done and all(result.first_token[i] == result.finish[i] for i in done)
    figs = figures(result)
    assert figs["prefill_only"] and figs["tpot_p99_ms"] is None and figs["tpot_p50_ms"] is None
    assert figs["ttft_p99_ms"] == figs["e2e_p99_ms"] >= 100.0  # 100 tokens at 1 ms each
    text = verdict(figs, qps=2, replicas=2, ttft_slo_ms=500, tpot_slo_ms=0)
    assert text.startswith("Holds the SLO at 2 QPS on 2 replicas: p99 latency")
    assert "TPOT" not in text and "TTFT" not in text


def test_a_short_prefill_takes_the_weight_read_floor():
    # 5 tokens of compute is 5 ms, but every forward pass reads the weights once: 12 ms.
    workload = Workload(qps=0.001, input_tokens=5, output_tokens=1, pooled=True)
    _, latency = one_request(pooled_replica(), replace(workload, length_dist="fixed"))
    assert latency == pytest.approx(0.012)
    _, latency = one_request(
        pooled_replica(prefill_floor_s=0.0), replace(workload, length_dist="fixed")
    )
    assert latency == pytest.approx(0.005)


def test_a_fanned_out_request_answers_when_its_last_part_does_each_on_its_own_replica():
    workload = Workload(
        qps=0.001, input_tokens=400, output_tokens=1, pooled=True, fanout=4, length_dist="fixed"
    )
    # Four replicas: the four 100-token parts run side by side, 100 ms.
    result, latency = one_request(pooled_replica(), workload, replicas=4)
    assert latency == pytest.approx(0.100)
    assert len(result.arrival) == len(result.status)  # one entry per request, not per part
    # One replica: the parts queue on it, 400 ms; a step's token budget of 100 makes them four
    # steps, with the same sum.
    _, latency = one_request(pooled_replica(), workload, replicas=1)
    assert latency == pytest.approx(0.400)
    _, latency = one_request(pooled_replica(max_batched_tokens=100), workload, replicas=1)
    assert latency == pytest.approx(0.400)


def test_a_token_budget_answers_the_first_inputs_of_a_queue_sooner():
    # Every input in a step answers when the step ends: with a budget that takes one input a
    # step, the first of a queue answers after its own prefill, not after the whole queue's.
    workload = Workload(qps=30, input_tokens=100, output_tokens=1, pooled=True, length_dist="fixed")
    scenario = Scenario(replicas=1, seconds=60, seed=2, ttft_slo_s=1.0)
    whole = figures(simulate(pooled_replica(), workload, scenario))
    budget = figures(simulate(pooled_replica(max_batched_tokens=100), workload, scenario))
    assert budget["ttft_p50_ms"] < whole["ttft_p50_ms"]


def test_littles_law_counts_a_fanned_out_request_once():
    result = simulate(
        pooled_replica(),
        Workload(qps=5, input_tokens=600, output_tokens=1, pooled=True, fanout=3),
        Scenario(replicas=6, seconds=300, seed=4),
    )
    figs = figures(result)
    assert figs["arrived"] == len(result.arrival) and figs["completed"] > 0.95 * figs["arrived"]
    assert figs["little_law_error"] < 0.01


def test_only_a_prefill_only_request_fans_out_and_it_caches_no_prefix():
    scenario = Scenario(replicas=2, seconds=10)
    for workload, words in (
        (Workload(qps=1, input_tokens=100, output_tokens=10, fanout=2), "fans out"),
        (Workload(qps=1, input_tokens=100, output_tokens=1, pooled=True, fanout=0), "fans out"),
        (
            Workload(qps=1, input_tokens=100, output_tokens=1, pooled=True, cached_share=0.5),
            "no prefix cache",
        ),
    ):
        with pytest.raises(SimulationError, match=words):
            simulate(pooled_replica(), workload, scenario)


def test_the_embedding_question_runs_its_reference_fleet_and_refuses_what_does_not_apply():
    slug = "embedding-rerank-service"
    design = design_from_brief(load_question_spec(slug).brief, slug=slug)
    assert design.pooled is not None and design.replicas == 15 and design.ttft_slo_ms == 500
    assert design.pooled.tokens == 48 + 20 * 304 and design.pooled.fanout == 4
    assert "Qwen2.5-7B-Instruct, the same Qwen2-7B shape" in design.pooled.model_note
    assert "routing" not in page_scenarios(design)
    for spec in (RunSpec(seconds=10, prefix_groups=10, prefix_tokens=20),
                 RunSpec(seconds=10, chunked_prefill=True)):  # fmt: skip
        with pytest.raises(RunRefused, match="prefill-only"):
            fleet_run(design, spec)
    # Twice the peak on the same fleet breaks the p99 latency, and says so without a TPOT.
    run = fleet_run(design, RunSpec(seconds=60, qps=40))
    assert not run["figures"]["holds_slo"]
    assert "p99 latency is" in run["verdict"] and "TPOT" not in run["verdict"]


# --- what a verdict may claim ------------------------------------------------------------


def page_figures(slug: str, key: str, index: int = 0) -> tuple[dict, str]:
    """A panel scenario's run of a question's reference design: its figures and verdict."""
    design = reference_design(slug)
    spec = page_scenarios(design)[key]["runs"][index]
    result = fleet_run(design, replace(spec, replicas=design.replicas, qps=design.qps))
    return result["figures"], result["verdict"]


def test_a_steady_run_that_breaks_to_the_end_is_not_said_to_recover():
    # The TP-4 70B fleet at its peak (the brief's two boxes behind the answer's shorter-queue
    # balancer, least-loaded, each about 90% busy with 1.35 s prefills) breaks from 5 s and
    # stays broken; a good bin among the broken ones is not "it recovers", as if the peak were
    # an event it got over.
    figs, text = page_figures("tensor-parallel-70b-midrange", "baseline")
    assert figs["slo_broken_at_s"] is not None and figs["recovered_at_s"] is None
    assert "recovers" not in text
    assert "On 2 replicas" in text or "on 2 replicas" in text
    assert "p99 TTFT is 6.5 s against the 1.5 s SLO" in text


def test_a_run_that_breaks_on_tpot_alone_is_not_timed_by_its_ttft_bins():
    # p99 TTFT 299 ms of 500 held, p99 TPOT 15.7 ms broke the 12 ms SLO; the verdict said
    # "breaks from the start: p99 TPOT is 16 ms ...; it recovers after 5 s" from one TTFT bin.
    # The panel's routing scenario then sent 2,000 prefixes of 3,000 tokens; it now sends the
    # question's own traffic, so that run is made here as it was.
    design = reference_design("structured-extraction-api")
    spec = RunSpec(seconds=240, router="prefix-aware", prefix_groups=2000, prefix_tokens=3000)
    result = fleet_run(design, replace(spec, replicas=design.replicas, qps=design.qps))
    figs, text = result["figures"], result["verdict"]
    assert figs["ttft_p99_ms"] <= 500 and figs["tpot_p99_ms"] > 12 and not figs["holds_slo"]
    assert figs["slo_broken_at_s"] is None and figs["recovered_at_s"] is None
    assert "the SLO breaks: p99 TPOT is 16 ms against the 12 ms SLO" in text
    assert "from the start" not in text and "recovers" not in text


def broken_figures(**figures) -> dict:
    """A broken run's figures as `verdict` reads them, with `figures` set."""
    return {
        "holds_slo": False,
        "arrived": 900,
        "shed": 0,
        "timed_out": 0,
        "failed": 0,
        "queue_max": 0,
        "slo_broken_at_s": None,
        "recovered_at_s": None,
        "replicas_added_at_s": [],
        "goodput_share": 0.9,
        **figures,
    }


def test_an_autoscaler_that_added_no_replica_is_not_credited_with_a_recovery():
    # "with the autoscaler on GPU utilisation it recovers in 225 s (0 replicas added)".
    figs = broken_figures(
        ttft_p99_ms=4100.0, tpot_p99_ms=30.0, queue_max=3, slo_broken_at_s=5.0, recovered_at_s=100.0
    )
    text = verdict(
        figs, qps=4, replicas=37, ttft_slo_ms=4000, tpot_slo_ms=50, autoscale="utilisation"
    )
    assert "the autoscaler on GPU utilisation adds no replica; it recovers after 95 s" in text
    assert "0 replicas added" not in text and "with the autoscaler" not in text


def test_a_tpot_just_over_its_slo_shows_the_decimals_that_put_it_over():
    # "p99 TPOT is 12 ms" read as within a 12 ms SLO that it broke.
    figs = broken_figures(ttft_p99_ms=150.0, tpot_p99_ms=12.04, failed=1)
    text = verdict(figs, qps=24, replicas=7, ttft_slo_ms=500, tpot_slo_ms=12)
    assert "p99 TPOT is 12.04 ms against the 12 ms SLO" in text
    assert ", 1 request lost." in text


def test_a_run_broken_by_lost_requests_alone_says_so_not_its_p99():
    # One replica killed: 193 requests shed while those answered kept p99 TTFT at 513 ms of a
    # 1 s SLO; the verdict gave "p99 TTFT is 513 ms" as what broke it.
    figs, text = page_figures("first-model-one-gpu", "kill-replica")
    assert figs["ttft_p99_ms"] < 1000 and figs["shed"] > 0
    lost = figs["shed"] + figs["timed_out"] + figs["failed"]
    assert f"the SLO breaks after 60 s: {lost} requests lost (p99 TTFT of those answered" in text
    assert text.count("requests lost") == 1


def test_one_request_lost_on_a_dead_replica_is_singular():
    figs, text = page_figures("agentic-prefix-sharing", "kill-replica")
    assert figs["failed"] == 1
    assert "1 request running on the dead replica is lost" in text


# --- the routing scenario teaches the question's lesson -----------------------------------


@pytest.mark.parametrize(
    "slug", ["long-context-rag", "agentic-prefix-sharing", "voice-agent-latency-budget"]
)
def test_prefix_aware_routing_beats_round_robin_where_the_reference_requires_it(slug):
    # The scenario sent 2,000 conversations of 0.75 x the prompt whatever the question: both
    # routers collapsed, and on long-context-rag prefix-aware came out worse (p99 111 s
    # against 97 s) where the reference calls prefix-aware routing a requirement.
    rr, rr_text = page_figures(slug, "routing", 0)
    aware, aware_text = page_figures(slug, "routing", 1)
    assert aware["prefix_hit_rate"] > 0.8 > 0.2 > rr["prefix_hit_rate"]
    assert aware["ttft_p99_ms"] < rr["ttft_p99_ms"] / 3
    assert aware["goodput_share"] > rr["goodput_share"]
    if slug != "long-context-rag":  # its 10% cold 30k prompts break 2 s whatever the router
        assert aware["holds_slo"] and not rr["holds_slo"], (aware_text, rr_text)


def test_the_routing_groups_come_from_the_question_and_the_kv_pool():
    voice = routed_traffic(reference_design("voice-agent-latency-budget"))
    # 3,000 of the 3,050 prompt tokens cached (the plan's 98.36%), 2,000 of them the system
    # prompt every call shares; the 6,000 live calls are more than 7 pools hold.
    assert (voice.tokens, voice.common, voice.share, voice.question_groups) == (
        3000, 2000, 1.0, 6000
    )  # fmt: skip
    assert voice.per_replica < voice.groups < 7 * voice.per_replica < 6000
    assert "host-memory KV tier" in voice.note
    rag = routed_traffic(reference_design("long-context-rag"))
    assert (rag.tokens, rag.common, rag.share) == (28000, 0, 0.9)
    assert rag.groups > rag.per_replica  # more than one replica holds: round-robin thrashes
    for slug in ("chat-api-50qps", "structured-extraction-api", "rl-rollout-generation"):
        assert routed_traffic(reference_design(slug)) is None


@pytest.mark.parametrize("slug", ["chat-api-50qps", "structured-extraction-api"])
def test_where_prefixes_do_not_matter_the_two_routers_come_out_close(slug):
    rr, _ = page_figures(slug, "routing", 0)
    aware, _ = page_figures(slug, "routing", 1)
    assert rr["prefix_hit_rate"] == pytest.approx(aware["prefix_hit_rate"], abs=0.02)
    assert aware["ttft_p99_ms"] == pytest.approx(rr["ttft_p99_ms"], rel=0.25)
    assert aware["holds_slo"] == rr["holds_slo"]


def test_a_ttft_splits_into_the_requests_own_prefill_and_its_queueing():
    # One slot, a 1 s prefill per prompt and one decode step: a request's TTFT is its own
    # prefill plus its wait for the slot, and the figures keep the two apart (the planner's
    # p99 TTFT is the first alone; the panel names the second where that breaks the SLO).
    replica = ReplicaModel(
        max_batch=1,
        kv_tokens=10**6,
        step_base_s=0.001,
        step_per_stream_s=0.0,
        prefill_s_per_token=0.01,
    )
    workload = Workload(qps=0.7, input_tokens=100, output_tokens=2, length_dist="fixed")
    result = simulate(replica, workload, Scenario(replicas=1, seconds=600))
    figs = figures(result)
    waits = [f - a - 1.0 for a, f in zip(result.arrival, result.first_token, strict=True) if f == f]
    assert figs["own_prefill_p99_ms"] == pytest.approx(1000)
    assert figs["queued_p99_ms"] == pytest.approx(percentile_ms(waits, 99), abs=0.001)
    assert figs["queued_p99_ms"] > 1000  # at 70% busy, the p99 request waits a prefill or more


def percentile_ms(values: list[float], q: float) -> float:
    from simulator.engine import percentile

    return percentile([max(v, 0.0) for v in values], q) * 1000


def _ttft_run(ttfts: list[float], *, qps: float, slo_s: float = 1.0) -> Result:
    """A finished run of requests arriving every 1/qps s, each with its TTFT (inf: shed)."""
    n = len(ttfts)
    arrival = [i / qps for i in range(n)]
    lost = [math.isinf(t) for t in ttfts]
    first = [math.nan if x else a + t for a, t, x in zip(arrival, ttfts, lost, strict=True)]
    return Result(
        seconds=n / qps, arrival=arrival, first_token=first,
        finish=[f + 1 for f in first], output_tokens=[10] * n,
        status=[SHED if x else DONE for x in lost], prefix_hit=[False] * n,
        admitted_at=list(arrival), left=[f + 1 for f in first], series=[], events=[],
        area_in_system=1.0, prefill_tokens=0, replicas_added=[], ttft_slo_s=slo_s,
        tpot_slo_s=1.0,
    )  # fmt: skip


def test_at_low_load_one_slow_request_is_no_break_and_a_break_is_timed_by_its_requests():
    # 1 QPS: a 5 s bin holds five requests, whose p99 is their slowest. One slow request at
    # 5 s is within the 1% a p99 allows of the first hundred: no break "after 5 s".
    calm = [0.2] * 240
    calm[5] = 3.0
    assert slo_breaks(_ttft_run(calm, qps=1)) == []
    # The queue builds from 60 s: the break is timed there, not at the start of the minutes-
    # long window it falls in, and it ends with the last slow request.
    slow = [0.2] * 60 + [2.0] * 60 + [0.2] * 120
    assert slo_breaks(_ttft_run(slow, qps=1)) == [(60.0, 120.0)]
    # Requests shed from 60 s on break it from then.
    shed = [0.2] * 60 + [math.inf] * 180
    assert slo_breaks(_ttft_run(shed, qps=1))[0][0] == 60.0
    # Broken from the start at a higher load too.
    assert slo_breaks(_ttft_run([2.0] * 400, qps=20)) == [(0.0, 20.0)]


def test_an_overloaded_run_is_not_said_to_recover_for_the_requests_still_queued_at_its_end():
    # Three times what one slot serves: the last requests never leave the queue, so they were
    # counted nowhere, and the last slow ones ended 30 s before the window: "it recovers".
    replica = ReplicaModel(
        max_batch=1, kv_tokens=10**6, step_base_s=0.001, step_per_stream_s=0.0,
        prefill_s_per_token=0.01,
    )  # fmt: skip
    workload = Workload(qps=3, input_tokens=100, output_tokens=2, length_dist="fixed")
    result = simulate(replica, workload, Scenario(replicas=1, seconds=240, seed=1, ttft_slo_s=2.0))
    figs = figures(result)
    assert figs["slo_broken_at_s"] == 0.0
    assert figs["recovered_at_s"] is None
    assert slo_breaks(result)[-1][1] == 240.0
