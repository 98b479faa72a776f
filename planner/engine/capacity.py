"""Capacity formulas: from a model, a GPU and an SLO to a fleet size.

Each formula is written once, in the napkin-math language, in FORMULAS below. The named
Python functions, `plan()`, the planner page and its step-by-step derivation all evaluate
those same strings with the engine, so the number a candidate sees and the formula shown
beside it cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from sympy import Integer, Rational

from .catalog import DEFAULT_DIR, load_catalog
from .errors import NapkinError
from .evaluator import Evaluator, Quantity, bounded
from .parser import Line, UnitSpec, parse_line, parse_units
from .render import latex_number_unit, name_latex, to_latex
from .units import DIMENSIONLESS
from .worksheet import shown_in

DEFAULT_OVERHEAD_GB = 2.0


@dataclass(frozen=True)
class Formula:
    name: str  # the symbol it defines
    label: str
    expr: str  # napkin-math over the symbols of earlier formulas and the inputs
    unit: str | None  # the unit its value is shown in ("" a plain number, None readable)


# In the order of the derivation. Symbols: P params, P_emb embedding params, b_w / b_emb bytes
# per param, L layers, H_kv KV heads, d_head head dim, b_kv bytes per KV element, mem GPU
# memory, u memory utilisation, overhead non-KV memory per GPU, TP tensor parallelism, ctx
# context length, eta bandwidth efficiency, beta GPU bandwidth, T_out knee throughput,
# o_bar mean output length, lambda_peak peak QPS, rho utilisation target.
FORMULAS: dict[str, Formula] = {
    f.name: f
    for f in [
        Formula("W", "Weights", "(P - P_emb) * b_w + P_emb * b_emb", "GB"),
        Formula("kappa", "KV bytes per token", "2 * L * H_kv * d_head * b_kv / tok", "KiB/tok"),
        Formula("pool", "KV pool", "TP * (mem * u - overhead) - W", "GiB"),
        Formula("kv_stream", "KV per stream", "kappa * ctx", None),
        Formula("N_seq", "Concurrent streams (VRAM gate)", "max(floor(pool / kv_stream), 0)", ""),
        Formula("tpot", "TPOT floor (speed gate)", "W / (TP * eta * beta)", "ms"),
        Formula("r_inst", "Requests per instance", "T_out / o_bar", "req/s"),
        Formula("N_inst", "Instances", "ceil(lambda_peak / (rho * r_inst))", ""),
        Formula("N_GPU", "GPUs", "N_inst * TP", ""),
    ]
}


class PlanError(ValueError):
    """A planner input out of range, told in one sentence."""


def _exact(x: float | int) -> Rational:
    """A float from a form or the command line as the exact decimal it was written as."""
    if isinstance(x, int):
        return Integer(x)
    fraction = Fraction(repr(float(x)))
    return Rational(fraction.numerator, fraction.denominator)


def _q(x: float | int, unit: str = "") -> Quantity:
    """A Quantity of x units (unit text in the napkin language)."""
    value = _exact(x)
    if not unit:
        return Quantity(bounded(value, None))
    spec = parse_units(unit)
    return Quantity(bounded(value * spec.scale, None), spec.dim, spec.binary)


@cache
def _parsed(name: str) -> Line:
    return parse_line(FORMULAS[name].expr)


def _run(name: str, env: dict[str, Quantity]) -> Quantity:
    return Evaluator(env).eval(_parsed(name).expr)


# ---------------------------------------------------------------------------------------------
# The named formulas. Floats in, floats out, in the units the docstrings give.


def weights_bytes(
    *,
    params: float,
    embedding_params: float,
    bytes_per_param: float,
    embedding_bytes_per_param: float,
) -> float:
    """Weight memory W in bytes (B): (P − P_emb)·b_w + P_emb·b_emb.

    params and embedding_params are counts; the byte sizes are B per parameter (2 for BF16,
    1 for FP8, ~0.52 for AWQ-INT4 with its group scales; embeddings stay 2 in both).
    """
    env = {
        "P": _q(params),
        "P_emb": _q(embedding_params),
        "b_w": _q(bytes_per_param, "B"),
        "b_emb": _q(embedding_bytes_per_param, "B"),
    }
    return float(_run("W", env).magnitude)


def kv_bytes_per_token(*, layers: int, kv_heads: int, head_dim: int, kv_bytes: float) -> float:
    """KV-cache bytes per token (B/tok): 2 (K and V) × layers × KV heads × head dim × bytes.

    Qwen2.5-7B in BF16: 2 × 28 × 4 × 128 × 2 = 57344 B/tok = 56 KiB/tok.
    """
    env = {
        "L": _q(layers),
        "H_kv": _q(kv_heads),
        "d_head": _q(head_dim),
        "b_kv": _q(kv_bytes, "B"),
    }
    return float(_run("kappa", env).magnitude)


def kv_pool_bytes(
    *,
    memory_bytes: float,
    mem_util: float,
    weights_bytes: float,
    overhead_bytes: float,
    tp: int = 1,
) -> float:
    """Memory left for the KV cache, in bytes (B): TP × (memory × utilisation − overhead) − W.

    memory_bytes is one GPU's memory (B); overhead_bytes is the non-KV memory per GPU
    (activations at peak, CUDA graphs, the CUDA context: ~2 GB for a 7B model); weights_bytes
    is the whole model, split over the TP GPUs.
    """
    env = {
        "TP": _q(tp),
        "mem": _q(memory_bytes, "B"),
        "u": _q(mem_util),
        "overhead": _q(overhead_bytes, "B"),
        "W": _q(weights_bytes, "B"),
    }
    return float(_run("pool", env).magnitude)


def max_concurrent_seqs(
    *, kv_pool_bytes: float, kv_bytes_per_token: float, context_tokens: int
) -> int:
    """The VRAM gate: how many sequences of `context_tokens` tokens fit in the KV pool (count).

    ⌊pool / (κ × ctx)⌋, never below zero; pool in B, κ in B/tok.
    """
    kappa = _q(kv_bytes_per_token, "B/tok")
    ctx = _q(context_tokens, "tok")
    stream = _run("kv_stream", {"kappa": kappa, "ctx": ctx})
    seqs = _run("N_seq", {"pool": _q(kv_pool_bytes, "B"), "kv_stream": stream})
    return int(seqs.magnitude)


def tpot_floor(
    *, weights_bytes: float, bandwidth_bytes_s: float, bw_eff: float, tp: int = 1
) -> float:
    """The decode TPOT floor in seconds (s): W / (TP × η × β).

    Every decode step reads all weights once; weights_bytes in B, bandwidth_bytes_s in B/s
    per GPU, bw_eff the achievable fraction (0.7 typical). 15.2 GB on a 4090 at 0.7: 21.5 ms.
    """
    env = {
        "W": _q(weights_bytes, "B"),
        "TP": _q(tp),
        "eta": _q(bw_eff),
        "beta": _q(bandwidth_bytes_s, "B/s"),
    }
    return float(_run("tpot", env).magnitude)


def r_inst(*, knee_tok_s: float, out_len_tok: float) -> float:
    """Requests per second one instance sustains (req/s): T_out / ō.

    knee_tok_s is the measured output throughput at the SLO knee (tok/s); out_len_tok the mean
    output length (tok/req). 2000 tok/s over 256 tok/req is 7.8 req/s.
    """
    env = {"T_out": _q(knee_tok_s, "tok/s"), "o_bar": _q(out_len_tok, "tok/req")}
    return float(_run("r_inst", env).magnitude)


def n_inst(*, peak_qps: float, rho: float, r_inst_req_s: float) -> int:
    """Instances needed (count): ⌈λ_peak / (ρ × r_inst)⌉, rounded up.

    peak_qps and r_inst_req_s in req/s; rho the utilisation target (0.7 leaves burst room).
    50 QPS at ρ 0.7 and 7.8 req/s per instance needs 10.
    """
    env = {
        "lambda_peak": _q(peak_qps, "req/s"),
        "rho": _q(rho),
        "r_inst": _q(r_inst_req_s, "req/s"),
    }
    return int(_run("N_inst", env).magnitude)


def n_gpu(*, n_inst: int, tp: int) -> int:
    """GPUs in the fleet (count): N_inst × TP."""
    return int(_run("N_GPU", {"N_inst": _q(n_inst), "TP": _q(tp)}).magnitude)


# ---------------------------------------------------------------------------------------------
# The whole plan


def _value_latex(q: Quantity, target: UnitSpec | None = None) -> str:
    return latex_number_unit(*shown_in(q, target))


def _check_inputs(**values: float) -> None:
    rules = {
        "context": (1, 10**7, "tokens"),
        "mem_util": (0.01, 1.0, ""),
        "bw_eff": (0.01, 1.0, ""),
        "tp": (1, 64, "GPUs"),
        "knee_tok_s": (0.001, 10**9, "tok/s"),
        "out_len": (1, 10**7, "tokens"),
        "qps": (0.0001, 10**9, "req/s"),
        "rho": (0.01, 1.0, ""),
        "overhead_gb": (0, 10**4, "GB"),
    }
    for name, value in values.items():
        low, high, unit = rules[name]
        if not low <= value <= high:
            raise PlanError(f"{name} must be between {low} and {high} {unit}".rstrip() + ".")


def plan(
    *,
    model: str,
    gpu: str,
    weights: str = "bf16",
    kv: str = "bf16",
    context: int = 8192,
    mem_util: float = 0.9,
    bw_eff: float = 0.7,
    tp: int = 1,
    knee_tok_s: float = 2000,
    out_len: float = 256,
    qps: float = 50,
    rho: float = 0.7,
    tpot_slo_ms: float | None = None,
    overhead_gb: float = DEFAULT_OVERHEAD_GB,
    catalog_dir: Path = DEFAULT_DIR,
) -> dict[str, Any]:
    """Size a fleet. Returns the `plan --json` object.

    Inputs: catalogue keys (or names/aliases) for model, gpu, weights and kv dtypes; context
    (tokens per sequence), mem_util (vLLM --gpu-memory-utilization), bw_eff (achievable share
    of the memory bandwidth), tp (GPUs per instance), knee_tok_s (measured output tok/s at
    the SLO), out_len (mean output tokens), qps (peak req/s), rho (target utilisation),
    tpot_slo_ms (optional), overhead_gb (non-KV memory per GPU, decimal GB).

    Output: weights_bytes, kv_bytes_per_token, kv_pool_bytes, kv_bytes_per_stream (B),
    max_seqs, tpot_floor_ms, r_inst_req_s, n_inst, n_gpu, feasible (TPOT SLO ≥ floor; None
    without an SLO), fits (at least one sequence fits), and `steps`: one
    {name, label, formula_latex, substituted, value, unit} per formula.
    Raises PlanError (or KeyError for an unknown catalogue key) with a one-sentence message.
    """
    _check_inputs(
        context=context, mem_util=mem_util, bw_eff=bw_eff, tp=tp, knee_tok_s=knee_tok_s,
        out_len=out_len, qps=qps, rho=rho, overhead_gb=overhead_gb,
    )  # fmt: skip
    if tpot_slo_ms is not None and not 0 < tpot_slo_ms <= 10**6:
        raise PlanError("tpot_slo_ms must be a positive number of milliseconds.")
    catalog = load_catalog(catalog_dir)
    m = catalog.model(model)
    g = catalog.gpu(gpu)
    w = catalog.weight_dtype(weights)
    k = catalog.kv_dtype(kv)

    env: dict[str, Quantity] = {
        "P": _q(m.params),
        "P_emb": _q(m.embedding_params),
        "b_w": _q(w.bytes_per_param, "B"),
        "b_emb": _q(w.embedding_bytes_per_param, "B"),
        "L": _q(m.layers),
        "H_kv": _q(m.kv_heads),
        "d_head": _q(m.head_dim),
        "b_kv": _q(k.bytes, "B"),
        "TP": _q(tp),
        "mem": g.memory,
        "u": _q(mem_util),
        "overhead": _q(overhead_gb, "GB"),
        "ctx": _q(context, "tok"),
        "eta": _q(bw_eff),
        "beta": g.bandwidth,
        "T_out": _q(knee_tok_s, "tok/s"),
        "o_bar": _q(out_len, "tok/req"),
        "lambda_peak": _q(qps, "req/s"),
        "rho": _q(rho),
    }
    steps = []
    for formula in FORMULAS.values():
        line = _parsed(formula.name)
        try:
            value = Evaluator(env).eval(line.expr)
        except NapkinError as error:  # only a degenerate input can get here (e.g. tiny r_inst)
            raise PlanError(f"{formula.label}: {error.message}") from None
        env[formula.name] = value
        target = parse_units(formula.unit) if formula.unit else None
        if formula.unit == "" and value.dim != DIMENSIONLESS:  # pragma: no cover - authoring
            raise PlanError(f"{formula.label} should be a plain number.")
        shown, unit = shown_in(value, target)
        steps.append(
            {
                "name": formula.name,
                "label": formula.label,
                "formula_latex": f"{name_latex(formula.name)} = {to_latex(line.expr)}",
                "substituted": "",
                "value": shown,
                "unit": unit,
            }
        )
    # Every symbol of a substituted line, inputs and earlier results alike, shows its value,
    # so a reader can follow each line with a calculator.
    values_latex = {name: _value_latex(q) for name, q in env.items()}
    for formula in FORMULAS.values():
        target = parse_units(formula.unit) if formula.unit else None
        values_latex[formula.name] = _value_latex(env[formula.name], target)
    for step in steps:
        step["substituted"] = to_latex(_parsed(step["name"]).expr, values_latex)
    tpot_ms = float(env["tpot"].magnitude) * 1000
    max_seqs = int(env["N_seq"].magnitude)
    notes = []
    if context > m.max_context:
        notes.append(
            f"{m.name} is configured for {m.max_context} tokens; {context} needs rope scaling."
        )
    if max_seqs == 0:
        notes.append("Not even one sequence of this context fits in the KV pool.")
    return {
        "model": m.name,
        "gpu": g.name,
        "weights": w.name,
        "kv": k.name,
        "context": context,
        "tp": tp,
        "weights_bytes": float(env["W"].magnitude),
        "kv_bytes_per_token": float(env["kappa"].magnitude),
        "kv_pool_bytes": float(env["pool"].magnitude),
        "kv_bytes_per_stream": float(env["kv_stream"].magnitude),
        "memory_bytes": float(g.memory.magnitude),
        "max_seqs": max_seqs,
        "tpot_floor_ms": tpot_ms,
        "r_inst_req_s": float(env["r_inst"].magnitude),
        "n_inst": int(env["N_inst"].magnitude),
        "n_gpu": int(env["N_GPU"].magnitude),
        "feasible": None if tpot_slo_ms is None else tpot_slo_ms >= tpot_ms,
        "fits": max_seqs >= 1,
        "notes": notes,
        "steps": steps,
    }


def fleet_curve(
    *, r_inst_req_s: float, rho: float, tp: int, qps_values: list[float]
) -> list[tuple[float, int]]:
    """(peak QPS, GPUs) points: the fleet size as peak traffic grows, for the planner chart."""
    r = _q(r_inst_req_s, "req/s")
    points = []
    for qps in qps_values:
        instances = _run("N_inst", {"lambda_peak": _q(qps, "req/s"), "rho": _q(rho), "r_inst": r})
        gpus = _run("N_GPU", {"N_inst": instances, "TP": _q(tp)})
        points.append((qps, int(gpus.magnitude)))
    return points


def kv_curve(*, kv_bytes_per_token: float, contexts: list[int]) -> list[tuple[int, float]]:
    """(context tokens, KV bytes per stream) points, for the planner chart."""
    kappa = _q(kv_bytes_per_token, "B/tok")
    return [
        (ctx, float(_run("kv_stream", {"kappa": kappa, "ctx": _q(ctx, "tok")}).magnitude))
        for ctx in contexts
    ]


__all__ = [
    "FORMULAS",
    "PlanError",
    "fleet_curve",
    "kv_bytes_per_token",
    "kv_curve",
    "kv_pool_bytes",
    "max_concurrent_seqs",
    "n_gpu",
    "n_inst",
    "plan",
    "r_inst",
    "tpot_floor",
    "weights_bytes",
]
