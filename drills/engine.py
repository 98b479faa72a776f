"""Napkin drills: short quantitative items whose givens are drawn from the catalogues.

No Django imports: the drill pages, the `drill` command and the tests call the same code.

    drill_kinds() -> tuple[DrillKind, ...]           every kind, available or not
    drill_generate(kind, seed) -> Drill              the same seed always gives the same drill
    drill_check(drill, answer_text) -> CheckResult   the napkin checker's verdict and hint

A seed draws a setting (model × GPU × weight and KV dtype × context × load × SLO) from the
catalogues (content/catalog) and sensible ranges, and each kind asks for one quantity of the
capacity plan over it. The expected value comes from the planner engine's named formulas
(`kv_bytes_per_token`, `weights_bytes`, `plan`, ...); the answer is judged by
`planner.engine.check_quantity` against the drill's quantity, written in the napkin language
over the givens exactly as the question files write theirs, with its known mistakes. Givens
derived from earlier quantities (the weights, the KV bytes per token) are stated exactly, so
the checker's value and the planner's agree to the last digit (tests/drills check 80 seeds).

TTFT from prefill follows the planner's `F_cold` and `ttft_cold` (linear layers over the
non-embedding parameters a token passes through, the active ones of a mixture of experts, plus
causal attention over the query heads); cost per million output tokens follows its `cost_h` and
`cost_mtok` (the peak fleet's hourly price over the output tokens it serves in that hour).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

from planner.engine import (
    CheckResult,
    check_quantity,
    format_number,
    kv_bytes_per_token,
    load_catalog,
    n_gpu,
    n_inst,
    plan,
    weights_bytes,
)
from planner.engine.catalog import DEFAULT_DIR, Catalog, Model

GiB = 1024**3


@dataclass(frozen=True)
class DrillKind:
    """A kind of drill: its key (the command's --kind), what it asks, the concept note that
    explains it, a short skill name for sentences ("KV sizing"), and whether it can be drawn."""

    key: str
    title: str
    skill: str
    concept: str
    available: bool = True
    why_unavailable: str = ""


KINDS: dict[str, DrillKind] = {
    k.key: k
    for k in [
        DrillKind("kv_per_token", "KV-cache bytes per token", "KV sizing", "kv-wall"),
        DrillKind("weights", "Weights size", "Weight sizing", "quantization"),
        DrillKind("max_seqs", "Streams that fit (the VRAM gate)", "The VRAM gate", "vram-gate"),
        DrillKind("tpot_floor", "The TPOT floor", "The TPOT floor", "tpot-floor"),
        DrillKind("r_inst", "Requests per instance", "Per-instance throughput",
                  "concurrency-knee"),
        DrillKind("n_inst", "Instances at peak", "Fleet sizing", "fleet-sizing"),
        DrillKind("n_gpu", "GPUs in the fleet", "GPU count", "fleet-sizing"),
        DrillKind("ttft", "TTFT from prefill", "TTFT", "chunked-prefill"),
        DrillKind("cost_per_mtok", "Cost per million output tokens", "Cost per token",
                  "fleet-sizing"),
    ]
}  # fmt: skip
AVAILABLE = tuple(k for k, v in KINDS.items() if v.available)
# About how long one drill takes, for "5 drills, 6 minutes".
SECONDS_PER_DRILL = 70

# Sensible ranges for a draw; every setting is checked by the planner before it is used.
CONTEXTS = (2048, 4096, 8192, 16384, 32768)
MEM_UTILS = (0.85, 0.9, 0.95)
OVERHEADS_GIB = (1.5, 2, 3)
BW_EFFS = (0.6, 0.7, 0.8)
KNEES_TOK_S = (1000, 1500, 2000, 2500, 3000, 4000)
OUT_LENS = (128, 256, 512)  # powers of two: T_out / o_bar is an exact decimal
PEAK_QPS = (10, 20, 30, 50, 80, 100, 200)
RHOS = (0.6, 0.7, 0.8)
HOLDS_S = (2, 4, 8, 16)
TPS = (1, 2, 4, 8)
TPOT_SLOS_MS = (30, 50, 80)
# Prompts long enough that causal attention is a tenth of the prefill or more (`_ttft` keeps
# only those), so leaving it out is a mistake the checker can tell from a right answer.
PROMPTS_TOK = (4000, 8000, 12000, 16000, 24000, 30000)
PREFILL_EFFS = (0.4, 0.5, 0.6)
ATTENTION_SHARE_MIN = 0.1


class DrillError(ValueError):
    """An unknown or unavailable kind, or a bad seed, told in one sentence."""


@dataclass(frozen=True)
class Given:
    name: str
    label: str
    value: str  # a napkin-math expression, exactly what the checker evaluates


@dataclass(frozen=True)
class Drill:
    """One drawn drill. `quantity` is the checker's spec, whose id is the drill's kind and
    whose unit is the drill's; `expected` is the planner engine's value in that unit ("" for a
    count); `solution` the worked lines shown after an answer; `setting` what was drawn
    (catalogue keys and figures), for the record and the tests."""

    seed: int
    question: str
    givens: tuple[Given, ...]
    quantity: dict[str, Any]
    expected: float
    solution: tuple[str, ...]
    setting: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.quantity["id"]

    @property
    def unit(self) -> str:
        return self.quantity["unit"]

    @property
    def givens_dict(self) -> dict[str, str]:
        return {g.name: g.value for g in self.givens}

    @property
    def fingerprint(self) -> str:
        """What makes two drills the same for a candidate: the kind and the givens."""
        text = json.dumps([self.kind, sorted(self.givens_dict.items())])
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def expected_text(self) -> str:
        return f"{format_number(self.expected)} {self.unit}".strip()

    def as_json(self) -> dict[str, Any]:
        """The `drill --json` object."""
        return {
            "kind": self.kind,
            "seed": self.seed,
            "title": KINDS[self.kind].title,
            "question": self.question,
            "givens": [{"name": g.name, "label": g.label, "value": g.value} for g in self.givens],
            "expected": self.expected,
            "unit": self.unit,
            "setting": self.setting,
        }


def drill_kinds() -> tuple[DrillKind, ...]:
    return tuple(KINDS.values())


def drill_kind(key: str) -> DrillKind:
    """The kind named `key`; DrillError for an unknown or unavailable one."""
    kind = KINDS.get(key)
    if kind is None:
        shown = key if len(key) <= 40 else key[:37] + "..."  # the message repeats what was typed
        raise DrillError(f"Unknown drill kind {shown!r}; known: {', '.join(AVAILABLE)}.")
    if not kind.available:
        raise DrillError(f"{kind.title} is not available yet: it {kind.why_unavailable}.")
    return kind


MAX_SEED = 2**63 - 1


def seed_check(seed: int) -> None:
    """DrillError unless `seed` is a whole number from 0 to MAX_SEED."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise DrillError(f"A seed is a whole number from 0 to {MAX_SEED}.")


def drill_generate(kind: str, seed: int, catalog_dir: Path = DEFAULT_DIR) -> Drill:
    """The drill of `kind` drawn by `seed` (0 <= seed <= MAX_SEED). DrillError for a bad kind
    or seed. Treat the result as read-only: the same seed returns the same object."""
    drill_kind(kind)
    seed_check(seed)
    return _generate(kind, seed, catalog_dir)


# A drill page redraws its five drills from their seeds on every view; a draw that must fit
# runs the planner a few times, so a process keeps the drills it has drawn.
@lru_cache(maxsize=2048)
def _generate(kind: str, seed: int, catalog_dir: Path) -> Drill:
    rng = random.Random(f"{kind}:{seed}")
    return _BUILDERS[kind](rng, seed, load_catalog(catalog_dir))


def drill_check(drill: Drill, answer_text: str) -> CheckResult:
    """Judge an answer with the napkin checker (its verdict, hint and known mistakes), the
    expected value revealed. Raises planner.engine.NapkinError for an answer that does not
    evaluate (the caller shows its message)."""
    return check_quantity(
        drill.quantity,
        answer_text,
        drill.givens_dict,
        reveal=True,
        given_labels={g.name: g.label for g in drill.givens},
    )


# ---------------------------------------------------------------------------------------------
# Exact numbers as napkin text


def exact_text(value: Fraction, scale: int = 1) -> str:
    """`value / scale` as an exact decimal (every figure here has a power-of-two or
    power-of-ten denominator, so the decimal ends)."""
    with localcontext() as ctx:
        ctx.prec = 60
        number = Decimal(value.numerator) / Decimal(value.denominator) / Decimal(scale)
    text = format(number.normalize(), "f")
    return text


def _f(x: Any) -> Fraction:
    """A catalogue figure as an exact fraction: floats there are dyadic (0.51953125), and a
    SymPy Rational (a GPU's memory) converts through its numerator and denominator."""
    if hasattr(x, "p") and hasattr(x, "q"):
        return Fraction(int(x.p), int(x.q))
    return Fraction(x)


@dataclass
class _Setting:
    model: Model
    gpu_key: str
    weights: str
    kv: str
    context: int
    mem_util: float
    overhead_gib: float
    bw_eff: float
    knee: int
    out_len: int
    qps: int
    rho: float
    hold: int
    tpot_slo: int

    def plan(self, **extra: Any) -> dict[str, Any]:
        return plan(
            model=self.model.key, gpu=self.gpu_key, weights=self.weights, kv=self.kv,
            context=self.context, mem_util=self.mem_util, bw_eff=self.bw_eff,
            knee_tok_s=self.knee, out_len=self.out_len, qps=self.qps, rho=self.rho,
            overhead_gib=self.overhead_gib, tpot_slo_ms=self.tpot_slo, **extra,
        )  # fmt: skip

    def record(self) -> dict[str, Any]:
        return {
            "model": self.model.key, "gpu": self.gpu_key, "weights": self.weights,
            "kv": self.kv, "context": self.context, "mem_util": self.mem_util,
            "overhead_gib": self.overhead_gib, "bw_eff": self.bw_eff, "knee_tok_s": self.knee,
            "out_len": self.out_len, "qps": self.qps, "rho": self.rho, "hold_s": self.hold,
            "tpot_slo_ms": self.tpot_slo,
        }  # fmt: skip


def _draw(
    rng: random.Random,
    catalog: Catalog,
    *,
    fits: bool = False,
    accept: Callable[[_Setting], bool] | None = None,
) -> _Setting:
    """A setting drawn from the catalogues and ranges; with `fits`, one where at least one
    sequence fits, and with `accept`, one it accepts (drawn again, from the same stream,
    until they say so)."""
    for _ in range(200):
        model = catalog.models[rng.choice(sorted(catalog.models))]
        contexts = [c for c in CONTEXTS if c <= model.max_context]
        setting = _Setting(
            model=model,
            gpu_key=rng.choice(sorted(catalog.gpus)),
            weights=rng.choice(sorted(catalog.weight_dtypes)),
            kv=rng.choice(sorted(catalog.kv_dtypes)),
            context=rng.choice(contexts),
            mem_util=rng.choice(MEM_UTILS),
            overhead_gib=rng.choice(OVERHEADS_GIB),
            bw_eff=rng.choice(BW_EFFS),
            knee=rng.choice(KNEES_TOK_S),
            out_len=rng.choice(OUT_LENS),
            qps=rng.choice(PEAK_QPS),
            rho=rng.choice(RHOS),
            hold=rng.choice(HOLDS_S),
            tpot_slo=rng.choice(TPOT_SLOS_MS),
        )
        if (not fits or setting.plan()["fits"]) and (accept is None or accept(setting)):
            return setting
    raise DrillError("No setting that fits was drawn.")  # pragma: no cover - catalogue change


def _language_model_only(model: Model, before: str = " (", after: str = ")") -> str:
    """What a figure of a vision-language model leaves out, set between `before` and `after`
    (nothing for other models): the drills work with the language model, as the planner does,
    not the image encoder beside it."""
    if not model.vision_params:
        return ""
    tower = format_number(round(model.vision_params / 1e9, 2))
    return f"{before}its language model, without the {tower}B-parameter vision tower{after}"


def _with_the_tower(model: Model) -> str:
    """What the memory a vision-language model holds adds to its language model's weights
    (nothing for other models): the vision tower, at 16 bits a parameter whatever the weight
    precision, as the planner counts it (its W_vis)."""
    if not model.vision_params:
        return ""
    tower = format_number(round(model.vision_params / 1e9, 2))
    return f"; with its {tower}B-parameter vision tower, 16-bit"


def _weights_fraction(model: Model, w_bytes: float, emb_bytes: float) -> Fraction:
    """W in bytes, exactly: (P − P_emb)·b_w + P_emb·b_emb."""
    p_emb = model.embedding_params
    return (model.params - p_emb) * _f(w_bytes) + p_emb * _f(emb_bytes)


def _a(number: int) -> str:
    """The article before `number` as it is read aloud: a 4000-token prompt, an 8000-token one."""
    digits = str(number)
    lead = digits[: (len(digits) - 1) % 3 + 1]  # the group read first: 8 of 8000, 11 of 11000
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"


def _gpu_name(catalog: Catalog, key: str) -> str:
    return catalog.gpus[key].name


# ---------------------------------------------------------------------------------------------
# The kinds


def _attention_shape(m: Model) -> list[Given]:
    """The model's attention shape, as the KV-cache and the prefill drills give it."""
    return [
        Given("layers", "Layers", str(m.layers)),
        Given("q_heads", "Query (attention) heads", str(m.attention_heads)),
        Given("kv_heads", "KV heads (grouped-query attention)", str(m.kv_heads)),
        Given("head_dim", "Head dimension", str(m.head_dim)),
    ]


def _kv_per_token(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    s = _draw(rng, catalog)
    m, k = s.model, catalog.kv_dtypes[s.kv]
    kv_b = kv_bytes_per_token(
        layers=m.layers, kv_heads=m.kv_heads, head_dim=m.head_dim, kv_bytes=k.bytes
    )
    givens = (
        *_attention_shape(m),
        Given("kv_bytes", f"Bytes per cached element ({k.name} KV)", f"{format_number(k.bytes)} B"),
    )
    quantity = {
        "id": "kv_per_token",
        "label": "KV-cache bytes per token",
        "formula": "2 * layers * kv_heads * head_dim * kv_bytes",
        "unit": "KiB",
        "tolerance": 0.01,
        "mistakes": [
            {"replace": {"kv_heads": "q_heads"}, "kind": "query-heads",
             "hint": "Only the KV heads are cached; with grouped-query attention the query heads "
                     "share them, so counting query heads overstates the cache."},
            {"formula": "layers * kv_heads * head_dim * kv_bytes", "kind": "k-and-v",
             "hint": "Each layer caches a key and a value vector per KV head: multiply by 2."},
        ],
    }  # fmt: skip
    solution = (
        "κ = 2 (K and V) × layers × KV heads × head dim × bytes per element",
        f"= 2 × {m.layers} × {m.kv_heads} × {m.head_dim} × {format_number(k.bytes)} B "
        f"= {format_number(kv_b)} B = {format_number(kv_b / 1024)} KiB per token",
        f"The {m.attention_heads} query heads are not cached, only the {m.kv_heads} KV heads.",
    )
    return Drill(
        seed=seed,
        question=f"How many KiB of KV cache does one token take in {m.name} with {k.name} KV?",
        givens=givens,
        quantity=quantity,
        expected=kv_b / 1024,
        solution=solution,
        setting={"model": m.key, "kv": s.kv},
    )


def _weights(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    s = _draw(rng, catalog)
    m, w = s.model, catalog.weight_dtypes[s.weights]
    w_b = weights_bytes(
        params=m.params,
        embedding_params=m.embedding_params,
        bytes_per_param=w.bytes_per_param,
        embedding_bytes_per_param=w.embedding_bytes_per_param,
    )
    givens = (
        Given("P", "Parameters, all" + _language_model_only(m), str(m.params)),
        Given("P_emb", "Embedding and LM-head parameters", str(m.embedding_params)),
        Given("b_w", f"Bytes per linear-layer parameter ({w.name})",
              f"{exact_text(_f(w.bytes_per_param))} B"),
        Given("b_emb", "Bytes per embedding / LM-head parameter (kept 16-bit)",
              f"{exact_text(_f(w.embedding_bytes_per_param))} B"),
    )  # fmt: skip
    quantity = {
        "id": "weights",
        "label": "Weights size",
        "formula": "(P - P_emb) * b_w + P_emb * b_emb",
        "unit": "GB",
        "tolerance": 0.02,
        "mistakes": [
            {"formula": "P * b_w", "kind": "embeddings-quantised",
             "hint": "The embeddings and the LM head stay in 16 bits in quantised checkpoints; "
                     "count them at b_emb."},
            {"formula": "P * 2 B", "kind": "bf16-assumed",
             "hint": "That is the BF16 size; these weights are stored at b_w bytes each."},
        ],
    }  # fmt: skip
    emb = m.embedding_params
    solution = (
        "W = (P − P_emb) × b_w + P_emb × b_emb",
        f"= ({m.params} − {emb}) × {exact_text(_f(w.bytes_per_param))} B + {emb} × "
        f"{exact_text(_f(w.embedding_bytes_per_param))} B",
        f"= {format_number(w_b / 1e9)} GB (= {format_number(w_b / GiB)} GiB: GB are powers of "
        "1000, GiB powers of 1024)",
    )
    return Drill(
        seed=seed,
        question=f"How many GB do {m.name}'s weights take as {w.name}{_language_model_only(m)}?",
        givens=givens,
        quantity=quantity,
        expected=w_b / 1e9,
        solution=solution,
        setting={"model": m.key, "weights": s.weights},
    )


def _max_seqs(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    s = _draw(rng, catalog, fits=True)
    m, g = s.model, catalog.gpus[s.gpu_key]
    w, k = catalog.weight_dtypes[s.weights], catalog.kv_dtypes[s.kv]
    result = s.plan()
    # The memory the weights hold: a vision tower's too, which the KV pool gives up as well.
    w_frac = _weights_fraction(m, w.bytes_per_param, w.embedding_bytes_per_param) + (
        (m.vision_params or 0) * _f(w.embedding_bytes_per_param)
    )
    kappa = _f(kv_bytes_per_token(layers=m.layers, kv_heads=m.kv_heads, head_dim=m.head_dim,
                                  kv_bytes=k.bytes))  # fmt: skip
    mem_gib = _f(g.memory.magnitude) / GiB
    givens = (
        Given("mem", f"{g.name} memory as the driver reports it", f"{exact_text(mem_gib)} GiB"),
        Given("mem_sheet", f"{g.name} memory on the datasheet", g.memory_datasheet_text),
        Given("u", "GPU memory utilisation (vLLM --gpu-memory-utilization)", str(s.mem_util)),
        Given("overhead", "Non-KV memory vLLM holds (activations, CUDA graphs, context)",
              f"{format_number(s.overhead_gib)} GiB"),
        Given("W", f"Weights ({m.name}, {w.name}{_with_the_tower(m)})",
              f"{exact_text(w_frac, 10**9)} GB"),
        Given("kv_per_token", f"KV-cache bytes per token ({k.name} KV)",
              f"{exact_text(kappa, 1024)} KiB"),
        Given("ctx", "Tokens per sequence (context)", str(s.context)),
    )  # fmt: skip
    formula = "(mem * u - overhead - W) / (kv_per_token * ctx)"
    quantity = {
        "id": "max_seqs",
        "label": "Concurrent sequences that fit (the VRAM gate)",
        "formula": formula,
        "unit": "",
        "tolerance": 0.05,
        "rounding": "floor",
        "mistakes": [
            {"replace": {"u": "1"}, "kind": "memory-utilisation",
             "hint": "vLLM claims only the share of memory set by --gpu-memory-utilization: "
                     "start from mem times u."},
            {"replace": {"overhead": "0 B"}, "kind": "no-reserve",
             "hint": "Activations, CUDA graphs and the runtime live outside the KV pool: "
                     "subtract the overhead."},
            {"formula": "(mem_sheet * u - overhead - W) / (kv_per_token * ctx)",
             "kind": "datasheet-memory",
             "hint": "The datasheet's figure is not what vLLM multiplies by u; start from the "
                     "memory the driver reports."},
        ],
    }  # fmt: skip
    pool = result["kv_pool_bytes"]
    stream = result["kv_bytes_per_stream"]
    solution = (
        "N_seq = ⌊(mem × u − overhead − W) / (κ × ctx)⌋",
        f"KV pool = {exact_text(mem_gib)} GiB × {s.mem_util} − {format_number(s.overhead_gib)} "
        f"GiB − {format_number(float(w_frac) / 1e9)} GB = {format_number(pool / GiB)} GiB",
        f"KV per sequence = {exact_text(kappa, 1024)} KiB × {s.context} = "
        f"{format_number(stream / GiB)} GiB",
        f"N_seq = ⌊{format_number(pool / stream)}⌋ = {result['max_seqs']}",
    )
    return Drill(
        seed=seed,
        question=(
            f"How many {s.context}-token sequences fit at once in the KV cache of one "
            f"{g.name} serving {m.name} ({w.name} weights, {k.name} KV)?"
        ),
        givens=givens,
        quantity=quantity,
        expected=float(result["max_seqs"]),
        solution=solution,
        setting=s.record(),
    )


def _reads_all_but_input_embedding(catalog: Catalog) -> Callable[[_Setting], bool]:
    """Whether a decode step reads every weight but the input embedding table (a dense
    model): the drill's formula. A mixture of experts reads only its active experts, which
    this drill does not ask about."""

    def accept(s: _Setting) -> bool:
        w = catalog.weight_dtypes[s.weights]
        whole = _weights_fraction(s.model, w.bytes_per_param, w.embedding_bytes_per_param)
        step = whole - s.model.unread_embedding_params * _f(w.embedding_bytes_per_param)
        return abs(s.plan()["weights_read_per_step_bytes"] - float(step)) <= 1

    return accept


def _tpot_floor(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    s = _draw(rng, catalog, fits=True, accept=_reads_all_but_input_embedding(catalog))
    m, g, w = s.model, catalog.gpus[s.gpu_key], catalog.weight_dtypes[s.weights]
    result = s.plan()
    w_frac = _weights_fraction(m, w.bytes_per_param, w.embedding_bytes_per_param)
    w_in = m.unread_embedding_params * _f(w.embedding_bytes_per_param)
    bw = _f(g.bandwidth.magnitude)
    givens = (
        Given("W", f"Weights ({m.name}, {w.name}{_language_model_only(m, '; ', '')})",
              f"{exact_text(w_frac, 10**9)} GB"),
        Given("W_in", "Input embedding table (a decode step gathers rows of it, never reads "
              "it whole)", f"{exact_text(w_in, 10**9)} GB"),
        Given("bw", f"{g.name} memory bandwidth", f"{exact_text(bw, 10**9)} GB/s"),
        Given("eta", "Achievable share of the bandwidth", str(s.bw_eff)),
    )  # fmt: skip
    quantity = {
        "id": "tpot_floor",
        "label": "Decode TPOT floor (the weights a step reads)",
        "formula": "(W - W_in) / (eta * bw)",
        "unit": "ms",
        "tolerance": 0.03,
        "mistakes": [
            {"formula": "(W - W_in) / bw", "kind": "bandwidth-efficiency",
             "hint": "Decode never reaches the datasheet bandwidth; divide by eta times bw."},
            {"formula": "W / (eta * bw)", "kind": "all-weights-read",
             "hint": "That is the simple figure, every weight read each step; a decode step "
                     "does not read the input embedding table, so leave W_in out."},
        ],
    }  # fmt: skip
    tpot = result["tpot_floor_ms"]
    solution = (
        "TPOT floor = (W − W_in) / (η × β): every decode step streams the weights it reads once",
        f"= ({format_number(float(w_frac) / 1e9)} GB − {format_number(float(w_in) / 1e9)} GB) / "
        f"({s.bw_eff} × {exact_text(bw, 10**9)} GB/s) = {format_number(tpot)} ms",
        f"A p99 TPOT SLO of {s.tpot_slo} ms is "
        + ("within reach." if tpot <= s.tpot_slo else "below this floor: no batch size meets it."),
    )
    return Drill(
        seed=seed,
        question=(
            f"What is the decode TPOT floor, in ms, of {m.name} ({w.name} weights) on one "
            f"{g.name}? (The SLO asks for a p99 TPOT of {s.tpot_slo} ms.)"
        ),
        givens=givens,
        quantity=quantity,
        expected=tpot,
        solution=solution,
        setting=s.record(),
    )


def _r_inst(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    s = _draw(rng, catalog, fits=True)
    result = s.plan(hold_s=s.hold)
    seqs = result["max_seqs"]
    givens = (
        Given("T_out", "Output throughput at the knee (measured)", f"{s.knee} tok/s"),
        Given("o_bar", "Mean output length", f"{s.out_len} tok/req"),
        Given("N_seq", "Sequences that fit in the KV cache", str(seqs)),
        Given("hold", "Time a request holds its KV slot (measured)", f"{s.hold} s/req"),
    )
    quantity = {
        "id": "r_inst",
        "label": "Requests per second one instance sustains",
        "formula": "min(T_out / o_bar, N_seq / hold)",
        "unit": "req/s",
        "tolerance": 0.03,
        "mistakes": [
            {"formula": "T_out / o_bar", "kind": "memory-bound-ignored",
             "hint": "The knee's speed bound is not the only one: the slots that fit, over the "
                     "time each is held (Little's law), may carry less."},
            {"formula": "N_seq / hold", "kind": "speed-bound-ignored",
             "hint": "The memory bound is not the only one: the knee throughput over the "
                     "output length may carry less."},
        ],
    }  # fmt: skip
    speed, memory = s.knee / s.out_len, seqs / s.hold
    solution = (
        "r_inst = min(T_out / ō, N_seq / t_hold): the smaller of the speed and memory bounds",
        f"speed: {s.knee} tok/s / {s.out_len} tok/req = {format_number(speed)} req/s",
        f"memory: {seqs} / {s.hold} s = {format_number(memory)} req/s",
        f"r_inst = {format_number(result['r_inst_req_s'])} req/s ({result['binding']} bound)",
    )
    return Drill(
        seed=seed,
        question="How many requests per second can one instance sustain?",
        givens=givens,
        quantity=quantity,
        expected=result["r_inst_req_s"],
        solution=solution,
        setting=s.record(),
    )


def _rate(rng: random.Random) -> tuple[int, int, Fraction]:
    """A per-instance rate T_out / o_bar, exact (o_bar is a power of two)."""
    knee, out_len = rng.choice(KNEES_TOK_S), rng.choice(OUT_LENS)
    return knee, out_len, Fraction(knee, out_len)


def _n_inst(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    knee, out_len, rate = _rate(rng)
    qps, rho = rng.choice(PEAK_QPS), rng.choice(RHOS)
    mean = Fraction(qps) * rng.choice((Fraction(2, 5), Fraction(1, 2), Fraction(3, 5)))
    r = float(rate)
    count = n_inst(peak_qps=qps, rho=rho, r_inst_req_s=r)
    givens = (
        Given("qps_peak", "Peak arrival rate", f"{qps} req/s"),
        Given("qps_mean", "Mean arrival rate", f"{exact_text(mean)} req/s"),
        Given("rho", "Target utilisation", str(rho)),
        Given("r_inst", "Requests per second one instance sustains", f"{exact_text(rate)} req/s"),
    )
    quantity = {
        "id": "n_inst",
        "label": "Instances needed at peak",
        "formula": "qps_peak / (rho * r_inst)",
        "unit": "",
        "tolerance": 0.05,
        "rounding": "ceil",
        "mistakes": [
            {"replace": {"rho": "1"}, "kind": "utilisation-target",
             "hint": "Instances run at their limit leave no room for bursts; divide by rho "
                     "times r_inst."},
            {"replace": {"qps_peak": "qps_mean"}, "kind": "peak-vs-mean",
             "hint": "Size for the peak arrival rate; the mean leaves the fleet short exactly "
                     "when it matters."},
            {"formula": "qps_peak * rho / r_inst", "kind": "utilisation-target",
             "hint": "The utilisation target lowers what each instance may carry: rho belongs "
                     "in the denominator."},
        ],
    }  # fmt: skip
    solution = (
        "N_inst = ⌈λ_peak / (ρ × r_inst)⌉",
        f"= ⌈{qps} / ({rho} × {exact_text(rate)})⌉ = ⌈{format_number(qps / (rho * r))}⌉ = {count}",
    )
    return Drill(
        seed=seed,
        question="How many instances does the fleet need at peak?",
        givens=givens,
        quantity=quantity,
        expected=float(count),
        solution=solution,
        setting={"qps": qps, "rho": rho, "knee_tok_s": knee, "out_len": out_len},
    )


def _n_gpu(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    knee, out_len, rate = _rate(rng)
    qps, rho, tp = rng.choice(PEAK_QPS), rng.choice(RHOS), rng.choice(TPS)
    instances = n_inst(peak_qps=qps, rho=rho, r_inst_req_s=float(rate))
    gpus = n_gpu(n_inst=instances, tp=tp)
    givens = (
        Given("qps_peak", "Peak arrival rate", f"{qps} req/s"),
        Given("rho", "Target utilisation", str(rho)),
        Given("r_inst", "Requests per second one instance sustains", f"{exact_text(rate)} req/s"),
        Given("TP", "GPUs per instance (tensor parallelism)", str(tp)),
    )
    quantity = {
        "id": "n_gpu",
        "label": "GPUs in the fleet",
        "formula": "ceil(qps_peak / (rho * r_inst)) * TP",
        "unit": "",
        "tolerance": 0.05,
        "rounding": "ceil",
        "mistakes": [
            {"formula": "ceil(qps_peak / (rho * r_inst))", "kind": "tp-forgotten",
             "hint": "That counts instances; each instance spans TP GPUs."},
            {"formula": "ceil(qps_peak / r_inst) * TP", "kind": "utilisation-target",
             "hint": "Instances run at their limit leave no room for bursts; divide by rho "
                     "times r_inst."},
        ],
    }  # fmt: skip
    solution = (
        "N_GPU = ⌈λ_peak / (ρ × r_inst)⌉ × TP: round the instances up first, then multiply",
        f"N_inst = ⌈{qps} / ({rho} × {exact_text(rate)})⌉ = {instances}",
        f"N_GPU = {instances} × {tp} = {gpus}",
    )
    return Drill(
        seed=seed,
        question="How many GPUs does the fleet need at peak?",
        givens=givens,
        quantity=quantity,
        expected=float(gpus),
        solution=solution,
        setting={"qps": qps, "rho": rho, "tp": tp, "knee_tok_s": knee, "out_len": out_len},
    )


def _attention_share(model: Model, prompt: int) -> float:
    """Causal attention's share of a cold prefill's FLOPs (the planner's F_cold)."""
    linear = 2 * (model.params_per_token - model.embedding_params) * prompt
    attention = 2 * model.attention_width * model.layers * prompt**2
    return attention / (linear + attention)


def _ttft(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    for _ in range(200):
        s = _draw(rng, catalog, fits=True)
        prompts = [
            n
            for n in PROMPTS_TOK
            if n + s.out_len <= s.context and _attention_share(s.model, n) >= ATTENTION_SHARE_MIN
        ]
        if prompts:
            break
    else:  # pragma: no cover - catalogue change
        raise DrillError("No setting with a long enough prompt was drawn.")
    prompt, eff = rng.choice(prompts), rng.choice(PREFILL_EFFS)
    m, g, w = s.model, catalog.gpus[s.gpu_key], catalog.weight_dtypes[s.weights]
    result = s.plan(prompt_len=prompt, prefill_eff=eff)
    tflops = result["tflops"]
    fp8 = tflops == g.fp8_tflops and w.key == "fp8"
    p_ne = m.params_per_token - m.embedding_params
    givens = [
        Given("params", "Parameters, all (embeddings and LM head included"
              + _language_model_only(m, "; ", "") + ")", str(m.params)),
        Given("params_ne", "Non-embedding parameters a token passes through"
              + (f" (the active ones: {m.experts_per_token} of {m.experts} experts)"
                 if m.is_moe else ""), str(p_ne)),
    ]  # fmt: skip
    if m.is_moe:
        givens.append(Given("params_ne_all", "Non-embedding parameters, every expert",
                            str(m.params - m.embedding_params)))  # fmt: skip
    givens += [
        *_attention_shape(m),
        Given("n_prompt", "Prompt tokens, none cached", str(prompt)),
        Given("flops", f"{g.name} dense {'FP8' if fp8 else 'BF16'} tensor throughput"
              + (" (FP8 weights run on FP8 tensor cores)" if fp8 else ""),
              f"{float(tflops)!r} TFLOPS"),
        Given("mfu", "Share of that throughput a long prefill reaches", str(eff)),
    ]  # fmt: skip
    attention = "2 FLOP * q_heads * head_dim * layers * n_prompt^2"
    linear = "2 FLOP * params_ne * n_prompt"
    mistakes = [
        {"formula": f"({linear} + {attention}) / flops", "kind": "model-flops-utilisation",
         "hint": "A prefill reaches only part of the datasheet FLOP/s; divide by mfu times "
                 "flops."},
        {"formula": f"{linear} / (mfu * flops)", "kind": "no-attention",
         "hint": "That counts the linear layers only. Causal attention adds 2 × q_heads × "
                 "head_dim × layers × n² FLOP (QKᵀ and AV, halved by the mask), and it grows "
                 "with the square of the prompt."},
        {"formula": "2 FLOP * params * n_prompt / (mfu * flops)", "kind": "total-params",
         "hint": "2 × all parameters × tokens counts the embedding lookup and the LM head as "
                 "per-token prefill work and leaves out attention; use params_ne and add the "
                 "causal attention term."},
        {"replace": {"q_heads": "kv_heads"}, "kind": "kv-heads-attention",
         "hint": "Grouped-query attention shares K and V between query heads, not the work: "
                 "every query head computes its own QKᵀ and AV, so count q_heads."},
        {"formula": f"({linear} + 2 * {attention}) / (mfu * flops)", "kind": "no-causal-mask",
         "hint": "Each token attends only to the tokens before it: the causal mask halves the "
                 "n² attention work, 2 × q_heads × head_dim × layers × n², not 4 ×."},
    ]  # fmt: skip
    if m.is_moe:
        mistakes.append(
            {"replace": {"params_ne": "params_ne_all"}, "kind": "all-experts",
             "hint": "A token passes through only its routed experts: count the active "
                     "non-embedding parameters, not every expert's."}
        )  # fmt: skip
    quantity = {
        "id": "ttft",
        "label": "TTFT of a cold prefill",
        "formula": f"({linear} + {attention}) / (mfu * flops)",
        "unit": "ms",
        "tolerance": 0.05,
        "mistakes": mistakes,
    }
    lin_flops = 2 * p_ne * prompt
    att_flops = 2 * m.attention_width * m.layers * prompt**2
    ttft = result["ttft_miss_ms"]
    solution = [
        "TTFT = (2 × params_ne × n + 2 × q_heads × head_dim × layers × n²) / (mfu × flops): "
        "the linear layers, then causal attention (QKᵀ and AV, halved by the mask)",
        f"linear layers: 2 × {p_ne} × {prompt} = {format_number(lin_flops / 1e12)} TFLOP",
        f"attention: 2 × {m.attention_heads} × {m.head_dim} × {m.layers} × {prompt}² = "
        f"{format_number(att_flops / 1e12)} TFLOP "
        f"({format_number(100 * att_flops / (lin_flops + att_flops))}% of the prefill)",
        f"TTFT = {format_number(result['prefill_flops_miss'] / 1e12)} TFLOP / ({eff} × "
        f"{format_number(float(tflops))} TFLOPS) = {format_number(ttft)} ms",
    ]
    if m.is_moe:
        solution.insert(
            1,
            f"{m.name} is a mixture of experts: a token passes through "
            f"{format_number(m.params_per_token / 1e9)}B of its {format_number(m.params / 1e9)}B "
            "parameters, so the linear term counts the active ones.",
        )
    return Drill(
        seed=seed,
        question=(
            f"How long, in ms, does one {g.name} take to prefill {_a(prompt)} {prompt}-token "
            f"prompt for {m.name} ({w.name} weights) with nothing cached: the TTFT before "
            "queueing?"
        ),
        givens=tuple(givens),
        quantity=quantity,
        expected=ttft,
        solution=tuple(solution),
        setting=s.record() | {"prompt_len": prompt, "prefill_eff": eff},
    )


def _cost_per_mtok(rng: random.Random, seed: int, catalog: Catalog) -> Drill:
    s = _draw(rng, catalog, fits=True)
    m, g = s.model, catalog.gpus[s.gpu_key]
    result = s.plan()
    gpus, price = result["n_gpu"], float(result["usd_per_gpu_hour"])
    prompt = int(result["prompt_tokens"])
    givens = (
        Given("N_GPU", f"GPUs in the fleet at peak ({m.name} on {g.name})", str(gpus)),
        Given("price", f"On-demand price of one {g.name} ({g.usd_per_hour_date})",
              f"{price!r} USD/h"),
        Given("qps_peak", "Peak arrival rate", f"{s.qps} req/s"),
        Given("o_bar", "Mean output length", f"{s.out_len} tok/req"),
        Given("n_prompt", "Mean prompt length", f"{prompt} tok/req"),
        Given("rho", "Target utilisation the fleet was sized with", str(s.rho)),
    )  # fmt: skip
    quantity = {
        "id": "cost_per_mtok",
        "label": "Cost per million output tokens at peak",
        "formula": "N_GPU * price / (qps_peak * o_bar)",
        "unit": "USD/Mtok",
        "tolerance": 0.02,
        "mistakes": [
            {"formula": "price / (qps_peak * o_bar)", "kind": "gpu-count-forgotten",
             "hint": "That is one GPU's price; the whole fleet of N_GPU GPUs runs to serve the "
                     "peak."},
            {"formula": "N_GPU * price / (qps_peak * (o_bar + n_prompt))",
             "kind": "prompt-tokens-counted",
             "hint": "The figure is per output token: divide by the tokens generated, not the "
                     "prompt's too."},
            {"formula": "N_GPU * price / (rho * qps_peak * o_bar)", "kind": "rho-twice",
             "hint": "N_GPU already holds the headroom rho leaves; the fleet serves the whole "
                     "peak, so divide by the peak's tokens, not rho times them."},
            {"replace": {"price": f"{price!r} USD/s"}, "kind": "hours-vs-seconds",
             "hint": "The price is per GPU-hour and the rate per second: an hour makes 3600 "
                     "seconds' worth of tokens."},
        ],
    }  # fmt: skip
    cost_h = gpus * price
    mtok_h = s.qps * s.out_len * 3600 / 1e6
    cost = result["cost_per_mtok_usd"]
    solution = (
        "Cost per M output tokens = N_GPU × price / (λ_peak × ō): the peak fleet's hourly "
        "bill over the output tokens it makes in that hour",
        f"fleet: {gpus} GPUs × {format_number(price)} USD/h = {format_number(cost_h)} USD/h",
        f"output: {s.qps} req/s × {s.out_len} tok/req × 3600 s/h = {format_number(mtok_h)} Mtok/h",
        f"= {format_number(cost_h)} USD/h / {format_number(mtok_h)} Mtok/h = "
        f"{format_number(cost)} USD/Mtok (prompt tokens are not counted; rho is already in "
        "N_GPU)",
    )
    return Drill(
        seed=seed,
        question=(
            f"What does a million output tokens cost, in USD, on the peak fleet ({gpus} × "
            f"{g.name}) serving {m.name} at {s.qps} req/s?"
        ),
        givens=givens,
        quantity=quantity,
        expected=cost,
        solution=solution,
        setting=s.record() | {"n_gpu": gpus, "usd_per_gpu_hour": price},
    )


_BUILDERS = {
    "kv_per_token": _kv_per_token,
    "weights": _weights,
    "max_seqs": _max_seqs,
    "tpot_floor": _tpot_floor,
    "r_inst": _r_inst,
    "n_inst": _n_inst,
    "n_gpu": _n_gpu,
    "ttft": _ttft,
    "cost_per_mtok": _cost_per_mtok,
}

# For sentences: what a mistake kind means, said short ("missed the factor 2 for K and V").
# Each follows one answer and several alike ("your last answer …", "3 of your 5 answers in
# your last set …"), so none agrees in number with its subject ("was", "were").
MISTAKE_PHRASES = {
    "gb-vs-gib": "mixed up GB and GiB",
    "k-vs-ki": "read k as 1000 where it meant 1024",
    "factor-1000": "missed by a factor of 1000",
    "factor-1024": "missed by a factor of 1024 (one binary prefix step)",
    "bits-vs-bytes": "mixed up bits and bytes",
    "input-unit": "read a given in the wrong unit",
    "k-and-v": "missed the factor 2 for K and V",
    "query-heads": "counted query heads instead of KV heads",
    "embeddings-quantised": "quantised the embeddings too",
    "bf16-assumed": "assumed BF16 weights",
    "memory-utilisation": "forgot the memory utilisation",
    "no-reserve": "forgot the non-KV overhead",
    "datasheet-memory": "used the datasheet memory",
    "bandwidth-efficiency": "forgot the bandwidth efficiency",
    "all-weights-read": "counted the input embedding table",
    "memory-bound-ignored": "ignored the memory bound",
    "speed-bound-ignored": "ignored the speed bound",
    "utilisation-target": "misplaced the utilisation target rho",
    "peak-vs-mean": "sized for the mean rather than the peak",
    "tp-forgotten": "forgot the GPUs per instance",
    "model-flops-utilisation": "used the datasheet FLOP/s",
    "no-attention": "left out causal attention",
    "total-params": "counted all parameters and no attention",
    "kv-heads-attention": "counted KV heads in attention",
    "no-causal-mask": "missed the causal mask's half",
    "all-experts": "counted every expert",
    "gpu-count-forgotten": "priced one GPU, not the fleet",
    "prompt-tokens-counted": "counted prompt tokens too",
    "rho-twice": "applied rho twice",
    "hours-vs-seconds": "mixed up hours and seconds",
}


def mistake_phrase(kind: str | None) -> str:
    return MISTAKE_PHRASES.get(kind or "", "")


__all__ = [
    "AVAILABLE",
    "KINDS",
    "Drill",
    "DrillError",
    "DrillKind",
    "Given",
    "drill_check",
    "drill_generate",
    "drill_kind",
    "drill_kinds",
    "mistake_phrase",
]
