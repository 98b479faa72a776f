"""The spread of prompt lengths in the planner's queueing estimate (ttft_p99_queued_ms).

Prompts are drawn uniformly over +-s of the mean (0.5 by default, as the simulator draws them),
so a prompt's own tokens have a coefficient of variation c_n = s / sqrt(3), and a prefill's time
spreads by c_n x u dt/du to first order: the linear layers once, attention twice. That spread
joins the prefix cache's hits and misses in c_s, the prefill queue's service variability. It
moves the queueing estimate and nothing else: the fleet and its feasibility are sized on the
mean prompt, and every shipped question's figures depend on them.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest
from django.test import Client

from planner.engine import plan
from planner.engine.capacity import (
    DEFAULT_PROMPT_SPREAD,
    QUEUE_NAMES,
    PlanError,
    prefill_flops,
    ttft_p99_queued,
    ttft_s,
)
from planner.engine.catalog import load_catalog
from planner.forms import DEFAULTS, CapacityForm
from simulator.engine.fleet import _lengths
from simulator.services import RunSpec, _plan, fleet_run
from tests.planner.test_ttft_queueing import brief_inputs
from tests.simulator.bank import BANK, PREFILL_ONLY, reference_design

GENERATING = [slug for slug in BANK if slug not in PREFILL_ONLY]
QWEN = load_catalog().model("qwen2.5-7b")
# A long prompt on an H200, where attention is a good part of the prefill.
LONG = {"model": "qwen2.5-7b", "gpu": "h200", "context": 32768, "prompt_len": 30000,
        "out_len": 256, "qps": 4, "ttft_slo_ms": 5000, "tpot_slo_ms": 100}  # fmt: skip


def prefill_s(tokens: float, cached: float = 0.0) -> float:
    """A Qwen2.5-7B prefill on one H200 at the default 0.5 efficiency, by the named formulas."""
    flops = prefill_flops(
        linear_params=QWEN.params - QWEN.embedding_params, attention_width=QWEN.attention_width,
        layers=QWEN.layers, prompt_tokens=tokens, cached_tokens=cached,
    )  # fmt: skip
    return ttft_s(flops=flops, tflops=989.4, efficiency=0.5)


def steps(result: dict) -> dict[str, float]:
    return {s["name"]: s["value"] for s in result["steps"]}


# --- the input --------------------------------------------------------------------------------


def test_the_default_spread_is_the_simulators_uniform_half_either_side() -> None:
    drawn = _lengths(random.Random(7), 1000, "uniform", 40_000)
    mean = sum(drawn) / len(drawn)
    sd = math.sqrt(sum((n - mean) ** 2 for n in drawn) / len(drawn))
    assert (min(drawn), max(drawn)) == (500, 1500)
    assert DEFAULT_PROMPT_SPREAD == 0.5
    assert sd / mean == pytest.approx(DEFAULT_PROMPT_SPREAD / math.sqrt(3), rel=0.02)


@pytest.mark.parametrize("bad", [1.5, -0.1, math.nan])
def test_a_spread_out_of_range_is_refused_with_what_it_means(bad: float) -> None:
    with pytest.raises(PlanError) as refused:
        plan(**LONG, prompt_spread=bad)
    assert refused.value.field == "prompt_spread"
    assert str(refused.value) == (
        "prompt_spread must be between 0 and 1: the share of the mean prompt that prompts' "
        "lengths spread either side of it, from 0 (every prompt the mean length) to 1 (prompts "
        "from almost nothing to twice the mean)."
    )


def test_the_form_says_what_a_spread_out_of_range_means() -> None:
    form = CapacityForm({**DEFAULTS, "prompt_spread": "2"})
    assert not form.is_valid()
    assert form.errors["prompt_spread"] == [
        "Give a number from 0 to 1: the share of the mean prompt that prompts' lengths spread "
        "either side of it, from 0 (every prompt the mean length) to 1 (prompts from almost "
        "nothing to twice the mean)."
    ]


# --- the formulas, by hand -----------------------------------------------------------------------


def test_a_linear_prefill_spreads_its_queue_as_its_prompts_spread() -> None:
    # The hand case of test_ttft_queueing with prompts +-50%: a 0.5 s prefill linear in its
    # prompt spreads by 0.5 s x 0.5/sqrt(3) = 144.3 ms, so c_s^2 = 1/12 joins c_a^2 = 1/4:
    # W_pre = (1/4 + 1/12)/2 x 0.5/0.5 x 0.5 s = 83.3 ms, p99 83.3 / 0.5 x ln 50 = 652.0 ms
    # (489.0 ms with every prompt the mean). The slots' 1890.8 ms, the 20 ms step and the
    # 500 ms prefill are unchanged.
    queued = ttft_p99_queued(
        prefill_s=0.5, step_s=0.02, instances=4, load_req_s=1, hold_s=8, slots=10,
        prefill_sd_s=0.5 * 0.5 / math.sqrt(3),
    )  # fmt: skip
    assert queued == pytest.approx(0.02 + 1.8908 + 0.6520 + 0.5, abs=5e-4)


def test_a_miss_spreads_by_how_fast_its_prefill_grows_with_its_prompt() -> None:
    result = plan(**LONG)
    figures = steps(result)
    n = 30000
    c_n = 0.5 / math.sqrt(3)
    slope = (prefill_s(n * 1.001) - prefill_s(n * 0.999)) / (0.002 * n)  # s per token
    assert figures["c_n"] == pytest.approx(c_n)
    assert figures["sigma_cold"] / 1000 == pytest.approx(c_n * n * slope, rel=1e-4)
    # Attention makes a 30k prompt grow faster than in proportion: more spread than c_n.
    elasticity = n * slope / prefill_s(n)
    assert 1.3 < elasticity < 2
    assert figures["c_s"] == pytest.approx(c_n * elasticity, rel=1e-4)
    assert result["ttft_queue"]["prefill_cv"] == pytest.approx(figures["c_s"])


def test_hits_spread_by_their_own_tokens_and_misses_by_their_whole_prompt() -> None:
    # As the simulator draws them: a request with the shared prefix is the prefix and its own
    # tokens, spread around their mean; one without is its whole prompt, spread.
    result = plan(**LONG, prefix_hit=0.9, prefix_len=28000)
    figures = steps(result)
    n, c, c_n = 30000, 28000, 0.5 / math.sqrt(3)
    u = n - c
    hit_slope = (prefill_s(c + u * 1.001, c) - prefill_s(c + u * 0.999, c)) / (0.002 * u)
    miss_slope = (prefill_s(n * 1.001) - prefill_s(n * 0.999)) / (0.002 * n)
    sd_hit, sd_miss = c_n * u * hit_slope, c_n * n * miss_slope
    assert figures["sigma_hit"] / 1000 == pytest.approx(sd_hit, rel=1e-4)
    assert figures["sigma_cold"] / 1000 == pytest.approx(sd_miss, rel=1e-4)
    # The law of total variance: each class's own spread, then the spread between them.
    hit_s, miss_s = prefill_s(n, c), prefill_s(n)
    mean = 0.9 * hit_s + 0.1 * miss_s
    second = 0.9 * (hit_s**2 + sd_hit**2) + 0.1 * (miss_s**2 + sd_miss**2)
    assert figures["c_s"] == pytest.approx(math.sqrt(second / mean**2 - 1), rel=1e-4)
    assert figures["c_s"] > steps(plan(**LONG, prefix_hit=0.9, prefix_len=28000,
                                       prompt_spread=0))["c_s"]  # fmt: skip


def test_a_token_hit_rate_caches_a_share_that_grows_with_the_prompt() -> None:
    result = plan(**LONG, prefix_hit=0.5)
    figures = steps(result)
    n, c_n = 30000, 0.5 / math.sqrt(3)

    def warm(tokens: float) -> float:
        return prefill_s(tokens, 0.5 * tokens)

    slope = (warm(n * 1.001) - warm(n * 0.999)) / (0.002 * n)
    assert "sigma_cold" not in figures
    assert figures["sigma_hit"] / 1000 == pytest.approx(c_n * n * slope, rel=1e-4)
    assert figures["c_s"] == pytest.approx(figures["sigma_hit"] / 1000 / warm(n), rel=1e-4)


def test_a_prompt_that_fills_the_context_has_no_spread() -> None:
    result = plan(**(LONG | {"prompt_len": None}))
    row = next(s for s in result["steps"] if s["name"] == "c_n")
    assert row["value"] == 0 and "fills the context" in row["label"]
    assert steps(result)["c_s"] == 0


def test_no_spread_gives_the_figure_with_every_prompt_the_mean() -> None:
    # With no spread every prompt is the mean one; the default spread lengthens the wait.
    inputs = brief_inputs("tensor-parallel-70b-midrange")
    assert plan(**inputs, prompt_spread=0)["ttft_p99_queued_ms"] == pytest.approx(2282.9, abs=0.1)
    assert plan(**inputs)["ttft_p99_queued_ms"] == pytest.approx(2586.1, abs=0.1)


def test_a_wider_spread_lengthens_only_the_wait_behind_other_prefills() -> None:
    queues = [plan(**LONG, prompt_spread=s)["ttft_queue"] for s in (0, 0.25, 0.5, 1)]
    waits = [q["prefill_wait_p99_ms"] for q in queues]
    assert waits == sorted(waits) and waits[0] < waits[-1]
    assert len({q["slot_wait_p99_ms"] for q in queues}) == 1
    rest = [q["ttft_p99_ms"] - q["prefill_wait_p99_ms"] for q in queues]
    assert rest == pytest.approx([rest[0]] * len(rest))


# --- the plan does not move -------------------------------------------------------------------

# Every shipped generating question's fleet and feasibility as the planner sizes them, the
# all-reduce counted past TP = 1: (instances, GPUs, feasible).
SHIPPED_FLEETS = {
    "agentic-prefix-sharing": (30, 30, True),
    "chat-api-50qps": (10, 10, True),
    "first-model-one-gpu": (1, 1, True),
    "incident-ttft-regression": (22, 22, True),
    "knee-load-test-framework-choice": (10, 10, True),
    "long-context-rag": (21, 21, False),
    "metered-gateway-overload": (20, 40, True),
    "moe-mixtral-serving": (2, 4, True),
    "multi-region-failover": (20, 20, True),
    "multi-tenant-lora": (8, 8, True),
    "offline-batch-summaries": (26, 26, None),
    "pd-disaggregation-long-prompts": (37, 37, True),
    "quantize-to-cut-cost": (6, 12, True),
    "reasoning-model-long-outputs": (9, 18, True),
    "rl-rollout-generation": (8, 8, None),
    "scale-to-zero-cold-starts": (1, 1, True),
    "spec-decoding-assistant": (7, 7, True),
    "structured-extraction-api": (7, 7, True),
    "tensor-parallel-70b-midrange": (4, 16, True),
    "vision-language-api": (18, 18, True),
    "voice-agent-latency-budget": (7, 7, True),
}
SIZING = ("n_inst", "n_gpu", "n_inst_rate", "feasible", "binding", "r_inst_req_s",
          "r_load_req_s", "ttft_p99_ms", "tpot_ms", "monthly_usd", "at_peak")  # fmt: skip


def test_every_shipped_question_is_listed() -> None:
    assert sorted(SHIPPED_FLEETS) == GENERATING


@pytest.mark.parametrize("slug", GENERATING)
def test_the_spread_moves_no_fleet_and_no_feasibility(slug: str) -> None:
    inputs = brief_inputs(slug)
    plans = [plan(**inputs, prompt_spread=s) for s in (0, DEFAULT_PROMPT_SPREAD, 1)]
    default = plans[1]
    assert (default["n_inst"], default["n_gpu"], default["feasible"]) == SHIPPED_FLEETS[slug]
    for other in (plans[0], plans[2]):
        assert {k: other[k] for k in SIZING} == {k: default[k] for k in SIZING}, slug
        # Every step but the queueing estimate's shows the same figure.
        sized = [(s["name"], s["value"]) for s in other["steps"] if s["name"] not in QUEUE_NAMES]
        assert sized == [
            (s["name"], s["value"]) for s in default["steps"] if s["name"] not in QUEUE_NAMES
        ]


# --- against the simulator --------------------------------------------------------------------


def ratio_to_simulated(slug: str, spread: float) -> float | None:
    """The queueing figure over the simulator's p99 TTFT (its median over three seeds, 120 s
    at the peak) on the fleet the figure is for: the planner's instances behind round-robin."""
    design = reference_design(slug)
    result = _plan(design.plan_kwargs | {"prompt_spread": spread})
    if result["ttft_p99_queued_ms"] is None:
        return None
    simulated = [
        fleet_run(design, RunSpec(seconds=120.0, seed=seed, label="peak load",
                                  replicas=result["n_inst"], router="round-robin"))
        ["figures"]["ttft_p99_ms"]
        for seed in (1, 2, 3)
    ]  # fmt: skip
    return result["ttft_p99_queued_ms"] / statistics.median(simulated)


# Where the queue behind other prefills is a good part of the p99 and the estimate ran short
# with every prompt the mean (0.68, 0.82 and 0.84 when written), the spread brings it to
# within 20% (0.83, 0.99 and 1.04).
@pytest.mark.parametrize(
    "slug",
    ["pd-disaggregation-long-prompts", "incident-ttft-regression", "metered-gateway-overload"],
)
def test_counting_the_spread_brings_short_estimates_towards_the_simulator(slug: str) -> None:
    before, after = ratio_to_simulated(slug, 0), ratio_to_simulated(slug, DEFAULT_PROMPT_SPREAD)
    assert before is not None and after is not None
    assert before < 0.85 and 0.8 <= after <= 1.2, (slug, before, after)


# Where a measured knee is more than the planner's step times give with every stream that fits
# (first-model-one-gpu's 750 tok/s), the simulated replica runs at the knee, its steps and
# prefills shortened, while the planner's waits use its own longer step times: its estimate
# stays on the safe side, 1.80 times the simulator's when written.
KNEE_BEYOND_STEPS = {"first-model-one-gpu"}


@pytest.mark.parametrize("slug", GENERATING)
def test_the_estimate_is_within_0_8x_to_1_65x_of_the_simulator_at_every_peak(slug: str) -> None:
    # 0.83 (pd-disaggregation-long-prompts) to 1.59 (voice-agent-latency-budget) when written;
    # with every prompt the mean the low end was 0.68.
    ratio = ratio_to_simulated(slug, DEFAULT_PROMPT_SPREAD)
    if ratio is None:  # a brief without a TTFT SLO: no figure
        assert brief_inputs(slug).get("ttft_slo_ms") is None
        return
    note = fleet_run(reference_design(slug), RunSpec(seconds=10.0))["note"]
    assert ("they are shortened to" in note) == (slug in KNEE_BEYOND_STEPS), (slug, note)
    if slug in KNEE_BEYOND_STEPS:
        assert 1.0 <= ratio <= 2.0, (slug, ratio)
    else:
        assert 0.8 <= ratio <= 1.65, (slug, ratio)


# --- on the capacity page ---------------------------------------------------------------------


def test_the_page_plans_with_the_default_spread_and_shows_its_steps(client: Client) -> None:
    query = {"model": "qwen2.5-7b-instruct", "gpu": "h200", "weights": "bf16", "kv": "bf16",
             "context": 32768, "prompt_len": 30000, "out_len": 256, "qps": 4, "rho": 0.7,
             "mem_util": 0.9, "bw_eff": 0.7, "tp": 1, "tpot_slo_ms": 100,
             "ttft_slo_ms": 5000, "prefill_eff": 0.5, "prefix_hit": 0}  # fmt: skip
    # A link made before the input existed plans with its default.
    page = client.get("/planner/capacity/", query)
    assert page.context["form"].cleaned_data["prompt_spread"] == DEFAULT_PROMPT_SPREAD
    html = page.content.decode()
    assert 'name="prompt_spread" value="0.5"' in html
    for name in ("c_n", "sigma_cold", "c_s"):
        assert f'id="step-{name}"' in html, name
    assert "s_len / √3" in html and "n dF/dn" in html
    assert 'id="plan-prompt-spread">prompts ±50% of the mean<' in html
    wider = client.get("/planner/capacity/", query | {"prompt_spread": 1}).context["result"]
    assert wider["ttft_p99_queued_ms"] > page.context["result"]["ttft_p99_queued_ms"]
    assert wider["n_gpu"] == page.context["result"]["n_gpu"]


def test_the_page_shows_a_bad_spread_beside_its_field(client: Client) -> None:
    query = {name: value for name, value in DEFAULTS.items() if value not in (None, False)}
    response = client.get("/planner/capacity/", query | {"prompt_spread": "1.2"})
    html = response.content.decode()
    assert response.context["result"] is None
    assert "Prompt length spread" in html and "twice the mean" in html


def test_a_blank_prompt_length_is_not_said_to_spread(client: Client) -> None:
    # Every prompt fills the context, so the plan counts no spread (c_n = 0) whatever the
    # input says, and the headline says what the figure counts.
    query = {name: value for name, value in DEFAULTS.items() if value not in (None, False)}
    page = client.get("/planner/capacity/", query | {"prompt_len": "", "context": 4096,
                                                     "qps": 5, "ttft_slo_ms": 3000})  # fmt: skip
    assert page.context["result"]["ttft_queue"]["prompt_cv"] == 0
    html = page.content.decode()
    assert 'id="plan-prompt-spread">every prompt the same length<' in html
    assert "±50%" not in html
