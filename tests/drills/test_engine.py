"""Drills drawn from the catalogues: the expected value each shows is the planner's, the
checker agrees with it, and a seed reproduces a drill."""

from __future__ import annotations

import math

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

SEEDS = range(200)


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
def test_the_expected_value_is_the_planners_and_the_checker_agrees_for_200_seeds(kind):
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


def test_unknown_and_unavailable_kinds_and_bad_seeds_are_refused_in_a_sentence():
    with pytest.raises(engine.DrillError, match="Unknown drill kind 'kv'"):
        engine.drill_generate("kv", 1)
    with pytest.raises(engine.DrillError, match="not available yet"):
        engine.drill_generate("ttft", 1)
    with pytest.raises(engine.DrillError, match="whole number"):
        engine.drill_generate("weights", -1)
