"""A question's brief as capacity-planner inputs.

One reading serves the planner page opened from a question ("Compare with the capacity
planner") and the simulator's test of the question's design, so both plan the same fleet.

A brief names the model, GPU, context, load, lengths and SLO in prose; the choices it leaves
out are those of the design the question's reference answer settles on (QUESTION_DESIGNS);
a question without an entry is planned in BF16 at TP 1, as the brief alone reads.
"""

from __future__ import annotations

from typing import Any

from planner.engine import load_catalog
from questionbank import Brief

# Each question's design, where its reference answer settles on choices the brief leaves out
# (the seeds: AWQ weights on the 4090, the 1.5 GiB reserve, the measured 2000 tok/s knee).
QUESTION_DESIGNS: dict[str, dict[str, Any]] = {
    "chat-api-50qps": {
        "weights": "awq-int4",
        "kv": "bf16",
        "knee_tok_s": 2000,
        "overhead_gib": 1.5,
        "rho": 0.7,
    },
    "multi-tenant-lora": {
        "weights": "awq-int4",
        "kv": "bf16",
        "knee_tok_s": 2000,
        "overhead_gib": 1.5,
        "rho": 0.7,
    },
    # Most prompts share the knowledge-base prefix; about 2k tokens of each are its own.
    "long-context-rag": {
        "weights": "awq-int4",
        "kv": "fp8",
        "overhead_gib": 1.5,
        "rho": 0.7,
        "prefix_hit": 0.9,
        "prefix_len": 28000,
    },
    # The bank's designs: the choices each question's reference answer settles on.
    "agentic-prefix-sharing": {"weights": "fp8", "prefix_hit": 0.92},
    "first-model-one-gpu": {"knee_tok_s": 750},
    "metered-gateway-overload": {"tp": 2},
    "moe-mixtral-serving": {"tp": 2},
    "offline-batch-summaries": {"weights": "fp8"},
    "pd-disaggregation-long-prompts": {"weights": "fp8", "kv": "fp8"},
    "quantize-to-cut-cost": {"weights": "fp8", "kv": "fp8", "tp": 2},
    "reasoning-model-long-outputs": {"tp": 2, "overhead_gib": 4},
    # Eight samples of each prompt share its prefill; rollouts run hotter than a chat fleet.
    "rl-rollout-generation": {"prefix_hit": 0.875, "prefix_len": 500, "rho": 0.8},
    # The shared 1,500-token instructions lead every prompt; nearly every prompt hits them.
    "structured-extraction-api": {"prefix_hit": 0.95, "prefix_len": 1500},
    "spec-decoding-assistant": {
        "spec_decode": True,
        "spec_accept": 0.8,
        "spec_tokens": 4,
        "spec_draft_cost": 0.05,
        "overhead_gib": 4.5,
    },
    "tensor-parallel-70b-midrange": {"weights": "awq-int4", "tp": 4, "overhead_gib": 3.5},
    # The vision encoder's 7 TFLOP a capped image is not in the planner's language-model
    # prefill: counted as a lower efficiency, so a prefill takes the question's 139.5 ms.
    "vision-language-api": {"prefill_eff": 0.37},
    # Session affinity keeps each call's history cached: 3,000 of a turn's 3,050 prompt tokens
    # (the 2,000-token system prompt and the call's 1,000 earlier tokens).
    "voice-agent-latency-budget": {"prefix_hit": 0.9836},
}

# Planner inputs (plan()'s keyword arguments) and the brief fields they are read from.
_FROM_BRIEF = (
    ("context", "context_length"),
    ("qps", "peak_qps"),
    ("mean_qps", "mean_qps"),
    ("prompt_len", "input_tokens"),
    ("out_len", "output_tokens"),
    ("tpot_slo_ms", "tpot_p99_ms"),
    ("ttft_slo_ms", "ttft_p99_ms"),
)


def plan_inputs_from_brief(brief: Brief, *, slug: str = "") -> dict[str, Any]:
    """plan() keyword arguments for a question: the catalogue's model and GPU the brief names
    (left out when the catalogue has none of that name; a brief without a GPU means the
    seed's RTX 4090), the figures the brief states, BF16 weights and KV, and the question's
    design choices (QUESTION_DESIGNS) over those. An SLO target or a mean rate the brief does
    not state is None, so a caller's defaults never add a target the question does not set."""
    catalog = load_catalog()
    inputs: dict[str, Any] = {"weights": "bf16", "kv": "bf16", "tp": 1}
    inputs |= {"tpot_slo_ms": None, "ttft_slo_ms": None, "mean_qps": None}
    for kind, text in (("model", brief.model), ("gpu", brief.gpu or "rtx-4090")):
        entry = catalog.in_brief(kind, str(text or ""))
        if entry is not None:
            inputs[kind] = entry.key
    for name, field in _FROM_BRIEF:
        value = brief.value_of(field)
        if isinstance(value, int | float) and not isinstance(value, bool):
            inputs[name] = int(value) if name == "context" else value
    return inputs | QUESTION_DESIGNS.get(slug, {})
