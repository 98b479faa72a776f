"""Drills drawn from the catalogues: the expected value each shows is the planner's, the
checker agrees with it, and a seed reproduces a drill."""

from __future__ import annotations

import math
import re

import pytest

from drills import engine
from planner.engine import (
    kv_bytes_per_token,
    load_catalog,
    n_gpu,
    n_inst,
    plan,
    r_inst,
    tpot_floor,
    weights_bytes,
)
from planner.engine.capacity import prefill_flops, ttft_s

# Eighty seeds draw every model and GPU of the catalogue (checked below); each costs a few
# planner runs per kind, twice: the drill's and `planner_value`'s.
SEEDS = range(80)


def planner_value(drill: engine.Drill) -> float:
    """The same quantity from the planner engine for the drill's setting, computed apart from
    the drill's own code: `plan` where it reports the quantity, else the named formula."""
    s = drill.setting
    catalog = load_catalog()
    if drill.kind == "kv_per_token":
        m, k = catalog.model(s["model"]), catalog.kv_dtype(s["kv"])
        b = kv_bytes_per_token(
            layers=m.layers, kv_heads=m.kv_heads, head_dim=m.head_dim, kv_bytes=k.bytes
        )
        assert b == plan(model=s["model"], gpu="h200", kv=s["kv"])["kv_bytes_per_token"]
        return b / 1024
    if drill.kind == "weights":
        m, w = catalog.model(s["model"]), catalog.weight_dtype(s["weights"])
        b = weights_bytes(
            params=m.params,
            embedding_params=m.embedding_params,
            bytes_per_param=w.bytes_per_param,
            embedding_bytes_per_param=w.embedding_bytes_per_param,
        )
        assert b == plan(model=s["model"], gpu="h200", weights=s["weights"])["weights_bytes"]
        return b / 1e9
    inputs = {
        k: s[k]
        for k in ("model", "gpu", "weights", "kv", "context", "mem_util", "bw_eff",
                  "knee_tok_s", "out_len", "qps", "rho", "overhead_gib")
        if k in s
    }  # fmt: skip
    if drill.kind == "max_seqs":
        return plan(**inputs)["max_seqs"]
    if drill.kind == "ttft":
        result = plan(**inputs, prompt_len=s["prompt_len"], prefill_eff=s["prefill_eff"])
        m = catalog.model(s["model"])
        # The planner's named formulas over the active, non-embedding parameters.
        flops = prefill_flops(
            linear_params=m.params_per_token - m.embedding_params,
            attention_width=m.attention_heads * m.head_dim,
            layers=m.layers,
            prompt_tokens=s["prompt_len"],
        )
        assert math.isclose(flops, result["prefill_flops_miss"], rel_tol=1e-12)
        named = ttft_s(flops=flops, tflops=result["tflops"], efficiency=s["prefill_eff"])
        assert math.isclose(named * 1000, result["ttft_miss_ms"], rel_tol=1e-12)
        assert result["ttft_ms"] == result["ttft_miss_ms"]  # nothing cached
        return result["ttft_miss_ms"]
    if drill.kind == "cost_per_mtok":
        result = plan(**inputs)
        price = load_catalog().gpu(s["gpu"]).usd_per_hour
        assert (result["n_gpu"], result["usd_per_gpu_hour"]) == (s["n_gpu"], price)
        by_hand = result["n_gpu"] * price / (s["qps"] * s["out_len"] * 3600) * 1e6
        assert math.isclose(by_hand, result["cost_per_mtok_usd"], rel_tol=1e-12)
        return result["cost_per_mtok_usd"]
    if drill.kind == "tpot_floor":
        result = plan(**inputs)
        g = catalog.gpu(s["gpu"])
        named = tpot_floor(
            weights_bytes=result["weights_read_per_step_bytes"],
            bandwidth_bytes_s=float(g.bandwidth.magnitude),
            bw_eff=s["bw_eff"],
        )
        assert math.isclose(named * 1000, result["tpot_floor_ms"], rel_tol=1e-12)
        return result["tpot_floor_ms"]
    if drill.kind == "r_inst":
        result = plan(**inputs, hold_s=s["hold_s"])
        named = r_inst(
            knee_tok_s=s["knee_tok_s"],
            out_len_tok=s["out_len"],
            max_seqs=result["max_seqs"],
            hold_s=s["hold_s"],
        )
        assert math.isclose(named, result["r_inst_req_s"], rel_tol=1e-12)
        return result["r_inst_req_s"]
    rate = s["knee_tok_s"] / s["out_len"]
    instances = n_inst(peak_qps=s["qps"], rho=s["rho"], r_inst_req_s=rate)
    if drill.kind == "n_inst":
        return instances
    assert drill.kind == "n_gpu"
    return n_gpu(n_inst=instances, tp=s["tp"])


@pytest.mark.parametrize("kind", engine.AVAILABLE)
def test_the_expected_value_is_the_planners_and_the_checker_agrees_for_every_seed(kind):
    disagreements = []
    for seed in SEEDS:
        drill = engine.drill_generate(kind, seed)
        want = planner_value(drill)
        result = engine.drill_check(drill, repr(drill.expected))
        if not (
            math.isclose(drill.expected, want, rel_tol=1e-9)
            and math.isclose(result.expected, want, rel_tol=1e-9)
            and result.verdict == "correct"
        ):
            disagreements.append((seed, drill.expected, result.expected, want, result.verdict))
    assert disagreements == []


def test_the_seeds_draw_every_model_and_gpu_of_the_catalogue():
    drawn = [
        engine.drill_generate(kind, seed).setting for kind in engine.AVAILABLE for seed in SEEDS
    ]
    catalog = load_catalog()
    assert {s["model"] for s in drawn if "model" in s} == set(catalog.models)
    assert {s["gpu"] for s in drawn if "gpu" in s} == set(catalog.gpus)


def test_a_drill_is_of_the_kind_asked_and_in_the_unit_its_quantity_is_judged_in():
    for kind in engine.AVAILABLE:
        drill = engine.drill_generate(kind, 7)
        assert drill.kind == kind == drill.as_json()["kind"]
        assert drill.unit == drill.quantity["unit"] == drill.as_json()["unit"]


def test_a_seed_reproduces_its_drill_and_another_seed_draws_other_givens():
    for kind in engine.AVAILABLE:
        assert engine.drill_generate(kind, 42) == engine.drill_generate(kind, 42)
        fingerprints = {engine.drill_generate(kind, s).fingerprint for s in range(30)}
        assert len(fingerprints) > 5


def test_gb_for_gib_in_the_weights_gets_the_unit_hint_and_the_worked_solution_shows_both():
    drill = engine.drill_generate("weights", 3)
    gib = drill.expected * 1e9 / 1024**3
    result = engine.drill_check(drill, f"{gib:.3f} GB")
    assert result.verdict == "known_mistake"
    assert result.mistake == "gb-vs-gib"
    assert "GB vs GiB" in result.hint
    assert any("GiB" in line for line in drill.solution)


def test_the_factor_two_for_k_and_v_is_named():
    drill = engine.drill_generate("kv_per_token", 1)
    half = drill.expected / 2
    result = engine.drill_check(drill, f"{half} KiB")
    assert (result.verdict, result.mistake) == ("known_mistake", "k-and-v")


def test_qwen_7b_kv_per_token_is_56_kib_when_drawn():
    drills = [engine.drill_generate("kv_per_token", s) for s in range(200)]
    qwen = [d for d in drills if d.setting == {"model": "qwen2.5-7b-instruct", "kv": "bf16"}]
    assert qwen and all(d.expected == 56 for d in qwen)


def test_unknown_and_unavailable_kinds_and_bad_seeds_are_refused_in_a_sentence(monkeypatch):
    with pytest.raises(engine.DrillError, match="Unknown drill kind 'kv'"):
        engine.drill_generate("kv", 1)
    parked = engine.DrillKind("parked", "Parked", "Parked", "kv-wall", available=False,
                              why_unavailable="waits for a formula")  # fmt: skip
    monkeypatch.setitem(engine.KINDS, "parked", parked)
    with pytest.raises(engine.DrillError, match="not available yet: it waits for a formula"):
        engine.drill_generate("parked", 1)
    with pytest.raises(engine.DrillError, match="whole number"):
        engine.drill_generate("weights", -1)


def test_ttft_and_cost_are_drawn_like_every_other_kind():
    assert {"ttft", "cost_per_mtok"} <= set(engine.AVAILABLE)


def mistaken(drill: engine.Drill, kind: str) -> str:
    """The answer a candidate who made mistake `kind` writes: its formula over the givens."""
    spec = next(m for m in drill.quantity["mistakes"] if m["kind"] == kind)
    if "formula" in spec:
        return spec["formula"]
    text = drill.quantity["formula"]
    for name, instead in spec["replace"].items():
        text = re.sub(rf"\b{name}\b", f"({instead})", text)
    return text


TTFT_MISTAKES = ("model-flops-utilisation", "no-attention", "total-params",
                 "kv-heads-attention", "no-causal-mask")  # fmt: skip


@pytest.mark.parametrize("seed", range(0, 200, 25))
@pytest.mark.parametrize("kind", TTFT_MISTAKES)
def test_each_ttft_mistake_is_named_with_its_hint(kind, seed):
    drill = engine.drill_generate("ttft", seed)
    result = engine.drill_check(drill, mistaken(drill, kind))
    assert (result.verdict, result.mistake) == ("known_mistake", kind)
    assert result.hint


def test_leaving_out_attention_is_never_close_enough_to_pass():
    for seed in SEEDS:
        drill = engine.drill_generate("ttft", seed)
        result = engine.drill_check(drill, mistaken(drill, "no-attention"))
        assert result.verdict == "known_mistake", seed


def test_a_mixture_of_experts_prefills_its_active_parameters_and_all_experts_is_named():
    moe = [d for d in (engine.drill_generate("ttft", s) for s in SEEDS)
           if load_catalog().model(d.setting["model"]).is_moe]  # fmt: skip
    assert moe, f"no mixture of experts in {len(SEEDS)} seeds"
    for drill in moe:
        m = load_catalog().model(drill.setting["model"])
        assert drill.givens_dict["params_ne"] == str(m.active_params - m.embedding_params)
        result = engine.drill_check(drill, mistaken(drill, "all-experts"))
        assert (result.verdict, result.mistake) == ("known_mistake", "all-experts")
        assert any("mixture of experts" in line for line in drill.solution)


def test_qwen_7b_cold_prefill_by_hand():
    """Written out apart from the code: 2 × 6,525,621,760 × n + 2 × 28 × 128 × 28 × n²
    FLOP over mfu × the dense TFLOPS the weights run at."""
    catalog = load_catalog()
    drills = [engine.drill_generate("ttft", s) for s in SEEDS]
    qwen = [d for d in drills if d.setting["model"] == "qwen2.5-7b-instruct"]
    assert qwen
    for d in qwen:
        n, gpu = d.setting["prompt_len"], catalog.gpu(d.setting["gpu"])
        fp8 = d.setting["weights"] == "fp8" and gpu.fp8_tflops
        tflops = gpu.fp8_tflops if fp8 else gpu.bf16_tflops
        flops = 2 * 6525621760 * n + 2 * 28 * 128 * 28 * n**2
        want_ms = flops / (d.setting["prefill_eff"] * tflops * 1e12) * 1000
        assert math.isclose(d.expected, want_ms, rel_tol=1e-9)


COST_MISTAKES = ("prompt-tokens-counted", "rho-twice", "hours-vs-seconds")


@pytest.mark.parametrize("seed", range(0, 200, 25))
@pytest.mark.parametrize("kind", COST_MISTAKES)
def test_each_cost_mistake_is_named_with_its_hint(kind, seed):
    drill = engine.drill_generate("cost_per_mtok", seed)
    result = engine.drill_check(drill, mistaken(drill, kind))
    assert (result.verdict, result.mistake) == ("known_mistake", kind)


def test_pricing_one_gpu_instead_of_the_fleet_is_named():
    drill = next(d for d in (engine.drill_generate("cost_per_mtok", s) for s in SEEDS)
                 if d.setting["n_gpu"] > 1)  # fmt: skip
    result = engine.drill_check(drill, mistaken(drill, "gpu-count-forgotten"))
    assert (result.verdict, result.mistake) == ("known_mistake", "gpu-count-forgotten")


def test_cost_per_mtok_worked_solution_shows_the_hourly_bill_and_tokens():
    drill = engine.drill_generate("cost_per_mtok", 7)
    s = drill.setting
    assert drill.givens_dict["price"] == f"{s['usd_per_gpu_hour']!r} USD/h"
    assert any("USD/h" in line and "GPUs" in line for line in drill.solution)
    assert any("3600 s/h" in line and "Mtok/h" in line for line in drill.solution)
    result = engine.drill_check(drill, f"{drill.expected} USD/Mtok")
    assert result.verdict == "correct"


def test_an_unknown_kind_is_named_short_in_the_refusal():
    with pytest.raises(engine.DrillError) as refused:
        engine.drill_kind("x" * 10_000)
    assert "'xxxxx" in str(refused.value) and len(str(refused.value)) < 400


def test_the_ttft_question_reads_an_8000_token_prompt():
    seed = next(
        s for s in range(200) if engine.drill_generate("ttft", s).setting["prompt_len"] == 8000
    )
    assert "to prefill an 8000-token prompt" in engine.drill_generate("ttft", seed).question
    seed = next(
        s for s in range(200) if engine.drill_generate("ttft", s).setting["prompt_len"] == 4000
    )
    assert "to prefill a 4000-token prompt" in engine.drill_generate("ttft", seed).question
