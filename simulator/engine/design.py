"""From the planner's figures to a simulated replica, so the simulator and the estimate step
use the same numbers.

- Decode step: a straight line through the planner's step at one stream
  (`tpot_one_stream_ms`) and at its planned batch (`tpot_ms` at `batch`): the weights read
  once per step plus every stream's KV, as the planner's memory time is.
- Prefill: the planner's prefill formula (2 x linear parameters per token plus causal
  attention) over its TFLOPS x efficiency, as a + b n + c n^2 seconds fitted exactly through the
  planner's own TTFT at the mean prompt and at twice it.
- Batch: the planner's planned batch when it derives the knee (its rate
  1 / (o t_step / B + t_prefill) is then the simulator's saturated rate). With a measured
  knee, the batch whose saturated rate, prefill included, reaches the knee: the measured knee
  already counts prefill, and a batch that only decodes at the knee would leave no GPU time
  for it.
- KV budget: the planner's KV pool in tokens; what running streams do not hold is the prefix
  cache.
- Prefix-cache hits (`plan_prefix`): a plan's hit rate becomes the traffic's. With a shared
  prefix (`prefix_len`), that share of the requests opens with it; each replica caches its KV
  once and a hit prefills only the rest of the prompt, attending to the cached prefix (the
  planner's F_hit). Without one, the rate is the share of every prompt that is cached (the
  planner's token hit rate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from planner.engine.capacity import prefill_flops, ttft_s
from planner.engine.catalog import load_catalog

from .fleet import ReplicaModel


@dataclass(frozen=True)
class Calibration:
    replica: ReplicaModel
    saturated_req_s: float  # what one replica carries with its batch full
    note: str
    prefix: PlanPrefix = field(default_factory=lambda: NO_PREFIX)  # the plan's cache hits


@dataclass(frozen=True)
class PlanPrefix:
    """What a plan's prefix-cache hit rate makes of the traffic (fleet.Workload's fields):
    `share` of the requests open with one shared prefix of `tokens` tokens, or (a token hit
    rate) `cached_share` of every prompt is cached."""

    share: float = 0.0
    tokens: int = 0
    cached_share: float = 0.0

    def workload_fields(self) -> dict[str, Any]:
        if self.share and self.tokens:
            return {"prefix_groups": 1, "prefix_tokens": self.tokens, "prefix_share": self.share}
        if self.cached_share:
            return {"cached_share": self.cached_share}
        return {}

    def mean_prefill_s(self, replica: ReplicaModel, prompt: float) -> float:
        """Mean prefill time of a prompt of `prompt` tokens under these hits."""
        if self.share and self.tokens:
            cached = min(self.tokens, prompt - 1)
            hit = replica.prefill_s(prompt, cached)
            return self.share * hit + (1 - self.share) * replica.prefill_s(prompt)
        return replica.prefill_s(prompt, self.cached_share * prompt)


NO_PREFIX = PlanPrefix()


def plan_prefix(plan: dict[str, Any], *, prefix_len: float | None) -> PlanPrefix:
    """The prefix-cache hits a `planner.engine.plan()` result counts: `prefix_hit` of the
    requests hit a `prefix_len`-token shared prefix (min(prefix_len, prompt - 1) tokens
    cached, the planner's n_cached), or without `prefix_len` that share of every prompt."""
    hit = plan.get("prefix_hit") or 0.0
    if hit <= 0:
        return NO_PREFIX
    if prefix_len is not None:
        return PlanPrefix(share=hit, tokens=int(min(prefix_len, plan["prompt_tokens"] - 1)))
    return PlanPrefix(cached_share=hit)


def saturated_rate(
    replica: ReplicaModel, *, prompt: float, output: float, prefix: PlanPrefix = NO_PREFIX
) -> float:
    """Requests per second one replica sustains with its batch full: each request takes its
    prefill (after its prefix-cache hit, if any) on the whole GPU and 1/B of each of its
    `output` decode steps."""
    b = replica.max_batch
    per_request = prefix.mean_prefill_s(replica, prompt) + output * replica.step_s(b) / b
    return 1 / per_request


def replica_from_plan(
    plan: dict[str, Any], *, model: str, output_tokens: float, prefix_len: float | None = None
) -> Calibration:
    """A ReplicaModel from a `planner.engine.plan()` result (`model`: the catalogue key the
    plan was made for; `output_tokens`: mean output tokens; `prefix_len`: the plan's shared
    prefix, the planner input, for a plan that counts prefix-cache hits)."""
    prefix = plan_prefix(plan, prefix_len=prefix_len)
    m = load_catalog().model(model)
    tp = plan["tp"]
    n = plan["prompt_tokens"]

    def prefill_at(tokens: float) -> float:
        flops = prefill_flops(
            linear_params=m.params_per_token - m.embedding_params,
            attention_width=m.attention_width,
            layers=m.layers,
            prompt_tokens=tokens,
        )
        return ttft_s(flops=flops, tflops=plan["tflops"], efficiency=plan["prefill_eff"], tp=tp)

    t1, t2 = prefill_at(n), prefill_at(2 * n)
    # t(n) = a n + c n^2 through both points.
    c = (t2 - 2 * t1) / (2 * n * n)
    a = (t1 - c * n * n) / n
    # Past TP = 1 each prompt token is all-reduced too (the plan's tau_ar), and each forward
    # pass pays the all-reduces' latency once (the plan's t_lat): spread over the plan's
    # prompt, so a prefill of the plan's prompt takes the plan's TTFT.
    a += plan.get("allreduce_s_per_token", 0.0) + plan.get("allreduce_latency_s", 0.0) / n
    t_prefill = a * n + c * n * n  # the plan's prompt, its all-reduces included
    one = plan["tpot_one_stream_ms"] / 1000
    at_batch = plan["tpot_ms"] / 1000
    batch = max(int(plan["batch"]), 1)
    per_stream = (at_batch - one) / (batch - 1) if batch > 1 else 0.0
    base = one - per_stream
    kv_tokens = int(plan["kv_pool_bytes"] / plan["kv_bytes_per_token"])
    max_seqs = max(int(plan["max_seqs"]), 1)

    def model_at(b: int) -> ReplicaModel:
        return ReplicaModel(
            max_batch=b,
            kv_tokens=kv_tokens,
            step_base_s=base,
            step_per_stream_s=per_stream,
            prefill_s_per_token=a,
            prefill_s_per_token2=c,
        )

    def rate_at(b: int) -> float:
        return saturated_rate(model_at(b), prompt=n, output=output_tokens, prefix=prefix)

    # The batch: the planner's, or for a measured knee the smallest whose saturated rate
    # reaches it (every stream that fits when none does).
    measured = plan["knee_source"] == "measured"
    target = plan["knee_tok_s"] / output_tokens if measured else 0.0
    if not measured:
        chosen = batch
    elif rate_at(max_seqs) < target:
        chosen = max_seqs
    else:
        lo, hi = 1, max_seqs
        while lo < hi:
            mid = (lo + hi) // 2
            if rate_at(mid) >= target:
                hi = mid
            else:
                lo = mid + 1
        chosen = lo
    replica = model_at(chosen)
    rate = rate_at(chosen)
    slower = rate / target if measured and rate < target else 1.0
    if slower < 1.0:
        # The measured knee is the hardware's own figure; these step times are the planner's
        # estimate of it, and with every stream that fits they fall short. The replica runs
        # at the knee the question gives (as its reference answer's arithmetic does), each
        # step and prefill shortened by the same factor.
        replica = replace(
            replica,
            step_base_s=replica.step_base_s * slower,
            step_per_stream_s=replica.step_per_stream_s * slower,
            prefill_s_per_token=replica.prefill_s_per_token * slower,
            prefill_s_per_token2=replica.prefill_s_per_token2 * slower,
            prefill_floor_s=replica.prefill_floor_s * slower,
        )
        rate = saturated_rate(replica, prompt=n, output=output_tokens, prefix=prefix)
    if not measured:
        note = (
            f"Batch {batch} (the planner's, from the TPOT SLO or the streams that fit); "
            f"decode step {base * 1000:.2f} + {per_stream * 1000:.4f} ms per stream; prefill "
            f"{t_prefill * 1000:.1f} ms at {n:g} tokens."
        )
    elif slower < 1.0:
        note = (
            f"The measured knee ({plan['knee_tok_s']:g} tok/s) is more than the planner's step "
            f"times give with every stream that fits ({max_seqs}): they are shortened to "
            f"{slower * 100:.0f}% of its, so the replica runs at the knee ({rate:.2f} req/s); "
            f"decode step {replica.step_s(chosen) * 1000:.2f} ms at batch {chosen}, prefill "
            f"{t_prefill * slower * 1000:.1f} ms at {n:g} tokens."
        )
    else:
        note = (
            f"Batch {chosen}: the smallest whose saturated rate, prefill included, reaches the "
            f"measured knee of {plan['knee_tok_s']:g} tok/s ({rate:.2f} req/s); decode step "
            f"{replica.step_s(chosen) * 1000:.2f} ms at that batch, prefill "
            f"{t_prefill * 1000:.1f} ms at {n:g} tokens."
        )
    return Calibration(replica, rate, note + _prefix_note(prefix, replica, n), prefix)


def _prefix_note(prefix: PlanPrefix, replica: ReplicaModel, prompt: float) -> str:
    if prefix.share and prefix.tokens:
        hit = replica.prefill_s(prompt, min(prefix.tokens, prompt - 1))
        return (
            f" Prefix cache as the plan counts it: {prefix.share * 100:.0f}% of requests open "
            f"with a {prefix.tokens:,}-token shared prefix, whose KV each replica holds once; "
            f"a hit prefills the rest of its prompt in {hit * 1000:.1f} ms."
        )
    if prefix.cached_share:
        hit = replica.prefill_s(prompt, prefix.cached_share * prompt)
        return (
            f" Prefix cache as the plan counts it: {prefix.cached_share * 100:.0f}% of every "
            f"prompt is cached, so each prefills the rest in {hit * 1000:.1f} ms."
        )
    return ""


# --- Prefill-only replicas (embedding and cross-encoder models) --------------------------------


@dataclass(frozen=True)
class PooledDesign:
    """A prefill-only service (embeddings, cross-encoder scores): every request is one forward
    pass over `tokens` prompt tokens that returns one pooled output, with no decode and no KV
    kept after it.

    model, gpu: catalogue keys (a model of the same shape as the one served, when the
    catalogue has none of its name: `model_note` says so); tokens: prompt tokens per request
    (all its inputs together); seq_len: the length each input attends over (one input, not
    the request's sum when a request packs several, as 20 rerank pairs do); bidirectional:
    attention over the whole input (embedding and cross-encoder models) rather than causal;
    fanout: parts a request is split into, each on its own replica; prefill_eff: the share of
    the GPU's dense BF16 FLOP/s a packed prefill reaches; bw_eff: the share of its bandwidth a
    weight read reaches; rho: the utilisation the fleet is sized for; step_tokens: the token
    budget of one step (vLLM --max-num-batched-tokens); max_seqs: inputs in one step at most.
    """

    model: str
    gpu: str
    tokens: float
    seq_len: float
    fanout: int = 1
    bidirectional: bool = True
    prefill_eff: float = 0.5
    bw_eff: float = 0.7
    rho: float = 0.7
    step_tokens: int = 8192
    max_seqs: int = 256
    model_note: str = ""


def pooled_replica(design: PooledDesign) -> Calibration:
    """One prefill-only replica: a step's time is its tokens' FLOPs over the GPU's
    efficiency x TFLOPS (2 x the linear parameters per token, the planner's count, plus
    attention over `seq_len`), never less than one read of the linear weights at bw_eff x
    bandwidth (a lone short input is memory-bound). The embedding table is gathered, not read,
    and an embedding or cross-encoder model has no LM head, so neither is in that read."""
    catalog = load_catalog()
    m = catalog.model(design.model)
    gpu = catalog.gpu(design.gpu)
    linear = m.params_per_token - m.embedding_params
    # Per token: the linear layers, and QK^T and AV over the input it belongs to: causal
    # (the planner's prefill_flops) or, for a bidirectional encoder, twice that.
    one_input = prefill_flops(
        linear_params=linear,
        attention_width=m.attention_width,
        layers=m.layers,
        prompt_tokens=design.seq_len,
    )
    attention = one_input - 2 * linear * design.seq_len
    per_token = 2 * linear + attention * (2 if design.bidirectional else 1) / design.seq_len
    tflops = gpu.bf16_tflops or 0.0
    if tflops <= 0:
        raise ValueError(f"The catalogue has no BF16 TFLOPS for {gpu.name}.")
    seconds_per_token = ttft_s(flops=per_token, tflops=tflops, efficiency=design.prefill_eff)
    weight_bytes = linear * 2  # BF16
    floor = weight_bytes / (design.bw_eff * float(gpu.bandwidth.magnitude))
    replica = ReplicaModel(
        max_batch=design.max_seqs,
        # Nothing outlives a request: a step holds the activations of its own tokens only.
        kv_tokens=design.max_seqs * design.step_tokens,
        step_base_s=floor,  # never used: nothing decodes
        step_per_stream_s=0.0,
        prefill_s_per_token=seconds_per_token,
        prefill_floor_s=floor,
        max_batched_tokens=design.step_tokens,
    )
    tok_s = 1 / seconds_per_token
    part = design.tokens / design.fanout
    note = (
        f"Prefill only: each request is one forward pass of {design.tokens:g} tokens"
        + (
            f", split into {design.fanout} parts of about {part:.0f} on different replicas "
            "(it answers when the last part does)"
            if design.fanout > 1
            else ""
        )
        + f"; a replica prefills {tok_s:,.0f} tok/s ({per_token / 1e9:.2f} GFLOP per token at "
        f"{design.prefill_eff:g} of {tflops:g} TFLOP/s), a step is never under "
        f"{floor * 1000:.1f} ms (one read of {weight_bytes / 1e9:.2f} GB of weights) and takes "
        f"up to {design.step_tokens:,} tokens. Nothing is decoded, so there is no TPOT; the "
        "SLO is the p99 latency."
    )
    if design.model_note:
        note += " " + design.model_note
    return Calibration(replica, tok_s / design.tokens, note)


def pooled_replicas(design: PooledDesign, qps: float) -> int:
    """Replicas for `qps` requests per second at the utilisation target: the request tokens
    a second over rho x one replica's tokens per second, rounded up."""
    calibration = pooled_replica(design)
    return max(1, math.ceil(qps / (design.rho * calibration.saturated_req_s) - 1e-9))
