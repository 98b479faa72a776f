"""Tensor parallelism's all-reduces in the capacity plan.

Past TP = 1 each layer all-reduces the hidden vector of every token twice (Megatron-LM): the
plan adds t_lat + n tau_ar to a prefill of n tokens and t_ar = t_lat + N_batch tau_ar to a
decode step, on the catalogue's interconnect. At TP = 1 there is none, and the plan is what it
was: the TTFT is the prefill's compute alone and the TPOT the slower of memory and compute.
"""

from __future__ import annotations

import pytest

from planner.engine import load_catalog, plan
from planner.engine.capacity import allreduce_s, prefill_flops, ttft_s
from simulator.engine.design import replica_from_plan
from simulator.services import _plan
from tests.simulator.bank import BANK, PREFILL_ONLY, reference_design

ALLREDUCE_STEPS = {"r_ring", "tau_ar", "t_lat", "t_ar"}
GENERATING = [slug for slug in BANK if slug not in PREFILL_ONLY]
CATALOG = load_catalog()
# The TP-4 70B question's givens: AWQ Llama-3.1-70B on RTX 4090s through host memory.
SEVENTY_B = dict(
    model="llama-3.1-70b-instruct", gpu="rtx-4090", weights="awq-int4", kv="bf16", tp=4,
    context=8192, prompt_len=2000, out_len=500, overhead_gib=3.5, qps=1,
)  # fmt: skip


def figures(result: dict) -> dict[str, float]:
    return {s["name"]: s["value"] for s in result["steps"]}


def compute_ttft_ms(result: dict, model: str) -> float:
    """The prefill's compute alone for the plan's figures (ms), by the planner's formula."""
    m = CATALOG.model(model)
    flops = prefill_flops(
        linear_params=m.params_per_token - m.embedding_params,
        attention_width=m.attention_width,
        layers=m.layers,
        prompt_tokens=result["prompt_tokens"],
    )
    tflops, eff = result["tflops"], result["prefill_eff"]
    return ttft_s(flops=flops, tflops=tflops, efficiency=eff, tp=result["tp"]) * 1000


@pytest.mark.parametrize("slug", GENERATING)
def test_a_tp_1_plan_has_no_allreduce_and_its_figures_are_compute_and_reads_alone(slug) -> None:
    result = _plan(reference_design(slug).plan_kwargs)
    if result["tp"] > 1:
        assert result["allreduce_s_per_token"] > 0 and result["allreduce_latency_s"] > 0
        assert ALLREDUCE_STEPS <= set(figures(result))
        return
    assert result["allreduce_s_per_token"] == result["allreduce_latency_s"] == 0
    assert not ALLREDUCE_STEPS & set(figures(result))
    assert not any(n.startswith("All-reduce") for n in result["notes"])
    steps = figures(result)
    if "t_mem" in steps and "t_step" not in steps and result["prefix_hit"] == 0:
        assert steps["t_tok"] == pytest.approx(max(steps["t_mem"], steps["t_cmp"]), rel=1e-3)


def test_a_tp_1_prefill_is_its_compute_alone() -> None:
    result = plan(**SEVENTY_B | {"gpu": "h200", "weights": "fp8", "tp": 1})
    assert result["ttft_ms"] == pytest.approx(compute_ttft_ms(result, SEVENTY_B["model"]))
    assert allreduce_s(layers=80, hidden_size=8192, tp=1, tokens=2000, bandwidth_bytes_s=1e9,
                       latency_s=1e-3) == 0  # fmt: skip


def test_a_tp_4_plan_adds_the_prefills_and_the_steps_allreduces() -> None:
    result = plan(**SEVENTY_B)
    steps = figures(result)
    tau, t_lat = result["allreduce_s_per_token"], result["allreduce_latency_s"]
    # The ring's share, the per-token time over the 4090's 15.75 GB/s and the 160 x 25 us.
    assert steps["r_ring"] == pytest.approx(1.5)
    assert tau == pytest.approx(2 * 80 * 1.5 * 8192 * 2 / 15.75e9)
    assert t_lat == pytest.approx(160 * 25e-6)
    # TTFT: the compute, then every prompt token's all-reduce and one pass's latency.
    compute = compute_ttft_ms(result, SEVENTY_B["model"])
    assert result["ttft_ms"] == pytest.approx(compute + (2000 * tau + t_lat) * 1000)
    # TPOT: the slower of memory and compute, then the step's all-reduces at the batch.
    t_ar = t_lat + result["batch"] * tau
    assert steps["t_ar"] == pytest.approx(t_ar * 1000, rel=1e-3)
    assert result["tpot_ms"] == pytest.approx(
        max(steps["t_mem"], steps["t_cmp"]) + t_ar * 1000, rel=1e-3
    )


def test_the_70b_prefill_allreduce_is_about_half_a_second_as_the_question_reasons() -> None:
    result = plan(**SEVENTY_B)
    prefill_ar = 2000 * result["allreduce_s_per_token"] + result["allreduce_latency_s"]
    assert prefill_ar == pytest.approx(0.503, abs=0.005)
    assert result["ttft_ms"] == pytest.approx(1348, abs=1)
    # At 44 streams a step all-reduces about 11 ms of bytes after 4 ms of latency.
    assert result["batch"] == 44
    assert 44 * result["allreduce_s_per_token"] * 1000 == pytest.approx(11, abs=0.1)
    assert result["tpot_ms"] == pytest.approx(41.1, abs=0.1)


def test_the_derivation_shows_the_allreduce_lines_and_the_notes_split_the_ttft() -> None:
    result = plan(**SEVENTY_B)
    names = [s["name"] for s in result["steps"]]
    for name in ("r_ring", "tau_ar", "t_lat", "t_ar"):
        assert name in names
    assert names.index("t_ar") > names.index("t_cmp")
    ttft = next(s for s in result["steps"] if s["name"] == "ttft_cold")
    assert r"\tau_{\mathrm{ar}}" in ttft["formula_latex"] or "tau" in ttft["formula_latex"]
    note = next(n for n in result["notes"] if n.startswith("All-reduce at TP 4 over"))
    assert "PCIe" in note and "160 a forward pass" in note
    assert any("and its all-reduces (503.3 ms): 1348 ms" in n for n in result["notes"])


def test_every_gpu_in_the_catalogue_names_its_interconnect() -> None:
    for key, gpu in CATALOG.gpus.items():
        assert gpu.interconnect, key
        assert gpu.allreduce_bandwidth.magnitude > 0 and gpu.allreduce_latency.magnitude > 0, key


def test_the_simulated_replica_prefills_the_plans_prompt_in_the_plans_ttft() -> None:
    # One formula: the simulator takes the prefill's all-reduce from the plan's figures.
    result = plan(**SEVENTY_B)
    replica = replica_from_plan(result, model=SEVENTY_B["model"], output_tokens=500).replica
    assert replica.prefill_s(2000) * 1000 == pytest.approx(result["ttft_ms"], rel=1e-6)


def test_a_larger_tp_suggested_to_a_single_gpu_plan_says_it_adds_all_reduces() -> None:
    # A TP 1 plan has no all-reduces for a larger TP to keep: it gains them.
    qwen = dict(
        model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="bf16", kv="bf16", context=8192,
        prompt_len=512, out_len=256, qps=10, tpot_slo_ms=10,
    )  # fmt: skip
    single = plan(**qwen, tp=1)
    assert not single["feasible"]
    assert "plus the all-reduces TP 4 adds" in single["reason"], single["reason"]
    assert "all-reduces stay" not in single["reason"]
    split = plan(**qwen, tp=2)
    assert "TP 4 (about 6.464 ms" in split["reason"] and "all-reduces stay" in split["reason"]
