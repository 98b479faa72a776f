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

from .catalog import DEFAULT_DIR, Model, load_catalog
from .errors import NapkinError
from .evaluator import Evaluator, Quantity, bounded
from .numbers import format_number
from .parser import Line, UnitSpec, parse_line, parse_units
from .render import latex_number_unit, name_latex, to_latex
from .units import DIMENSIONLESS
from .worksheet import shown_in

GiB = 1024**3

# Non-KV memory per GPU that vLLM holds besides the weights: the activation peak of a profile
# run, CUDA graphs and the CUDA context. About 1.5 GiB for a 7B model at the default batch
# sizes; in GiB like every other memory figure of the catalogue and the question files.
DEFAULT_OVERHEAD_GIB = 1.5


@dataclass(frozen=True)
class Formula:
    name: str  # the symbol it defines
    label: str
    expr: str  # napkin-math over the symbols of earlier formulas and the inputs
    unit: str | None  # the unit its value is shown in ("" a plain number, None readable)


# In the order of the derivation. Symbols: P params, P_emb embedding and LM-head params, P_in
# the input embedding table (0 when tied to the LM head), b_w / b_emb bytes per param, L
# layers, H_kv KV heads, d_head head dim, b_kv bytes per KV element, mem GPU memory as the
# driver reports it, u memory utilisation, overhead non-KV memory per GPU, TP tensor
# parallelism, ctx context length, eta bandwidth efficiency, beta GPU bandwidth, T_out knee
# throughput, o_bar mean output length, hold a measured slot-holding time, lambda_peak peak
# QPS, rho utilisation target.
FORMULAS: dict[str, Formula] = {
    f.name: f
    for f in [
        Formula("W", "Weights", "(P - P_emb) * b_w + P_emb * b_emb", "GB"),
        # A decode step gathers one row of the input embedding table per sequence but reads
        # the whole LM head, so only the LM head counts towards the floor.
        Formula("W_step", "Weights read per decode step (LM head, not the input embedding)",
                "W - P_in * b_emb", "GB"),
        # vLLM keeps at least one KV head on every GPU: past TP = H_kv the heads replicate.
        Formula("H_gpu", "KV heads per GPU", "max(H_kv / TP, 1)", ""),
        Formula("kappa", "KV bytes per token", "2 * L * H_gpu * TP * d_head * b_kv / tok",
                "KiB/tok"),
        Formula("pool", "KV pool", "TP * (mem * u - overhead) - W", "GiB"),
        Formula("kv_stream", "KV per stream", "kappa * ctx", None),
        Formula("N_seq", "Concurrent streams (VRAM gate)", "max(floor(pool / kv_stream), 0)", ""),
        Formula("tpot", "TPOT floor (speed gate)", "W_step / (TP * eta * beta)", "ms"),
        Formula("r_speed", "Speed bound: knee throughput per request", "T_out / o_bar", "req/s"),
        # Without a measured hold time, a request holds its slot at least for its decode at
        # the floor's pace: the most the VRAM gate could ever carry.
        Formula("t_hold", "Time a request holds its KV slot (decode at the floor)",
                "o_bar * tpot / tok", "s/req"),
        Formula("r_memory", "Memory bound: slots / hold time (Little's law)", "N_seq / t_hold",
                "req/s"),
        Formula("r_inst", "Requests per instance: the smaller bound", "min(r_speed, r_memory)",
                "req/s"),
        Formula("N_inst", "Instances", "ceil(lambda_peak / (rho * r_inst))", ""),
        Formula("N_GPU", "GPUs", "N_inst * TP", ""),
    ]
}  # fmt: skip
# The hold time when the caller measured it (e.g. suffix prefill plus a short decode).
MEASURED_HOLD = Formula("t_hold", "Time a request holds its KV slot (measured)", "hold", "s/req")
# The seed's simple floor, every weight read every step: shown where a question asks for it.
SIMPLE_TPOT = Formula("tpot_simple", "TPOT floor, all weights read", "W / (TP * eta * beta)", "ms")
_EXTRA = {"tpot_simple": SIMPLE_TPOT, "t_hold_measured": MEASURED_HOLD}


class PlanError(ValueError):
    """A planner input out of range, told in one sentence; `field` names the input at fault
    when it is one (the planner page shows the sentence beside that field)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def check_context(model: Model, context: int, out_len: float) -> None:
    """Refuse a context the model cannot hold, or an output that does not fit in the context
    (vLLM's max_model_len counts the prompt and the output together). Raises PlanError."""
    if context > model.context_limit:
        if model.max_context_yarn and model.max_context_yarn > model.max_context:
            limits = (
                f"{model.max_context} natively, {model.max_context_yarn} with YaRN rope scaling"
            )
            raise PlanError(
                f"{model.name} holds at most {model.context_limit} tokens of context "
                f"({limits}), so {context} cannot be planned.",
                "context",
            )
        raise PlanError(
            f"{model.name} holds at most {model.context_limit} tokens of context, so {context} "
            "cannot be planned.",
            "context",
        )
    if out_len > context:
        raise PlanError(
            f"A mean output of {format_number(out_len)} tokens does not fit in a context of "
            f"{context} tokens, which holds the prompt and the output together.",
            "out_len",
        )


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
    formula = FORMULAS.get(name) or _EXTRA[name]
    return parse_line(formula.expr)


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


def kv_bytes_per_token(
    *, layers: int, kv_heads: int, head_dim: int, kv_bytes: float, tp: int = 1
) -> float:
    """KV-cache bytes per token of one instance (B/tok): 2 (K and V) × layers × KV heads ×
    head dim × bytes, where the KV heads are max(kv_heads / tp, 1) on each of the tp GPUs.

    Qwen2.5-7B in BF16: 2 × 28 × 4 × 128 × 2 = 57344 B/tok = 56 KiB/tok; at TP = 8 its 4 KV
    heads replicate to one per GPU, and the instance holds 112 KiB/tok.
    """
    env = {
        "L": _q(layers),
        "H_kv": _q(kv_heads),
        "TP": _q(tp),
        "d_head": _q(head_dim),
        "b_kv": _q(kv_bytes, "B"),
    }
    env["H_gpu"] = _run("H_gpu", env)
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

    Every decode step reads the weights once; weights_bytes (B) is what a step reads (the
    planner passes all but the input embedding table; the seed's simple figure passes all),
    bandwidth_bytes_s in B/s per GPU, bw_eff the achievable fraction (0.7 typical). 15.2 GB on
    a 4090 at 0.7: 21.5 ms.
    """
    env = {
        "W_step": _q(weights_bytes, "B"),
        "TP": _q(tp),
        "eta": _q(bw_eff),
        "beta": _q(bandwidth_bytes_s, "B/s"),
    }
    return float(_run("tpot", env).magnitude)


def r_inst(
    *,
    knee_tok_s: float,
    out_len_tok: float,
    max_seqs: int | None = None,
    hold_s: float | None = None,
) -> float:
    """Requests per second one instance sustains (req/s): min(T_out / ō, N_seq / t_hold).

    knee_tok_s is the measured output throughput at the SLO knee (tok/s); out_len_tok the mean
    output length (tok/req). 2000 tok/s over 256 tok/req is 7.8 req/s. With max_seqs (streams
    that fit) and hold_s (seconds a request holds its slot), the memory bound by Little's law
    applies too: 16 slots held 4 s each carry 4 req/s.
    """
    env = {"T_out": _q(knee_tok_s, "tok/s"), "o_bar": _q(out_len_tok, "tok/req")}
    speed = _run("r_speed", env)
    if max_seqs is None or hold_s is None:
        return float(speed.magnitude)
    env |= {"r_speed": speed, "N_seq": _q(max_seqs), "hold": _q(hold_s, "s/req")}
    env["t_hold"] = _run("t_hold_measured", env)
    env["r_memory"] = _run("r_memory", env)
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


def _check_inputs(**values: float | None) -> None:
    rules = {
        "context": (1, 10**7, "tokens"),
        "mem_util": (0.01, 1.0, ""),
        "bw_eff": (0.01, 1.0, ""),
        "tp": (1, 64, "GPUs"),
        "knee_tok_s": (0.001, 10**9, "tok/s"),
        "out_len": (1, 10**7, "tokens"),
        "qps": (0.0001, 10**9, "req/s"),
        "rho": (0.01, 1.0, ""),
        "overhead_gib": (0, 10**4, "GiB"),
        "overhead_gb": (0, 10**4, "GB"),
        "hold_s": (0.001, 10**6, "s"),
        "tpot_slo_ms": (0.001, 10**6, "ms"),
    }
    for name, value in values.items():
        if value is None:
            continue
        low, high, unit = rules[name]
        if not low <= value <= high:
            raise PlanError(f"{name} must be between {low} and {high} {unit}".rstrip() + ".")


def _step(formula: Formula, value: Quantity) -> dict[str, Any]:
    target = parse_units(formula.unit) if formula.unit else None
    if formula.unit == "" and value.dim != DIMENSIONLESS:  # pragma: no cover - authoring
        raise PlanError(f"{formula.label} should be a plain number.")
    shown, unit = shown_in(value, target)
    return {
        "name": formula.name,
        "label": formula.label,
        "formula_latex": f"{name_latex(formula.name)} = {to_latex(parse_line(formula.expr).expr)}",
        "substituted": "",
        "value": shown,
        "unit": unit,
    }


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
    overhead_gb: float | None = None,
    overhead_gib: float = DEFAULT_OVERHEAD_GIB,
    hold_s: float | None = None,
    catalog_dir: Path = DEFAULT_DIR,
) -> dict[str, Any]:
    """Size a fleet. Returns the `plan --json` object.

    Inputs: catalogue keys (or names/aliases) for model, gpu, weights and kv dtypes; context
    (tokens per sequence), mem_util (vLLM --gpu-memory-utilization, applied to the memory the
    driver reports), bw_eff (achievable share of the memory bandwidth), tp (GPUs per
    instance), knee_tok_s (measured output tok/s at the SLO), out_len (mean output tokens),
    qps (peak req/s), rho (target utilisation), tpot_slo_ms (optional), overhead_gib (non-KV
    memory per GPU, GiB; overhead_gb, decimal GB, overrides it), hold_s (optional measured
    seconds a request holds its KV slot; without it, its decode at the TPOT floor).

    Output: weights_bytes, weights_read_per_step_bytes, kv_bytes_per_token, kv_pool_bytes,
    kv_bytes_per_stream, memory_bytes (as the driver reports), memory_datasheet_bytes (B);
    kv_heads_per_gpu, max_seqs; tpot_floor_ms (LM head only) and tpot_floor_simple_ms (all
    weights, the seed's figure); r_speed_req_s, r_memory_req_s, hold_s, r_inst_req_s (the
    smaller bound) and binding ("speed" | "memory"); n_inst and n_gpu (None when nothing
    fits); feasible (False when nothing fits or the TPOT SLO is below the floor, True when an
    SLO is met, None without an SLO), fits, reason (why it is infeasible, else None), notes,
    and `steps`: one {name, label, formula_latex, substituted, value, unit} per formula.
    Raises PlanError (or KeyError for an unknown catalogue key) with a one-sentence message,
    among others for a context longer than the model holds (`check_context`).
    """
    _check_inputs(
        context=context, mem_util=mem_util, bw_eff=bw_eff, tp=tp, knee_tok_s=knee_tok_s,
        out_len=out_len, qps=qps, rho=rho, overhead_gib=overhead_gib, overhead_gb=overhead_gb,
        hold_s=hold_s, tpot_slo_ms=tpot_slo_ms,
    )  # fmt: skip
    catalog = load_catalog(catalog_dir)
    m = catalog.model(model)
    check_context(m, context, out_len)
    g = catalog.gpu(gpu)
    w = catalog.weight_dtype(weights)
    k = catalog.kv_dtype(kv)
    # vLLM shards KV heads over TP only when one count divides the other.
    if m.kv_heads % tp and tp % m.kv_heads:
        raise PlanError(
            f"tp must divide {m.name}'s {m.kv_heads} KV heads or be a multiple of them."
        )
    overhead = _q(overhead_gb, "GB") if overhead_gb is not None else _q(overhead_gib, "GiB")

    env: dict[str, Quantity] = {
        "P": _q(m.params),
        "P_emb": _q(m.embedding_params),
        "P_in": _q(m.unread_embedding_params),
        "b_w": _q(w.bytes_per_param, "B"),
        "b_emb": _q(w.embedding_bytes_per_param, "B"),
        "L": _q(m.layers),
        "H_kv": _q(m.kv_heads),
        "d_head": _q(m.head_dim),
        "b_kv": _q(k.bytes, "B"),
        "TP": _q(tp),
        "mem": g.memory,
        "u": _q(mem_util),
        "overhead": overhead,
        "ctx": _q(context, "tok"),
        "eta": _q(bw_eff),
        "beta": g.bandwidth,
        "T_out": _q(knee_tok_s, "tok/s"),
        "o_bar": _q(out_len, "tok/req"),
        "lambda_peak": _q(qps, "req/s"),
        "rho": _q(rho),
    }
    if hold_s is not None:
        env["hold"] = _q(hold_s, "s/req")
    formulas = dict(FORMULAS)
    if hold_s is not None:
        formulas["t_hold"] = MEASURED_HOLD
    steps: list[dict[str, Any]] = []
    parsed: dict[str, Line] = {}
    fits = True
    for formula in formulas.values():
        if not fits and formula.name in ("N_inst", "N_GPU"):
            break  # no fleet of instances that hold nothing
        line = parse_line(formula.expr)
        try:
            value = Evaluator(env).eval(line.expr)
        except NapkinError as error:  # only a degenerate input can get here (e.g. tiny r_inst)
            raise PlanError(f"{formula.label}: {error.message}") from None
        env[formula.name] = value
        parsed[formula.name] = line
        steps.append(_step(formula, value))
        if formula.name == "N_seq":
            fits = int(value.magnitude) >= 1
    env["tpot_simple"] = _run("tpot_simple", env)
    # Every symbol of a substituted line, inputs and earlier results alike, shows its value,
    # so a reader can follow each line with a calculator.
    values_latex = {name: _value_latex(q) for name, q in env.items()}
    for formula in formulas.values():
        if formula.name in parsed:
            target = parse_units(formula.unit) if formula.unit else None
            values_latex[formula.name] = _value_latex(env[formula.name], target)
    for step in steps:
        step["substituted"] = to_latex(parsed[step["name"]].expr, values_latex)

    def number(name: str) -> float:
        return float(env[name].magnitude)

    tpot_ms = number("tpot") * 1000
    max_seqs = int(number("N_seq"))
    notes, reason = [], None
    if context > m.max_context:  # only within the YaRN limit: check_context refused the rest
        notes.append(
            f"{m.name} is configured for {m.max_context} tokens; {context} needs YaRN rope "
            f"scaling (which the model supports up to {m.max_context_yarn} tokens)."
        )
    if tp > m.kv_heads:
        notes.append(
            f"TP = {tp} is above {m.name}'s {m.kv_heads} KV heads: each GPU keeps one KV head, "
            f"so the instance caches {tp // m.kv_heads}× the KV of one copy."
        )
    notes.append(
        f"The TPOT floor counts the weights a decode step reads, the LM head but not the input "
        f"embedding table: {format_number(tpot_ms)} ms. Counting every weight, as the simple "
        f"napkin figure does, gives {format_number(number('tpot_simple') * 1000)} ms."
    )
    usable = number("mem") * mem_util - number("overhead")  # B per GPU for weights and KV
    weights_per_gpu = number("W") / tp
    if weights_per_gpu > usable:
        reason = (
            f"The weights alone do not fit: {format_number(weights_per_gpu / 1e9)} GB per GPU, "
            f"but vLLM may use {format_number(usable / GiB)} GiB per GPU "
            f"({format_number(number('mem') / GiB)} GiB × {format_number(mem_util)} − "
            f"{format_number(number('overhead') / GiB)} GiB overhead). Raise tp, quantise the "
            "weights or pick a larger GPU."
        )
    elif not fits:
        reason = (
            f"Not even one sequence of {context} tokens fits: it needs "
            f"{format_number(number('kv_stream') / GiB)} GiB of KV and the pool holds "
            f"{format_number(number('pool') / GiB)} GiB. Shorten the context, use FP8 KV or "
            "raise tp."
        )
    feasible: bool | None = None
    if tpot_slo_ms is not None:
        feasible = tpot_slo_ms >= tpot_ms
        if not feasible:
            reason = reason or (
                f"The TPOT SLO of {format_number(tpot_slo_ms)} ms is below the floor of "
                f"{format_number(tpot_ms)} ms."
            )
    if not fits:
        feasible = False
    binding = None
    if fits:
        binding = "memory" if number("r_memory") < number("r_speed") else "speed"
    return {
        "model": m.name,
        "gpu": g.name,
        "weights": w.name,
        "kv": k.name,
        "context": context,
        "tp": tp,
        "weights_bytes": number("W"),
        "weights_read_per_step_bytes": number("W_step"),
        "kv_heads_per_gpu": number("H_gpu"),
        "kv_bytes_per_token": number("kappa"),
        "kv_pool_bytes": number("pool"),
        "kv_bytes_per_stream": number("kv_stream"),
        "memory_bytes": number("mem"),
        "memory_datasheet_bytes": float(g.memory_datasheet.magnitude),
        "overhead_bytes": number("overhead"),
        "max_seqs": max_seqs,
        "tpot_floor_ms": tpot_ms,
        "tpot_floor_simple_ms": number("tpot_simple") * 1000,
        "r_speed_req_s": number("r_speed"),
        "hold_s": number("t_hold"),
        "r_memory_req_s": number("r_memory"),
        "r_inst_req_s": number("r_inst"),
        "binding": binding,
        "n_inst": int(number("N_inst")) if fits else None,
        "n_gpu": int(number("N_GPU")) if fits else None,
        "feasible": feasible,
        "fits": fits,
        "reason": reason,
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


def memory_bound_curve(
    *, kv_pool_bytes: float, kv_bytes_per_token: float, hold_s: float, contexts: list[int]
) -> list[tuple[int, float]]:
    """(context tokens, memory bound in req/s) points: the streams that fit at each context,
    over the time each holds its slot, for the planner's bounds chart."""
    pool = _q(kv_pool_bytes, "B")
    kappa = _q(kv_bytes_per_token, "B/tok")
    hold = _q(hold_s, "s/req")
    points = []
    for ctx in contexts:
        stream = _run("kv_stream", {"kappa": kappa, "ctx": _q(ctx, "tok")})
        seqs = _run("N_seq", {"pool": pool, "kv_stream": stream})
        rate = _run("r_memory", {"N_seq": seqs, "t_hold": hold})
        points.append((ctx, float(rate.magnitude)))
    return points


def kv_curve(*, kv_bytes_per_token: float, contexts: list[int]) -> list[tuple[int, float]]:
    """(context tokens, KV bytes per stream) points, for the planner chart."""
    kappa = _q(kv_bytes_per_token, "B/tok")
    return [
        (ctx, float(_run("kv_stream", {"kappa": kappa, "ctx": _q(ctx, "tok")}).magnitude))
        for ctx in contexts
    ]
