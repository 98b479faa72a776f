"""Capacity formulas: from a model, a GPU and an SLO to a fleet size.

Each formula is written once, in the napkin-math language, in FORMULAS below. The named
Python functions, `plan()`, the planner page and its step-by-step derivation all evaluate
those same strings with the engine, so the number a candidate sees and the formula shown
beside it cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from sympy import Integer, Rational

from .catalog import DEFAULT_DIR, GPU, Catalog, KVDtype, Model, WeightDtype, load_catalog
from .errors import NapkinError
from .evaluator import Evaluator, Quantity, bounded
from .numbers import format_figure, format_number
from .parser import Line, UnitSpec, parse_line, parse_units
from .render import latex_number_unit, name_latex, to_latex
from .units import DIMENSIONLESS
from .worksheet import shown_in

GiB = 1024**3
HOURS_PER_MONTH = 730  # 8760 h / 12

# The seed questions' rough non-KV reserve per GPU, GiB. The planner derives its own
# (`overhead_gib` below) unless given one; pass this to reproduce the seeds' figures.
SEED_OVERHEAD_GIB = 1.5
# Kept for callers that imported the old name.
DEFAULT_OVERHEAD_GIB = SEED_OVERHEAD_GIB

# Non-KV memory per GPU, from vLLM's memory profile of Meta-Llama-3-8B on an 80 GB H100
# (https://github.com/vllm-project/vllm/pull/10511): PyTorch activation peak 1.26 GiB at TP = 1
# and at TP = 2; non-torch memory (CUDA context, cuBLAS workspaces, NCCL buffers and the
# custom all-reduce) 1.79 GiB at TP = 1 and 3.58 GiB at TP = 2. We scale the activation peak
# with the hidden size (the profile run pushes a fixed batch of tokens through the model) and
# take the TP = 2 non-torch figure for every TP > 1 (no larger TP was logged).
ACTIVATION_PEAK_GIB = 1.26
ACTIVATION_REF_HIDDEN = 4096
NON_TORCH_GIB = {1: 1.79, 2: 3.58}

# Share of a GPU's dense tensor FLOP/s that a long prefill reaches (the question bank's 0.5).
DEFAULT_PREFILL_EFF = 0.5
# Speculative decoding what-if: the defaults when the toggle is on without figures.
DEFAULT_SPEC_ACCEPT = 0.7  # chance the target accepts each drafted token
DEFAULT_SPEC_TOKENS = 4  # tokens drafted per target step
DEFAULT_SPEC_DRAFT_COST = 0.05  # one draft step's time as a share of one target step
# vLLM's chunked prefill splits a long prompt into chunks of --max-num-batched-tokens tokens.
CHUNK_TOKENS = 8192
# Prompts' lengths spread uniformly over +-50% of the mean, as the simulator draws them.
DEFAULT_PROMPT_SPREAD = 0.5


@dataclass(frozen=True)
class Formula:
    name: str  # the symbol it defines
    label: str
    expr: str  # napkin-math over the symbols of earlier formulas and the inputs
    unit: str | None  # the unit its value is shown in ("" a plain number, None readable)


# Symbols: P params, P_act the parameters one token passes through (P for a dense model),
# P_emb embedding and LM-head params, P_in the input embedding table (0 when tied to the LM
# head), b_w / b_emb bytes per param, L layers, H_kv KV heads, d_head head dim, d_attn query
# heads x head dim, d_model hidden size, b_kv bytes per KV element, mem GPU memory as the
# driver reports it, u memory utilisation, a_act / d_ref / m_nt the activation peak, its
# reference hidden size and the non-torch memory of vLLM's profile, overhead non-KV memory
# per GPU, TP tensor parallelism, ctx context length (max-model-len), n_prompt and n_out mean
# prompt and output tokens, eta bandwidth efficiency, beta GPU bandwidth, mfu the share of
# F_peak (dense tensor FLOP/s) that prefill reaches, N_slo the largest batch whose step meets
# the TPOT SLO (searched), T_out knee throughput, o_bar mean output length per request, hold a
# measured slot-holding time, hit the prefix-cache hit rate, n_shared the shared prefix,
# lambda_peak / lambda_mean peak and mean QPS, rho utilisation target, price USD per GPU-hour,
# month 730 h, E_x / k_x routed experts and experts per token, alpha / k_spec / c_draft the
# speculative decoding what-if, t_1 the decode step of one stream, r_stall the largest load per
# instance whose p99 TPOT, prefill stalls counted, meets the SLO (searched); past TP = 1,
# B_ar / t_call the interconnect's one-way bandwidth per GPU and one all-reduce's latency (the
# catalogue's), b_act bytes per activation element (BF16), P_vis a vision-language model's
# vision-tower parameters.
_ALL: list[Formula] = [
    Formula("W", "Weights", "(P - P_emb) * b_w + P_emb * b_emb", "GB"),
    # A vision-language model's image encoder sits on the GPUs beside the language model.
    # Quantised checkpoints leave it unquantised, as they leave the embeddings (AWQ's
    # modules_to_not_convert, llm-compressor's ignore list), so it is b_emb a parameter. vLLM
    # shards it over the TP GPUs like the language model: its mm_encoder_tp_mode defaults to
    # "weights", which splits each encoder layer's weights across the TP ranks; only "data",
    # which a model must support and the server must ask for, keeps a whole copy on each GPU.
    # So the instance holds one copy, TP GPUs share it, and it comes out of the pool as W does.
    Formula("W_vis", "Vision tower's weights (16-bit, split over the TP GPUs)", "P_vis * b_emb",
            "GB"),
    # A decode step gathers one row of the input embedding table per sequence but reads
    # the whole LM head, so only the LM head counts towards the floor. An MoE step at batch
    # one reads only the experts its token is routed to.
    Formula("W_step", "Weights read per decode step at batch 1 (active experts; the LM head, "
            "not the input embedding)", "(P_act - P_emb) * b_w + P_emb * b_emb - P_in * b_emb",
            "GB"),
    Formula("overhead", "Non-KV memory per GPU: activation peak + CUDA context, cuBLAS, NCCL "
            "(vLLM's profile, scaled to this model and TP)", "a_act * d_model / d_ref + m_nt",
            "GiB"),
    # vLLM keeps at least one KV head on every GPU: past TP = H_kv the heads replicate.
    Formula("H_gpu", "KV heads per GPU", "max(H_kv / TP, 1)", ""),
    Formula("kappa", "KV bytes per token", "2 * L * H_gpu * TP * d_head * b_kv / tok",
            "KiB/tok"),
    Formula("pool", "KV pool", "TP * (mem * u - overhead) - W", "GiB"),
    # Paged KV holds the tokens a stream has, not max-model-len: the mean prompt plus its
    # output, capped by the context.
    Formula("n_flight", "Tokens a stream holds (mean prompt + output, capped by the context)",
            "min(n_prompt + n_out, ctx)", "tok"),
    Formula("kv_stream", "KV per stream", "kappa * n_flight", None),
    Formula("N_seq", "Concurrent streams (VRAM gate)", "max(floor(pool / kv_stream), 0)", ""),
    Formula("tpot", "TPOT floor: the weights alone, batch 1", "W_step / (TP * eta * beta)",
            "ms"),
    Formula("c_tok", "Decode FLOPs per token (linear layers with the LM head, attention over "
            "the stream's KV)", "2 FLOP * (P_act - P_in) + 4 FLOP * d_attn * L * n_flight / tok",
            None),
    Formula("N_batch", "Planned batch: streams that fit, or fewer when the TPOT SLO allows "
            "fewer", "max(min(N_seq, N_slo), 1)", ""),
    # The expected share of the not-routed experts a batch touches: each of the N_batch tokens
    # picks k_x of E_x experts, so an expert stays untouched with (1 - k_x/E_x)^N_batch. Past
    # 50 E_x/k_x tokens that is below e^-50, nothing: the power stops there rather than run
    # below the smallest number the calculator keeps (a batch of 800 on Mixtral would).
    Formula("f_exp", "Share of the other experts' weights a step at this batch reads",
            "(E_x * (1 - (1 - k_x / E_x)^min(N_batch, 50 * E_x / k_x)) - k_x) / (E_x - k_x)", ""),
    Formula("W_batch", "Weights read per decode step at the planned batch",
            "W_step + (P - P_act) * b_w * f_exp", "GB"),
    Formula("t_mem", "Decode step, memory time: weights and every stream's KV read once",
            "(W_step + N_batch * kv_stream) / (TP * eta * beta)", "ms"),
    Formula("t_cmp", "Decode step, compute time", "N_batch * c_tok / (TP * mfu * F_peak)", "ms"),
    Formula("t_tok", "TPOT at the planned batch (the slower of memory and compute)",
            "max(t_mem, t_cmp)", "ms"),
    Formula("T_out", "Knee throughput: the planned batch's tokens per second",
            "N_batch * tok / t_tok", "tok/s"),
    Formula("r_speed", "Decode bound: knee throughput per request", "T_out / o_bar", "req/s"),
    Formula("F_cold", "Prefill FLOPs of a whole prompt: linear layers + causal attention",
            "2 FLOP * (P_act - P_emb) * n_prompt / tok + 2 FLOP * d_attn * L * n_prompt^2 / tok^2",
            None),
    Formula("ttft_cold", "TTFT of a prompt with nothing cached (prefill compute)",
            "F_cold / (TP * mfu * F_peak)", "ms"),
    Formula("n_cached", "Prompt tokens a prefix-cache hit skips", "min(n_shared, n_prompt - 1 tok)",
            "tok"),
    # The new tokens still attend to the cached prefix: (n_prompt^2 - n_cached^2), not n_new^2.
    Formula("F_hit", "Prefill FLOPs after a prefix-cache hit: the unique suffix, attending to "
            "the cached prefix", "2 FLOP * (P_act - P_emb) * (n_prompt - n_cached) / tok + "
            "2 FLOP * d_attn * L * (n_prompt^2 - n_cached^2) / tok^2", None),
    Formula("ttft_hit", "TTFT after a prefix-cache hit", "F_hit / (TP * mfu * F_peak)", "ms"),
    Formula("t_pre", "Mean prefill time per request (hits and misses)",
            "hit * ttft_hit + (1 - hit) * ttft_cold", "s"),
    Formula("t_hold", "Time a request holds its KV slot: its prefill, then its decode",
            "(t_pre + n_out * t_tok / tok) / req", "s/req"),
    Formula("r_memory", "Memory bound: slots / hold time (Little's law)", "N_seq / t_hold",
            "req/s"),
    Formula("r_prefill", "Prefill bound: requests per second if the GPU only prefilled",
            "1 req / t_pre", "req/s"),
    Formula("r_inst", "Requests per instance: prefill and decode share the GPU's time, the "
            "memory bound caps it", "min(1 / (1 / r_speed + 1 / r_prefill), r_memory)", "req/s"),
    Formula("N_inst", "Instances", "ceil(lambda_peak / (rho * r_inst))", ""),
    # Prefill stalls. r_inst has each instance prefill and decode in turn, but a stream that is
    # decoding waits out every other request's prefill on its GPU: at a load of lambda_r an
    # instance prefills a share lambda_r * t_pre of the time and its streams' KV reads take a
    # share lambda_r * n_out * s_str, so a step's fixed part (the weights) gets only what is
    # left. Only a request that holds a slot prefills, so while a stream decodes the prefills
    # it can meet are those of the other N_batch - 1 slots, which turn over at most
    # (N_batch - 1) / t_hold times a second: with one slot a stream never stalls (the next
    # request waits for the slot), and with a few the cap holds the stalls below
    # lambda_r * t_pre. With more slots than 1 / (1 - rho) and a derived hold time the cap
    # never binds at the loads planned, as the load per instance stays below
    # rho * N_batch / t_hold (a measured hold time can put it above). The stalls a
    # request meets are a count of random arrivals, so its own TPOT spreads around that mean
    # (a Poisson count of prefills over its n_out tokens); its p99 is 2.33 standard deviations
    # up. The fleet is then sized so the peak's load per instance keeps that p99 within the
    # TPOT SLO.
    Formula("s_str", "Decode step cost per stream (its KV read): the step's growth from one "
            "stream to the planned batch", "(t_tok - t_1) / max(N_batch - 1, 1)", "ms"),
    Formula("t_0", "Decode step's fixed part (the weights)", "t_1 - s_str", "ms"),
    Formula("r_load", "Load an instance carries: rho x r_inst, or less where prefill stalls "
            "would break the TPOT SLO (r_stall)", "min(rho * r_inst, r_stall)", "req/s"),
    Formula("lambda_r", "Requests per instance at the peak", "lambda_peak / N_inst", "req/s"),
    Formula("u_pre", "Share of each instance's time spent prefilling at the peak",
            "lambda_r * t_pre / (1 req)", ""),
    Formula("u_kv", "Share of each instance's time its streams' KV reads take at the peak",
            "lambda_r * o_bar * s_str / tok", ""),
    Formula("u_stall", "Share of each instance's time a decoding stream waits out other "
            "requests' prefills: only those holding the other N_batch − 1 slots prefill while "
            "it decodes, at most (N_batch − 1) / t_hold of them a second",
            "min(lambda_r, (N_batch - 1) / t_hold) * t_pre / (1 req)", ""),
    Formula("tpot_load", "Mean TPOT at the peak: the step's fixed part over the time other "
            "requests' prefills and the KV reads leave", "t_0 / (1 - u_stall - u_kv)", "ms"),
    Formula("k_pre", "Other requests' prefills a decoding stream meets in one token's time at "
            "the peak", "u_stall * tpot_load / t_pre", ""),
    Formula("tpot_p99", "p99 TPOT at the peak: 2.33 standard deviations of a Poisson count of "
            "stalls over a request's tokens",
            "tpot_load + 2.33 * t_pre * sqrt(k_pre * tok / n_out)", "ms"),
    # Queueing at the peak. ttft_cold and ttft_hit are one prefill with the GPU free; at the
    # peak a request may first wait for one of the N_batch slots (all held by streams still
    # decoding), then behind the prompts ahead of it on the GPU, and it starts only at the end
    # of the decode step in flight. Both waits use the VUT form of the standard approximations:
    # - Kingman, "The single server queue in heavy traffic" (Proc. Cambridge Philos. Soc. 57,
    #   1961): a G/G/1 queue's mean wait is (c_a^2 + c_s^2)/2 x rho/(1 - rho) x E[S], which
    #   is Pollaczek-Khinchine's M/G/1 rho E[S^2] / (2 E[S] (1 - rho)) when c_a = 1;
    # - Sakasegawa, "An approximation formula L_q = alpha rho^beta / (1 - rho)" (Annals of the
    #   Institute of Statistical Mathematics 29, 1977), as Hopp and Spearman's Factory Physics
    #   writes it for G/G/c: rho/(1 - rho) becomes rho^(sqrt(2(c + 1)) - 1) / (c (1 - rho)),
    #   whose power stands for Erlang C's chance that every server is busy (exact at c = 1);
    # - Abate, Choudhury and Whitt, "Exponential approximations for tail probabilities in
    #   queues, I: waiting times" (Operations Research 43(5), 1995): P(wait > t) ~ P(wait) x
    #   e^(-t P(wait) / W), so the p99 is W / P(wait) x ln(100 P(wait)), and 0 below 1%.
    # Arrivals: a round-robin router deals an instance every N_inst-th arrival of a Poisson
    # stream, and the time to the N-th arrival is Erlang-N (Larson and Odoni, Urban Operations
    # Research, 2.11.3), so c_a^2 = 1 / N_inst; random routing would keep c_a^2 = 1. Service:
    # prompts are not all the mean length, and a long one prefills longer than in proportion
    # (attention grows as its square). With lengths spread uniformly over +-s_len of the mean
    # (the simulator's +-50% by default), a prompt's own tokens u have a coefficient of
    # variation c_n = s_len / sqrt(3), and to first order a prefill's time spreads by
    # c_n x u dt/du (the delta method): the linear layers count once, attention twice. A miss's
    # own tokens are its whole prompt; a hit's are those after the cached prefix. Within-class
    # spreads add to the hits' and misses' own (the law of total variance). The mean prefill
    # stays t_pre, the mean prompt's, as the fleet is sized on it: the spread's effect on the
    # mean (attention's E[n^2] = n^2 (1 + c_n^2)) is second order and left out. Against the
    # discrete-event simulator (the plan's fleet, round-robin, prompts and outputs +-50%) at
    # each generating question's peak, this figure is 0.83x-1.59x its p99 TTFT
    # (tests/planner/test_ttft_queueing.py): low where the simulator's longest prompts' own
    # prefills dominate (the figure's own prefill is a mean prompt's), high where its waits are
    # rarer than u_pre (arrivals this regular wait less often than Poisson ones) and its steps
    # shorter than the planned batch's.
    Formula("c_a", "Arrival variability at an instance (coefficient of variation of its gaps): "
            "a round-robin router deals it every N_inst-th arrival",
            "sqrt(1 / N_inst)", ""),
    Formula("c_n", "Prompt length variability (coefficient of variation): lengths uniform "
            "over ± s_len of the mean have a standard deviation of s_len / √3 of it",
            "s_len / sqrt(3)", ""),
    Formula("sigma_cold", "Spread of a miss's prefill time from its prompt's length (standard "
            "deviation): c_n × n dF/dn, the linear layers once and attention (quadratic in n) "
            "twice, at the GPU's prefill rate", "c_n * (2 FLOP * (P_act - P_emb) * n_prompt / tok "
            "+ 4 FLOP * d_attn * L * n_prompt^2 / tok^2) / (TP * mfu * F_peak)", "ms"),
    Formula("sigma_hit", "Spread of a hit's prefill time: its own tokens after the cached "
            "prefix, u = n − n_cached, vary; c_n × u dF/du, attention over the whole prompt",
            "c_n * (2 FLOP * (P_act - P_emb) * (n_prompt - n_cached) / tok + 4 FLOP * d_attn * L "
            "* n_prompt * (n_prompt - n_cached) / tok^2) / (TP * mfu * F_peak)", "ms"),
    Formula("c_s", "Prefill time variability (coefficient of variation): prefix-cache hits "
            "and misses, each spread by its prompts' lengths",
            "sqrt((hit * (ttft_hit^2 + sigma_hit^2) + (1 - hit) * (ttft_cold^2 + sigma_cold^2)) "
            "/ t_pre^2 - 1)", ""),
    # A request that has its slot waits only behind the prefills of requests holding the
    # other slots, so the prefills it queues behind fill u_stall of the GPU's time, not u_pre:
    # with one slot it waits for the slot (W_slot) and never behind a prefill. The p99 is
    # W_pre / u_stall x ln(100 u_stall), written without the division, which is 0/0 at one slot.
    Formula("W_pre", "Mean wait behind other prompts' prefills at the peak, only those of "
            "requests holding the other slots (Kingman: variability x utilisation x time)",
            "(c_a^2 + c_s^2) / 2 * u_stall / (1 - u_stall) * t_pre", "ms"),
    Formula("W_pre99", "p99 wait behind other prefills: an exponential tail past the u_stall "
            "of arrivals that wait",
            "(c_a^2 + c_s^2) / 2 * t_pre / (1 - u_stall) * ln(max(100 * u_stall, 1))", "ms"),
    Formula("t_busy", "Time a request holds its slot at the peak: its prefill, then its "
            "tokens at the peak's mean TPOT", "(t_pre + n_out * tpot_load / tok) / req",
            "s/req"),
    Formula("u_slot", "Share of an instance's batch slots held at the peak (Little's law)",
            "lambda_r * t_busy / N_batch", ""),
    # Past a chance of 1e-50 the power stops: far below the 1% that counts, and above the
    # smallest number the calculator keeps (a batch of 500 at a tenth of its slots is 1e-30).
    Formula("P_slot", "Chance an arrival finds every slot held (Sakasegawa's stand-in for "
            "Erlang C)", "u_slot^min(sqrt(2 * (N_batch + 1)) - 1, -50 / log10(u_slot))", ""),
    # A hold is the mean output's decode: only the arrivals' variability counts.
    Formula("W_slot", "Mean wait for a batch slot at the peak (Sakasegawa's G/G/c)",
            "c_a^2 / 2 * P_slot * t_busy * req / (N_batch * (1 - u_slot))", "ms"),
    Formula("W_slot99", "p99 wait for a batch slot: an exponential tail past the P_slot of "
            "arrivals that wait", "W_slot / P_slot * ln(max(100 * P_slot, 1))", "ms"),
    Formula("ttft_queued", "p99 TTFT at the peak, queueing counted: the decode step in "
            "flight, the p99 waits for a slot and for the GPU, then a prefill with nothing "
            "cached",
            "t_tok + W_slot99 + W_pre99 + ttft_cold", "ms"),
    Formula("N_GPU", "GPUs", "N_inst * TP", ""),
    Formula("cost_h", "Fleet cost per hour", "N_GPU * price", "USD/h"),
    Formula("monthly", "Monthly cost, the peak fleet around the clock", "cost_h * month", "USD"),
    Formula("cost_mtok", "Cost per million output tokens at peak",
            "cost_h / (lambda_peak * o_bar)", "USD/Mtok"),
    Formula("N_GPU_mean", "GPUs for the mean load (autoscaled)",
            "ceil(lambda_mean / (rho * r_inst)) * TP", ""),
    Formula("monthly_mean", "Monthly cost autoscaled to the mean load",
            "N_GPU_mean * price * month", "USD"),
    Formula("cost_mtok_mean", "Cost per million output tokens at the mean load, autoscaled",
            "N_GPU_mean * price / (lambda_mean * o_bar)", "USD/Mtok"),
    Formula("saving", "Saved each month by scaling down off-peak", "monthly - monthly_mean",
            "USD"),
]  # fmt: skip
# Tensor parallelism's all-reduces, past TP = 1 only (a TP = 1 plan has none, and its figures
# and derivation stay those above). Each layer all-reduces the hidden vector of every token
# twice, after attention and after the MLP (Megatron-LM, Shoeybi et al., arXiv 1909.08053).
# A ring all-reduce of S bytes over TP GPUs moves S x 2(TP - 1)/TP through each GPU's link
# (NCCL tests, doc/PERFORMANCE.md, "Bus bandwidth"), so the time is that over the link's
# one-way bandwidth B_ar, plus a fixed latency t_call per all-reduce. A decode step's
# messages are small (one token per stream), so its 2 L latencies weigh most; a prefill's
# carry every prompt token, so its bytes do. The all-reduce waits for the layer before it and
# the next layer waits for it: its time adds to the step's and the prefill's, not overlapped.
_ALLREDUCE: list[Formula] = [
    Formula("r_ring", "Share of an all-reduced vector each GPU sends in a ring: 2(TP − 1)/TP "
            "(NCCL's bus-bandwidth factor)", "2 * (TP - 1) / TP", ""),
    Formula("tau_ar", "All-reduce time per token: two all-reduces a layer of the hidden vector, "
            "the ring's share over the interconnect", "2 * L * r_ring * d_model * b_act / "
            "(B_ar * tok)", "us/tok"),
    Formula("t_lat", "All-reduce latency of one forward pass: two all-reduces a layer",
            "2 * L * t_call", "ms"),
    Formula("t_ar", "All-reduce time of a decode step at the planned batch: the latency, then "
            "one token of each stream", "t_lat + N_batch * tau_ar * tok", "ms"),
]  # fmt: skip
FORMULAS: dict[str, Formula] = {f.name: f for f in _ALL + _ALLREDUCE}
# What an instance sees at the peak, in order (lambda_r first: the search sets it).
LOAD_NAMES = ["lambda_r", "u_pre", "u_kv", "u_stall", "tpot_load", "k_pre", "tpot_p99"]
# The queue a request meets at the peak, in order (the variants by the plan's name).
QUEUE_NAMES = ["c_a", "c_n", "sigma_cold", "sigma_hit", "c_s", "W_pre", "W_pre99", "t_busy",
               "u_slot", "P_slot", "W_slot", "W_slot99", "ttft_queued"]  # fmt: skip

# Variants chosen by the inputs. The name is the symbol they define; the key says when.
_VARIANTS: dict[str, Formula] = {
    f_key: f
    for f_key, f in [
        ("overhead_given", Formula("overhead", "Non-KV memory per GPU (given)", "overhead_in",
                                   "GiB")),
        # A vision-language model's pool: the vision tower's weights come out too.
        ("pool_vis", Formula("pool", "KV pool (after the language model's and the vision "
                             "tower's weights)", "TP * (mem * u - overhead) - W - W_vis",
                             "GiB")),
        ("n_cached_tokens", Formula("n_cached", "Prompt tokens the prefix cache serves (token "
                                    "hit rate x prompt)", "hit * n_prompt", "tok")),
        ("t_pre_tokens", Formula("t_pre", "Prefill time per request (the token hit rate applies "
                                 "to every prompt)", "ttft_hit", "s")),
        ("t_pre_cold", Formula("t_pre", "Prefill time per request (no prefix cache)",
                               "ttft_cold", "s")),
        ("t_mem_moe", Formula("t_mem", "Decode step, memory time: the experts this batch "
                              "touches and every stream's KV", "(W_batch + N_batch * kv_stream) "
                              "/ (TP * eta * beta)", "ms")),
        ("t_step_spec", Formula("t_step", "Decode step without speculation", "max(t_mem, t_cmp)",
                                "ms")),
        # Expected tokens per target step with k drafted tokens each accepted with probability
        # alpha: Leviathan, Kalman and Matias, "Fast Inference from Transformers via
        # Speculative Decoding" (ICML 2023, arXiv 2211.17192), eq. 1.
        ("E_tok", Formula("E_tok", "Tokens per target step with speculation "
                          "(1 - alpha^(k+1)) / (1 - alpha)", "(1 - alpha^(k_spec + 1)) / "
                          "(1 - alpha)", "")),
        ("t_tok_spec", Formula("t_tok", "TPOT with speculative decoding: verify k+1 tokens, "
                               "draft k, over the tokens accepted", "(max(t_mem, (k_spec + 1) * "
                               "t_cmp) + k_spec * c_draft * t_step) / E_tok", "ms")),
        ("T_out_measured", Formula("T_out", "Knee throughput (measured)", "T_meas", "tok/s")),
        ("t_hold_measured", Formula("t_hold", "Time a request holds its KV slot (measured)",
                                    "hold", "s/req")),
        ("r_inst_measured", Formula("r_inst", "Requests per instance: the smaller bound (the "
                                    "measured knee already includes prefill)",
                                    "min(r_speed, r_memory)", "req/s")),
        ("t_dec", Formula("t_dec", "PD decode pool: time a request holds its decode slot",
                          "n_out * t_tok / (tok * req)", "s/req")),
        # A measured hold is what a request holds, decode included: the decode pool's too.
        ("t_dec_measured", Formula("t_dec", "PD decode pool: time a request holds its decode "
                                   "slot (the measured hold time)", "hold", "s/req")),
        ("r_dec", Formula("r_dec", "PD decode pool: requests per decode instance",
                          "min(r_speed, N_seq / t_dec)", "req/s")),
        ("N_dec", Formula("N_dec", "PD decode instances", "ceil(lambda_peak / (rho * r_dec))",
                          "")),
        ("N_pre", Formula("N_pre", "PD prefill instances: prefill GPU-seconds per second over rho",
                          "ceil(lambda_peak * t_pre / (rho * 1 req))", "")),
        ("N_inst_pd", Formula("N_inst", "Instances: prefill pool + decode pool",
                              "N_pre + N_dec", "")),
        ("r_load_rate", Formula("r_load", "Load an instance carries: rho x r_inst",
                                "rho * r_inst", "req/s")),
        ("N_inst_load", Formula("N_inst", "Instances", "ceil(lambda_peak / r_load)", "")),
        ("c_n_full", Formula("c_n", "Prompt length variability: none, every prompt fills the "
                             "context", "0", "")),
        # A per-token hit rate caches the same share of every prompt, so the cached part grows
        # with the prompt: n dF/dn with n_cached = hit x n.
        ("sigma_hit_tokens", Formula("sigma_hit", "Spread of a prefill's time from its prompt's "
                                     "length: c_n × n dF/dn, the cached share growing with the "
                                     "prompt", "c_n * (2 FLOP * (P_act - P_emb) * (n_prompt - "
                                     "n_cached) / tok + 4 FLOP * d_attn * L * (n_prompt^2 - "
                                     "n_cached^2) / tok^2) / (TP * mfu * F_peak)", "ms")),
        ("c_s_cold", Formula("c_s", "Prefill time variability: the prompts' lengths (every "
                             "request prefills its whole prompt)", "sigma_cold / t_pre", "")),
        ("c_s_tokens", Formula("c_s", "Prefill time variability: the prompts' lengths (every "
                               "request prefills the same share of its prompt)",
                               "sigma_hit / t_pre", "")),
        # A measured knee already counts the stalls, and a measured hold is what it is: the
        # hold time is the plan's.
        ("t_busy_hold", Formula("t_busy", "Time a request holds its slot at the peak (the "
                                "plan's hold time)", "t_hold", "s/req")),
        ("ttft_queued_hit", Formula("ttft_queued", "p99 TTFT at the peak, queueing counted: the "
                                    "decode step in flight, the p99 waits for a slot and for "
                                    "the GPU, then a prefill after a prefix-cache hit",
                                    "t_tok + W_slot99 + W_pre99 + ttft_hit", "ms")),
        ("N_GPU_mean_load", Formula("N_GPU_mean", "GPUs for the mean load (autoscaled, the "
                                    "same load per instance)", "ceil(lambda_mean / r_load) * TP",
                                    "")),
        # Past TP = 1: the same figures with the all-reduces added (_ALLREDUCE above).
        ("t_tok_ar", Formula("t_tok", "TPOT at the planned batch: the slower of memory and "
                             "compute, then the step's all-reduces", "max(t_mem, t_cmp) + t_ar",
                             "ms")),
        ("t_step_spec_ar", Formula("t_step", "Decode step without speculation, its all-reduces "
                                   "included", "max(t_mem, t_cmp) + t_ar", "ms")),
        ("t_tok_spec_ar", Formula("t_tok", "TPOT with speculative decoding: verify k+1 tokens "
                                  "(all-reduced too), draft k, over the tokens accepted",
                                  "(max(t_mem, (k_spec + 1) * t_cmp) + t_lat + (k_spec + 1) * "
                                  "N_batch * tau_ar * tok + k_spec * c_draft * t_step) / E_tok",
                                  "ms")),
        ("ttft_cold_ar", Formula("ttft_cold", "TTFT of a prompt with nothing cached: prefill "
                                 "compute, then its all-reduces (every prompt token's)",
                                 "F_cold / (TP * mfu * F_peak) + t_lat + n_prompt * tau_ar",
                                 "ms")),
        ("ttft_hit_ar", Formula("ttft_hit", "TTFT after a prefix-cache hit, the new tokens' "
                                "all-reduces included", "F_hit / (TP * mfu * F_peak) + t_lat + "
                                "(n_prompt - n_cached) * tau_ar", "ms")),
        ("sigma_cold_ar", Formula("sigma_cold", "Spread of a miss's prefill time from its "
                                  "prompt's length (standard deviation): c_n × n dt/dn, the "
                                  "linear layers once, attention twice, and each token's "
                                  "all-reduces", "c_n * ((2 FLOP * (P_act - P_emb) * n_prompt / "
                                  "tok + 4 FLOP * d_attn * L * n_prompt^2 / tok^2) / (TP * mfu * "
                                  "F_peak) + n_prompt * tau_ar)", "ms")),
        ("sigma_hit_ar", Formula("sigma_hit", "Spread of a hit's prefill time: c_n × u dt/du "
                                 "over its own tokens u = n − n_cached, their all-reduces "
                                 "included", "c_n * ((2 FLOP * (P_act - P_emb) * (n_prompt - "
                                 "n_cached) / tok + 4 FLOP * d_attn * L * n_prompt * (n_prompt "
                                 "- n_cached) / tok^2) / (TP * mfu * F_peak) + (n_prompt - "
                                 "n_cached) * tau_ar)", "ms")),
        ("sigma_hit_tokens_ar", Formula("sigma_hit", "Spread of a prefill's time from its "
                                        "prompt's length: c_n × n dt/dn, the cached share "
                                        "growing with the prompt, the new tokens' all-reduces "
                                        "included", "c_n * ((2 FLOP * (P_act - P_emb) * "
                                        "(n_prompt - n_cached) / tok + 4 FLOP * d_attn * L * "
                                        "(n_prompt^2 - n_cached^2) / tok^2) / (TP * mfu * "
                                        "F_peak) + (n_prompt - n_cached) * tau_ar)", "ms")),
    ]
}  # fmt: skip
# The variant each figure takes past TP = 1, where the all-reduces add to it.
_WITH_ALLREDUCE = {
    "t_tok": "t_tok_ar", "t_step_spec": "t_step_spec_ar", "t_tok_spec": "t_tok_spec_ar",
    "ttft_cold": "ttft_cold_ar", "ttft_hit": "ttft_hit_ar", "sigma_cold": "sigma_cold_ar",
    "sigma_hit": "sigma_hit_ar", "sigma_hit_tokens": "sigma_hit_tokens_ar",
}  # fmt: skip
# Bytes of one activation element the all-reduce carries: vLLM keeps activations in 16 bits
# whatever the weights' dtype (AWQ and FP8 alike).
ACTIVATION_BYTES = 2
# The seed's simple floor, every weight read every step: shown where a question asks for it.
SIMPLE_TPOT = Formula("tpot_simple", "TPOT floor, all weights read", "W / (TP * eta * beta)", "ms")
MEASURED_HOLD = _VARIANTS["t_hold_measured"]
_EXTRA = {
    "tpot_simple": SIMPLE_TPOT,
    "t_hold_measured": MEASURED_HOLD,
    "r_speed_measured": Formula("r_speed", "Speed bound", "T_out / o_bar", "req/s"),
    "r_inst_measured": _VARIANTS["r_inst_measured"],
}


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
                f"{format_figure(model.max_context)} natively, "
                f"{format_figure(model.max_context_yarn)} with YaRN rope scaling"
            )
            raise PlanError(
                f"{model.name} holds at most {format_figure(model.context_limit)} tokens of "
                f"context ({limits}), so {format_figure(context)} cannot be planned.",
                "context",
            )
        raise PlanError(
            f"{model.name} holds at most {format_figure(model.context_limit)} tokens of context, "
            f"so {format_figure(context)} cannot be planned.",
            "context",
        )
    if out_len > context:
        raise PlanError(
            f"A mean output of {_tokens(out_len)} does not fit in a context of "
            f"{_tokens(context)}, which holds the prompt and the output together.",
            "out_len",
        )


def _tokens(n: float) -> str:
    """A count of tokens in a sentence: "1 token", "1.5 tokens", "8,192 tokens"."""
    return f"{format_figure(n)} token{'' if n == 1 else 's'}"


def check_prompt(
    *, context: int, out_len: float, prompt_len: float | None, prefix_len: float | None
) -> None:
    """Refuse a mean prompt that does not fit in the context beside the output, or a shared
    prefix longer than the prompt it starts (without a prompt length, the prompt fills the
    context). Raises PlanError, naming the field at fault."""
    if prompt_len is not None and prompt_len + out_len > context:
        raise PlanError(
            f"A mean prompt of {_tokens(prompt_len)} and a mean output of "
            f"{_tokens(out_len)} do not fit in a context of {_tokens(context)}.",
            "prompt_len",
        )
    n_prompt = prompt_len if prompt_len is not None else max(context - out_len, 1)
    if prefix_len is not None and prefix_len > n_prompt:
        prompt = "mean prompt" if prompt_len is not None else "prompt (the context less the output)"
        raise PlanError(
            f"A shared prefix of {_tokens(prefix_len)} is longer than the {prompt} "
            f"of {_tokens(n_prompt)}: the prefix is the start of a prompt.",
            "prefix_len",
        )


def _tp_splits(model: Model, tp: int) -> bool:
    """Whether vLLM shards `model` over tp GPUs: tp divides the query heads, and divides the
    KV heads or is a multiple of them (past that the KV heads replicate)."""
    kv_ok = model.kv_heads % tp == 0 or tp % model.kv_heads == 0
    return model.attention_heads % tp == 0 and kv_ok


def tp_sizes(model: Model, *, most: int = 64) -> list[int]:
    """The tensor-parallel sizes up to `most` that vLLM can shard `model` over."""
    return [tp for tp in range(1, most + 1) if _tp_splits(model, tp)]


def check_tp(model: Model, tp: int) -> None:
    """Refuse a tp vLLM refuses at start-up for this model (its ModelConfig checks that tp
    divides the query heads; its attention layer, that tp and the KV heads divide one
    another). Raises PlanError naming the sizes that work."""
    if _tp_splits(model, tp):
        return
    sizes = tp_sizes(model)
    choices = ", ".join(str(n) for n in sizes[:-1]) + f" or {sizes[-1]}" if len(sizes) > 1 else "1"
    raise PlanError(
        f"tp must divide {model.name}'s {model.attention_heads} attention heads, and divide its "
        f"{model.kv_heads} KV heads or be a multiple of them (vLLM refuses TP = {tp} at "
        f"start-up): {choices}.",
        "tp",
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
def _parsed_line(expr: str) -> Line:
    return parse_line(expr)


def _parsed_expr(expr: str) -> Any:
    return _parsed_line(expr).expr


def _parsed(name: str) -> Line:
    formula = FORMULAS.get(name) or _EXTRA[name]
    return _parsed_line(formula.expr)


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

    Qwen2.5-7B in BF16: 2 × 28 × 4 × 128 × 2 = 57344 B/tok = 56 KiB/tok. Past TP = KV heads
    they replicate, one per GPU: Qwen3-30B-A3B's 4 at TP = 8 cache twice the KV of one copy
    (`plan` refuses a TP that does not split the query heads, as vLLM does: Qwen2.5-7B's 28
    at TP = 8).
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
    stream = _run("kv_stream", {"kappa": kappa, "n_flight": _q(context_tokens, "tok")})
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
    return float(_run("r_inst_measured", env).magnitude)


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


def overhead_bytes(*, hidden_size: int, tp: int = 1) -> float:
    """Non-KV memory vLLM holds on each GPU besides the weights, in bytes (B): the activation
    peak of its profile run, scaled by hidden_size / 4096, plus the non-torch memory (CUDA
    context, cuBLAS, NCCL), which doubles past TP = 1.

    Llama-3-8B (hidden 4096): 1.26 + 1.79 = 3.05 GiB at TP = 1, 1.26 + 3.58 = 4.84 GiB at TP = 2,
    as vLLM's own log reports them.
    """
    env = {
        "a_act": _q(ACTIVATION_PEAK_GIB, "GiB"),
        "d_model": _q(hidden_size),
        "d_ref": _q(ACTIVATION_REF_HIDDEN),
        "m_nt": _q(NON_TORCH_GIB[1 if tp == 1 else 2], "GiB"),
    }
    return float(_run("overhead", env).magnitude)


def prefill_flops(
    *,
    linear_params: float,
    attention_width: int,
    layers: int,
    prompt_tokens: float,
    cached_tokens: float = 0,
) -> float:
    """FLOPs to prefill a prompt (FLOP): 2 x linear_params per new token (the weight matrices,
    embeddings and LM head excluded) plus causal attention, 2 x width x layers x (n^2 - c^2)
    for QK^T and AV over a prompt of n tokens of which c are already cached.

    Qwen2.5-7B (6.53e9 linear parameters, width 3584, 28 layers), 131072 tokens: 1.71e15 +
    3.45e15 = 5.16e15 FLOP.
    """
    env = {
        "P_act": _q(linear_params),
        "P_emb": _q(0),
        "d_attn": _q(attention_width),
        "L": _q(layers),
        "n_prompt": _q(prompt_tokens, "tok"),
        "n_cached": _q(cached_tokens, "tok"),
    }
    return float(_run("F_hit", env).magnitude)


def ttft_s(*, flops: float, tflops: float, efficiency: float, tp: int = 1) -> float:
    """Prefill time in seconds (s): flops / (tp x efficiency x tflops x 1e12)."""
    env = {
        "F_cold": _q(flops, "FLOP"),
        "TP": _q(tp),
        "mfu": _q(efficiency),
        "F_peak": _q(tflops, "TFLOPS"),
    }
    return float(_run("ttft_cold", env).magnitude)


def allreduce_s(
    *,
    layers: int,
    hidden_size: int,
    tp: int,
    tokens: float,
    bandwidth_bytes_s: float,
    latency_s: float,
) -> float:
    """Tensor parallelism's all-reduce time for one forward pass over `tokens` tokens, in
    seconds (s): 2 L all-reduces (after attention and after the MLP in every layer), each a
    latency latency_s plus the ring's 2(tp − 1)/tp share of tokens × hidden_size × 2 B over
    the interconnect's one-way bandwidth_bytes_s (B/s per GPU). 0 at tp = 1.

    Llama-3.1-70B (80 layers, hidden 8192) at TP 4 on RTX 4090s through host memory (15.75
    GB/s, 25 us): a 2000-token prefill 4 ms + 499 ms = 503 ms; a decode step of 44 streams
    4 ms + 11 ms = 15 ms.
    """
    if tp == 1:
        return 0.0
    env = {
        "TP": _q(tp), "L": _q(layers), "d_model": _q(hidden_size),
        "b_act": _q(ACTIVATION_BYTES, "B"), "B_ar": _q(bandwidth_bytes_s, "B/s"),
        "t_call": _q(latency_s, "s"), "N_batch": _q(tokens),
    }  # fmt: skip
    for name in ("r_ring", "tau_ar", "t_lat", "t_ar"):
        env[name] = _run(name, env)
    return float(env["t_ar"].magnitude)


def ttft_p99_queued(
    *,
    prefill_s: float,
    step_s: float,
    instances: int,
    load_req_s: float,
    hold_s: float,
    slots: int,
    hit: float = 0.0,
    hit_prefill_s: float | None = None,
    prefill_sd_s: float = 0.0,
    hit_prefill_sd_s: float = 0.0,
) -> float:
    """The p99 TTFT at the peak with queueing counted, in seconds (s): the decode step in
    flight (step_s), the p99 wait for one of `slots` batch slots, each held hold_s, the p99
    wait behind other prompts' prefills, then the request's own prefill, for an instance that
    takes load_req_s (req/s) from a round-robin router over `instances` instances (the plan's
    QUEUE_NAMES formulas).

    prefill_s is a prompt's prefill with nothing cached (s); with a shared prefix, `hit` of
    the requests hit it and prefill in hit_prefill_s, and the p99 is a miss's unless 99% hit.
    prefill_sd_s and hit_prefill_sd_s are the standard deviations (s) the prompts' lengths give
    a miss's and a hit's prefill (the plan's sigma_cold and sigma_hit); 0: every prompt the
    mean length. A 0.5 s prefill at 1 req/s on one of 4 instances, 10 slots held 8 s, 20 ms
    steps: 20 ms + 1.89 s + 0.49 s + 0.5 s = 2.9 s. Raises PlanError where the load fills the
    GPU or the slots (no steady queue).
    """
    env = {
        "ttft_cold": _q(prefill_s, "s"), "t_tok": _q(step_s, "s"), "N_inst": _q(instances),
        "lambda_r": _q(load_req_s, "req/s"), "t_hold": _q(hold_s, "s/req"),
        "N_batch": _q(slots), "hit": _q(hit), "sigma_cold": _q(prefill_sd_s, "s"),
        "sigma_hit": _q(hit_prefill_sd_s, "s"),
    }  # fmt: skip
    if hit > 0:
        env["ttft_hit"] = _q(hit_prefill_s if hit_prefill_s is not None else prefill_s, "s")
    names = ["t_pre" if hit > 0 else "t_pre_cold", "u_pre", "u_stall", "c_a", "c_s" if hit > 0 else
             "c_s_cold", "W_pre", "W_pre99", "t_busy_hold", "u_slot", "P_slot", "W_slot",
             "W_slot99", "ttft_queued_hit" if hit >= 0.99 else "ttft_queued"]  # fmt: skip
    for name in names:
        formula = FORMULAS.get(name) or _VARIANTS[name]
        if name in ("c_a", "P_slot"):
            share = "u_pre" if name == "c_a" else "u_slot"
            if env[share].magnitude >= 1:
                what = "prefills fill the GPU" if share == "u_pre" else "streams hold every slot"
                raise PlanError(f"At {load_req_s:g} req/s the {what}: no steady queue.")
        env[formula.name] = Evaluator(env).eval(_parsed_expr(formula.expr))
    return float(env["ttft_queued"].magnitude)


# ---------------------------------------------------------------------------------------------
# The whole plan


def _value_latex(q: Quantity, target: UnitSpec | None = None) -> str:
    return latex_number_unit(*shown_in(q, target))


# The range of each input the planner accepts, and its unit: the planner pages' form fields take
# their bounds from here too.
INPUT_LIMITS: dict[str, tuple[float, float, str]] = {
    "context": (1, 10**7, "tokens"),
    "mem_util": (0.01, 1, ""),
    "bw_eff": (0.01, 1, ""),
    "tp": (1, 64, "GPUs"),
    "knee_tok_s": (0.001, 10**9, "tok/s"),
    "out_len": (1, 10**7, "tokens"),
    "qps": (0.0001, 10**9, "req/s"),
    "rho": (0.01, 1, ""),
    "overhead_gib": (0, 10**4, "GiB"),
    "overhead_gb": (0, 10**4, "GB"),
    "hold_s": (0.001, 10**6, "s"),
    "tpot_slo_ms": (0.001, 10**6, "ms"),
    "ttft_slo_ms": (0.001, 10**7, "ms"),
    "prompt_len": (1, 10**7, "tokens"),
    "prompt_spread": (0, 1, ""),
    "prefill_eff": (0.01, 1, ""),
    "prefix_hit": (0, 1, ""),
    "prefix_len": (1, 10**7, "tokens"),
    "mean_qps": (0.0001, 10**9, "req/s"),
    "usd_per_gpu_hour": (0, 10**4, "USD/h"),
    "spec_accept": (0, 0.99, ""),
    "spec_tokens": (1, 16, "tokens"),
    "spec_draft_cost": (0, 1, ""),
}


# What an input's range means, where "must be between" alone would not say.
INPUT_MEANINGS: dict[str, str] = {
    "prompt_spread": "the share of the mean prompt that prompts' lengths spread either side of "
    "it, from 0 (every prompt the mean length) to 1 (prompts from almost nothing to twice the "
    "mean)",
}


# An input that may be 0 (a hit rate, a price, an overhead, a speculation share) but is a hair
# above it (1e-200) means 0 for every figure, and would underflow the calculator's floor
# (1e-100) deep inside the plan: it is refused with the smallest value that plans.
SMALLEST_NONZERO = 0.001


def _check_inputs(**values: float | None) -> None:
    for name, value in values.items():
        if value is None:
            continue
        low, high, unit = INPUT_LIMITS[name]
        if not low <= value <= high:
            meaning = f": {INPUT_MEANINGS[name]}" if name in INPUT_MEANINGS else ""
            raise PlanError(
                f"{name} must be between {low} and {high} {unit}".rstrip() + meaning + ".", name
            )
        if low == 0 and 0 < value < SMALLEST_NONZERO:
            raise PlanError(
                f"{name} must be 0 or at least {SMALLEST_NONZERO:g}: a smaller one is 0 for "
                "every figure of the plan.",
                name,
            )


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


# ---------------------------------------------------------------------------------------------
# Why a plan misses its SLO or holds nothing, and what would change that. Each remedy is
# weighed on the plan's own figures, scaled by the one lever it pulls, and named only where it
# reaches the target and is not already in use: telling a candidate to cache a prefix the plan
# already caches, or to quantise weights already at 4 bits, teaches nothing. A larger TP
# splits the compute and the weight reads over more GPUs but not the all-reduces, whose
# latency stays and whose ring share grows: its figure is the plan's time less its
# all-reduces, scaled by TP, plus the all-reduces at the larger TP. It still says "about": a
# larger TP also moves the KV and the overhead, which the figure leaves where they are.


# One node's NVLink domain: past 8 GPUs tensor parallelism crosses nodes, where its
# all-reduces stop scaling, so no remedy asks for more.
MOST_TP_SUGGESTED = 8


def _or_list(items: list[str]) -> str:
    """'a', 'a or b', 'a, b or c'."""
    return ", ".join(items[:-1]) + " or " + items[-1] if len(items) > 1 else "".join(items)


def _remedies(items: list[str]) -> str:
    """Remedies, each of which may hold a list of its own: 'a or b', 'a; b; or c'."""
    return " or ".join(items) if len(items) <= 2 else "; ".join(items[:-1]) + "; or " + items[-1]


@dataclass(frozen=True)
class _Setup:
    """What a plan was made with: the levers a remedy may pull, and the figures to weigh it."""

    model: Model
    gpu: GPU
    weights: WeightDtype
    kv: KVDtype
    catalog: Catalog
    tp: int
    mem_util: float
    prefill_eff: float
    overhead_given: float | None  # B per GPU; None: derived for each TP

    def overhead(self, tp: int) -> float:
        if self.overhead_given is not None:
            return self.overhead_given
        return overhead_bytes(hidden_size=self.model.hidden_size, tp=tp)

    def usable(self, *, tp: int | None = None, gpu: GPU | None = None) -> float:
        """Bytes per GPU vLLM may fill with weights and KV."""
        memory = float((gpu or self.gpu).memory.magnitude)
        return memory * self.mem_util - self.overhead(tp or self.tp)

    def weights_bytes(self, dtype: WeightDtype | None = None) -> float:
        """Weights the instance holds (the plan's W, and W_vis for a vision-language model)."""
        d = dtype or self.weights
        held = weights_bytes(
            params=self.model.params, embedding_params=self.model.embedding_params,
            bytes_per_param=d.bytes_per_param,
            embedding_bytes_per_param=d.embedding_bytes_per_param,
        )  # fmt: skip
        if self.model.vision_params:
            held += self.model.vision_params * d.embedding_bytes_per_param
        return held

    def step_bytes(self, dtype: WeightDtype | None = None) -> float:
        """Weights a decode step reads at batch 1 (the plan's W_step)."""
        d, m = dtype or self.weights, self.model
        return (m.params_per_token - m.embedding_params) * d.bytes_per_param + (
            m.embedding_params - m.unread_embedding_params
        ) * d.embedding_bytes_per_param

    def pool(self, *, tp: int | None = None, gpu: GPU | None = None,
             dtype: WeightDtype | None = None) -> float:  # fmt: skip
        """The KV pool, B (the plan's pool)."""
        tp = tp or self.tp
        return tp * self.usable(tp=tp, gpu=gpu) - self.weights_bytes(dtype)

    def kv_per_token(self, *, tp: int | None = None, kv: KVDtype | None = None) -> float:
        m = self.model
        return kv_bytes_per_token(
            layers=m.layers, kv_heads=m.kv_heads, head_dim=m.head_dim,
            kv_bytes=(kv or self.kv).bytes, tp=tp or self.tp,
        )  # fmt: skip

    def tflops(self, gpu: GPU | None = None) -> float:
        """Dense TFLOPS a prefill runs at: FP8 tensor cores for FP8 weights where the GPU
        has them (as the plan's F_peak)."""
        g = gpu or self.gpu
        fp8 = self.weights.key == "fp8" and g.fp8_tflops
        return float((g.fp8_tflops if fp8 else g.bf16_tflops) or 0)

    def allreduce_s(self, tokens: float, *, tp: int | None = None,
                    gpu: GPU | None = None) -> float:  # fmt: skip
        """One forward pass's all-reduces over `tokens` tokens at `tp` on `gpu`'s interconnect
        (s; 0 at TP = 1), as the plan's t_lat + tokens × tau_ar."""
        g = gpu or self.gpu
        return allreduce_s(
            layers=self.model.layers, hidden_size=self.model.hidden_size, tp=tp or self.tp,
            tokens=tokens, bandwidth_bytes_s=float(g.allreduce_bandwidth.magnitude),
            latency_s=float(g.allreduce_latency.magnitude),
        )  # fmt: skip

    def prefill_s(self, tokens: float, cached: float = 0) -> float:
        """One prefill of `tokens` prompt tokens, `cached` of them from the prefix cache, its
        all-reduces included (s)."""
        m = self.model
        flops = prefill_flops(
            linear_params=m.params_per_token - m.embedding_params,
            attention_width=m.attention_width, layers=m.layers, prompt_tokens=tokens,
            cached_tokens=cached,
        )  # fmt: skip
        compute = ttft_s(flops=flops, tflops=self.tflops(), efficiency=self.prefill_eff, tp=self.tp)
        return compute + self.allreduce_s(tokens - cached)

    def at_tp(self, ms: float, *, tokens: float, tp: int) -> float:
        """A time of this plan's (ms) that tokens' all-reduces are part of, at a larger `tp`:
        the rest split over tp GPUs instead of the plan's, the all-reduces at tp added."""
        own = self.allreduce_s(tokens) * 1000
        return (ms - own) * self.tp / tp + self.allreduce_s(tokens, tp=tp) * 1000

    def on_gpu(self, ms: float, *, tokens: float, gpu: GPU, scale: float) -> float:
        """A time of this plan's (ms) with its part besides the all-reduces scaled by `scale`
        (another GPU's or dtype's rate against the plan's) and `gpu`'s all-reduces added."""
        own = self.allreduce_s(tokens) * 1000
        return (ms - own) * scale + self.allreduce_s(tokens, gpu=gpu) * 1000

    def larger_tp(self, ok: Callable[[int], bool], *, most: int = MOST_TP_SUGGESTED) -> int | None:
        """The smallest TP above the plan's, up to `most` (MOST_TP_SUGGESTED unless given),
        that vLLM can shard this model over and `ok` accepts."""
        sizes = tp_sizes(self.model, most=most)
        return next((n for n in sizes if n > self.tp and ok(n)), None)

    def other_gpus(self, ok: Callable[[GPU], bool]) -> list[str]:
        """Names of the catalogue's other GPUs that `ok` accepts."""
        return [g.name for g in self.catalog.gpus.values() if g.key != self.gpu.key and ok(g)]

    def smaller_weights(self, ok: Callable[[WeightDtype], bool]) -> WeightDtype | None:
        """The least-squeezed weight dtype smaller than the plan's that `ok` accepts."""
        smaller = sorted(
            (d for d in self.catalog.weight_dtypes.values()
             if d.bytes_per_param < self.weights.bytes_per_param),
            key=lambda d: -d.bytes_per_param,
        )  # fmt: skip
        return next((d for d in smaller if ok(d)), None)


def _largest(ok: Callable[[float], bool], high: float) -> float:
    """The largest x in [0, high] with ok(x), for ok true at 0 and false past some point."""
    lo, hi = 0.0, high
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _weights_reason(s: _Setup) -> str:
    """The weights do not fit on one GPU's share: more GPUs, smaller weights, a larger GPU; or
    an overhead per GPU that leaves nothing, which more GPUs cannot mend."""
    w = s.weights_bytes()
    per_gpu, usable = w / s.tp, s.usable()
    memory = float(s.gpu.memory.magnitude)
    overhead = s.overhead(s.tp)
    given = " (given)" if s.overhead_given is not None else ""
    if usable <= 0:
        # Every GPU of an instance carries the overhead: splitting the weights over more GPUs
        # or shrinking them leaves it as it is.
        head = (
            f"The weights alone do not fit: the {format_number(overhead / GiB)} GiB of non-KV "
            f"memory per GPU{given} is more than vLLM may use of each GPU "
            f"({format_number(memory / GiB)} GiB × {format_number(s.mem_util)} = "
            f"{format_number(memory * s.mem_util / GiB)} GiB), and every GPU of an instance "
            "carries it, so more GPUs per instance do not make room."
        )
    else:
        head = (
            f"The weights alone do not fit: {format_number(per_gpu / 1e9)} GB per GPU, but vLLM "
            f"may use {format_number(usable / GiB)} GiB per GPU "
            f"({format_number(memory / GiB)} GiB × "
            f"{format_number(s.mem_util)} − {format_number(overhead / GiB)} GiB overhead)."
        )
    helps = []
    if s.overhead_given is not None and memory * s.mem_util > per_gpu:
        derived = overhead_bytes(hidden_size=s.model.hidden_size, tp=s.tp)
        room = math.floor((memory * s.mem_util - per_gpu) / GiB * 100) / 100
        helps.append(
            f"a non-KV memory well under {format_number(room)} GiB per GPU (at "
            f"{format_number(room)} GiB the weights fill the rest and no KV fits; leave it "
            f"blank to derive it: {format_number(derived / GiB)} GiB)"
        )
    # Holding the weights is what the plan needs first, so every TP the planner takes counts,
    # past one node's MOST_TP_SUGGESTED GPUs too.
    most = int(INPUT_LIMITS["tp"][1])
    tp = s.larger_tp(lambda n: w / n <= s.usable(tp=n), most=most)
    if tp:
        helps.append(
            f"TP {tp} ({format_number(w / tp / 1e9)} GB of weights per GPU"
            + (
                f"; past {MOST_TP_SUGGESTED} GPUs an instance spans nodes, whose all-reduces "
                "are slower)"
                if tp > MOST_TP_SUGGESTED
                else ")"
            )
        )
    dtype = s.smaller_weights(lambda d: s.weights_bytes(d) / s.tp <= usable)
    if dtype:
        helps.append(
            f"{dtype.name} weights ({format_number(s.weights_bytes(dtype) / s.tp / 1e9)} GB "
            "per GPU)"
        )
    gpus = s.other_gpus(lambda g: per_gpu <= s.usable(gpu=g))
    if gpus:
        helps.append(f"a GPU with more memory ({_or_list(gpus)})")
    needed = (per_gpu + overhead) / memory
    if s.mem_util < needed <= 0.95:
        helps.append(f"--gpu-memory-utilization {math.ceil(needed * 100) / 100:g}")
    if not helps:
        if usable <= 0 and s.overhead_given is not None and overhead >= memory:
            return head + " Give the non-KV memory one GPU holds: it is more than the GPU."
        if usable <= 0:
            # The overhead fits the GPU but not the share of it vLLM is given.
            return head + (
                f" Raise --gpu-memory-utilization above {format_number(overhead / memory)} (the "
                "non-KV memory alone takes that share of each GPU), with more GPUs per "
                "instance or smaller weights."
            )
        return head + (
            f" No single change of TP (up to {most}), weight dtype or GPU in the catalogue "
            "holds them: combine more GPUs per instance with smaller weights."
        )
    return head + f" What would hold them: {_remedies(helps)}."


def _kv_reason(s: _Setup, *, pool: float, kv_stream: float, n_flight: float,
               prompt_given: bool) -> str:  # fmt: skip
    """Not one stream's KV fits in the pool: a shorter stream, smaller KV, more GPUs,
    smaller weights, a larger GPU."""
    head = (
        f"Not even one sequence of {format_number(n_flight)} tokens fits: it needs "
        f"{format_number(kv_stream / GiB)} GiB of KV and the pool holds "
        f"{format_number(max(pool, 0) / GiB)} GiB."
    )
    helps = []
    kappa = kv_stream / n_flight
    if pool > 0:
        tokens = math.floor(pool / kappa)
        helps.append(
            f"streams of at most {tokens} tokens, prompt and output together"
            + ("" if prompt_given else " (a blank prompt fills the context: give one, or "
               f"shorten the context to {tokens})")
        )  # fmt: skip
    smaller_kv = [k for k in s.catalog.kv_dtypes.values() if k.bytes < s.kv.bytes]
    kv = next((k for k in sorted(smaller_kv, key=lambda k: -k.bytes)
               if kv_stream * k.bytes / s.kv.bytes <= pool), None)  # fmt: skip
    if kv:
        helps.append(f"{kv.name} KV ({format_number(kv_stream * kv.bytes / s.kv.bytes / GiB)} GiB "
                     "a stream)")  # fmt: skip
    # As for the weights: every TP the planner takes, past one node's GPUs too.
    most = int(INPUT_LIMITS["tp"][1])
    tp = s.larger_tp(lambda n: s.kv_per_token(tp=n) * n_flight <= s.pool(tp=n), most=most)
    if tp:
        helps.append(
            f"TP {tp} (a pool of {format_number(s.pool(tp=tp) / GiB)} GiB"
            + (
                f"; past {MOST_TP_SUGGESTED} GPUs an instance spans nodes, whose all-reduces "
                "are slower)"
                if tp > MOST_TP_SUGGESTED
                else ")"
            )
        )
    dtype = s.smaller_weights(lambda d: kv_stream <= s.pool(dtype=d))
    if dtype:
        helps.append(f"{dtype.name} weights (a pool of {format_number(s.pool(dtype=dtype) / GiB)}"
                     " GiB)")  # fmt: skip
    gpus = s.other_gpus(lambda g: kv_stream <= s.pool(gpu=g))
    if gpus:
        helps.append(f"a GPU with more memory ({_or_list(gpus)})")
    if not helps:
        return head + " No single change in the catalogue makes room: combine them."
    return head + f" What would make room: {_remedies(helps)}."


def _tpot_floor_reason(s: _Setup, *, slo_ms: float, one_stream_ms: float, floor_ms: float,
                       kv_stream: float, spec_decode: bool) -> str:  # fmt: skip
    """Even one stream's step misses the TPOT SLO: a step reads the weights, so more
    bandwidth per instance or fewer bytes."""
    head = (
        f"The TPOT SLO of {format_number(slo_ms)} ms is below the floor of "
        f"{format_number(one_stream_ms)} ms (one stream, its KV included; the weights alone "
        f"take {format_number(floor_ms)} ms)."
    )
    helps = []
    # One stream's step all-reduces one token; the rest of it reads the weights and its KV.
    tp = s.larger_tp(lambda n: s.at_tp(one_stream_ms, tokens=1, tp=n) <= slo_ms)
    if tp:
        helps.append(
            f"TP {tp} (about {format_number(s.at_tp(one_stream_ms, tokens=1, tp=tp))} ms: each "
            f"GPU reads 1/{tp} of the weights"
            # A plan already split keeps its all-reduces; one on a single GPU gains them.
            + (
                ", and the all-reduces stay)"
                if s.tp > 1
                else f", plus the all-reduces TP {tp} adds)"
            )
        )

    def with_dtype(d: WeightDtype) -> float:
        # One stream's step reads the weights and its KV (speculation, if on, divides both
        # alike): smaller weights shrink their part, the KV read and the all-reduces stay.
        ratio = (s.step_bytes(d) + kv_stream) / (s.step_bytes() + kv_stream)
        return s.on_gpu(one_stream_ms, tokens=1, gpu=s.gpu, scale=ratio)

    dtype = s.smaller_weights(lambda d: with_dtype(d) <= slo_ms)
    if dtype:
        helps.append(f"{dtype.name} weights (about {format_number(with_dtype(dtype))} ms)")
    bandwidth = float(s.gpu.bandwidth.magnitude)

    def on(g: GPU) -> float:
        return s.on_gpu(one_stream_ms, tokens=1, gpu=g,
                        scale=bandwidth / float(g.bandwidth.magnitude))  # fmt: skip

    gpus = s.other_gpus(lambda g: on(g) <= slo_ms)
    if gpus:
        helps.append(f"a GPU with more memory bandwidth ({_or_list(gpus)})")
    if not spec_decode:
        accept, drafted = DEFAULT_SPEC_ACCEPT, DEFAULT_SPEC_TOKENS
        per_step = (1 - accept ** (drafted + 1)) / (1 - accept)  # the plan's E_tok
        spec_ms = one_stream_ms * (1 + DEFAULT_SPEC_TOKENS * DEFAULT_SPEC_DRAFT_COST) / per_step
        if spec_ms <= slo_ms:
            helps.append(
                f"speculative decoding (about {format_number(spec_ms)} ms at the what-if's "
                f"defaults, {format_number(per_step)} tokens a step)"
            )
    helps.append(f"a TPOT SLO of at least {format_number(math.ceil(one_stream_ms * 10) / 10)} ms")
    return head + f" What would meet it: {_remedies(helps)}."


# Said after a TTFT reason's remedies: each brings one prefill within the SLO, not the waits.
QUEUE_CAVEAT = (
    " Each brings one prefill within the SLO; at the peak, requests also wait for a batch slot "
    "and behind other prompts' prefills (the p99 TTFT with queueing counted), so leave room "
    "for that wait."
)


def _ttft_reason(s: _Setup, *, slo_ms: float, p99_ms: float, n_prompt: float, prefix_hit: float,
                 by_prefix: bool, n_cached: float, hit_ms: float) -> str:  # fmt: skip
    """The p99 prefill misses the TTFT SLO. Which prefill is the p99 (a whole prompt, a
    prefix-cache miss, a hit's suffix) says what would shorten it; caching is named only
    where the plan does not cache already."""
    slo_s = slo_ms / 1000
    miss = not prefix_hit or (by_prefix and prefix_hit < 0.99)
    if not prefix_hit:
        head = (
            f"The p99 TTFT is one prefill of the whole {format_number(n_prompt)}-token prompt, "
            f"{format_number(p99_ms)} ms, over the {format_number(slo_ms)} ms SLO; more "
            "instances do not shorten a prefill."
        )
    elif miss:
        head = (
            f"The p99 TTFT is a prefix-cache miss: the cache already serves "
            f"{format_number(prefix_hit * 100)}% of requests (a hit prefills in "
            f"{format_number(hit_ms)} ms), but the {format_number((1 - prefix_hit) * 100)}% "
            f"that miss prefill the whole {format_number(n_prompt)}-token prompt in "
            f"{format_number(p99_ms)} ms, over the {format_number(slo_ms)} ms SLO."
        )
    else:
        cached = (
            f"{format_number(n_cached)} of its {format_number(n_prompt)} tokens"
            if by_prefix
            else f"{format_number(prefix_hit * 100)}% of each prompt's tokens"
        )
        head = (
            f"The p99 TTFT is a prefix-cache hit's: with {cached} cached, the prefill of the "
            f"rest takes {format_number(p99_ms)} ms, over the {format_number(slo_ms)} ms SLO."
        )
    helps = []
    # The tokens the p99 prefill computes, each all-reduced: the whole prompt for a miss, the
    # part after the cached prefix or share for a hit.
    if miss:
        own = n_prompt
    elif by_prefix:
        own = n_prompt - n_cached
    else:
        own = n_prompt * (1 - prefix_hit)
    tp = s.larger_tp(lambda n: s.at_tp(p99_ms, tokens=own, tp=n) <= slo_ms)
    if tp:
        helps.append(
            f"TP {tp} (about {format_number(s.at_tp(p99_ms, tokens=own, tp=tp))} ms, the "
            f"prefill's compute split over {tp} GPUs"
            + (", its all-reduces not" if s.tp > 1 else f", plus the all-reduces TP {tp} adds")
            + "; with prefill disaggregated only the prefill instances need them)"
        )
    rate = s.tflops()

    def on(g: GPU) -> float:
        return s.on_gpu(p99_ms, tokens=own, gpu=g, scale=rate / s.tflops(g))

    gpus = s.other_gpus(lambda g: s.tflops(g) > rate and on(g) <= slo_ms)
    if gpus:
        helps.append(f"a GPU with more compute ({_or_list(gpus)})")
    fp8 = s.catalog.weight_dtypes.get("fp8")
    if fp8 and s.weights.key != "fp8" and s.gpu.fp8_tflops:
        fp8_ms = s.on_gpu(p99_ms, tokens=own, gpu=s.gpu, scale=rate / s.gpu.fp8_tflops)
        if fp8_ms <= slo_ms:
            helps.append(f"FP8 weights, which prefill on the GPU's FP8 tensor cores (about "
                         f"{format_number(fp8_ms)} ms)")  # fmt: skip
    if miss:
        longest = math.floor(_largest(lambda n: s.prefill_s(n) <= slo_s, n_prompt))
        if longest >= 1:
            # A prefix is the start of a prompt: a prompt shorter than it shortens it too.
            helps.append(
                f"prompts of at most {longest} tokens"
                + (f" (the shared prefix, {format_number(n_cached)} tokens now, within them)"
                   if by_prefix and longest <= n_cached else "")
            )  # fmt: skip
    elif by_prefix:
        longest = math.floor(_largest(lambda u: s.prefill_s(n_cached + u, n_cached) <= slo_s, own))
        if longest >= 1:
            helps.append(
                f"at most {longest} tokens after the cached prefix (now {format_number(own)})"
            )
    else:
        share = 1 - _largest(lambda f: s.prefill_s(n_prompt, n_prompt * (1 - f)) <= slo_s, 1)
        if share < 1 - 1 / n_prompt:
            helps.append(f"a token hit rate of {format_number(math.ceil(share * 1000) / 1000)} "
                         "or more")  # fmt: skip
    if not prefix_hit:
        helps.append(
            "caching a prefix the prompts share, if they share one (the p99 becomes a hit's "
            "only once 99% of requests hit)"
        )
    elif miss and hit_ms <= slo_ms:
        helps.append(
            f"a hit rate of 99% or more, which makes the p99 a hit's {format_number(hit_ms)} "
            "ms, if the misses can be made to hit (prefix-aware routing keeps a prefix on the "
            "replicas that hold it)"
        )
    helps.append(f"a TTFT SLO of at least {format_number(math.ceil(p99_ms))} ms")
    # Feasibility is judged on one prefill; the queue-aware p99 the plan also shows adds the
    # waits at the peak, which none of these remove.
    return head + f" What would meet it: {_remedies(helps)}." + QUEUE_CAVEAT


def _search_batch(upper: int, ok: Callable[[int], bool], *, want_largest: bool) -> int:
    """Binary search over 1..upper for a monotone predicate: the largest n with ok(n) (0 when
    none), or the smallest n with ok(n) (upper when none)."""
    lo, hi = 1, upper
    if want_largest:
        if not ok(1):
            return 0
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
        return lo
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid + 1, hi)
    return lo


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
    knee_tok_s: float | None = None,
    out_len: float = 256,
    qps: float = 50,
    rho: float = 0.7,
    tpot_slo_ms: float | None = None,
    overhead_gb: float | None = None,
    overhead_gib: float | None = None,
    hold_s: float | None = None,
    prompt_len: float | None = None,
    prompt_spread: float = DEFAULT_PROMPT_SPREAD,
    prefill_eff: float = DEFAULT_PREFILL_EFF,
    prefix_hit: float = 0.0,
    prefix_len: float | None = None,
    ttft_slo_ms: float | None = None,
    mean_qps: float | None = None,
    usd_per_gpu_hour: float | None = None,
    spec_decode: bool = False,
    spec_accept: float = DEFAULT_SPEC_ACCEPT,
    spec_tokens: int = DEFAULT_SPEC_TOKENS,
    spec_draft_cost: float = DEFAULT_SPEC_DRAFT_COST,
    pd_disagg: bool = False,
    catalog_dir: Path = DEFAULT_DIR,
) -> dict[str, Any]:
    """Size a fleet. Returns the `plan --json` object.

    Inputs: catalogue keys (or names/aliases) for model, gpu, weights and kv dtypes; context
    (max-model-len, tokens), mem_util (vLLM --gpu-memory-utilization, applied to the memory the
    driver reports), bw_eff (achievable share of the memory bandwidth), tp (GPUs per
    instance), out_len (mean output tokens), prompt_len (mean prompt tokens; None: the prompt
    fills the context), prompt_spread (how far prompts' lengths spread either side of the
    mean, uniformly, as a share of it: 0.5, the simulator's, draws half to 1.5x the mean; it
    sets only the queueing estimate's prefill variability, never the fleet), qps (peak
    req/s), mean_qps (mean req/s, for the autoscaled cost), rho (target utilisation),
    tpot_slo_ms and ttft_slo_ms (optional p99 targets),
    knee_tok_s (a measured output tok/s at the SLO; None: derived from the decode step at the
    planned batch), overhead_gib (non-KV memory per GPU, GiB; overhead_gb, decimal GB,
    overrides it; None for both: derived from the model's size and TP), hold_s (optional
    measured seconds a request holds its KV slot), prefill_eff (share of the dense TFLOPS a
    prefill reaches), prefix_hit (prefix-cache hit rate, 0..1: the share of requests that hit
    a prefix_len-token shared prefix, or without prefix_len the share of prompt tokens served
    from the cache), usd_per_gpu_hour (None: the catalogue's list price), spec_decode with
    spec_accept / spec_tokens / spec_draft_cost (the speculative-decoding what-if), pd_disagg
    (size prefill and decode pools separately).

    Output: the memory figures (weights_bytes, weights_read_per_step_bytes, kv_bytes_per_token,
    kv_pool_bytes, kv_bytes_per_stream, tokens_per_stream, overhead_bytes, ...), max_seqs;
    tpot_floor_ms (weights alone at batch 1) and tpot_floor_simple_ms (all weights);
    batch and tpot_ms (at the planned batch, its KV included); knee_tok_s with knee_source
    ("measured" | "derived"); prefill_flops, prefill_eff, ttft_ms (the typical request: after
    a prefix hit when there is a cache), ttft_miss_ms, ttft_p99_ms; r_speed_req_s, hold_s,
    r_memory_req_s, r_prefill_req_s, r_inst_req_s and binding ("ttft" | "tpot" | "memory");
    ttft_p99_queued_ms, the p99 TTFT at the peak with the waits for a batch slot and for the
    GPU counted, and ttft_queue, its parts ({ttft_p99_ms, step_ms, arrival_cv, prompt_cv,
    prefill_cv, prefill_sd_ms and hit_prefill_sd_ms (None without hits), prefill_share,
    wait_share (the share of prefills a request with its slot queues behind: those of the
    requests holding the other slots), prefill_wait_ms, prefill_wait_p99_ms, slot_share,
    slot_wait_chance, slot_wait_ms, slot_wait_p99_ms, over_slo}), both None without a TTFT
    SLO, for a disaggregated plan, or where the peak fills an instance; n_inst and n_gpu (None
    when nothing fits); cost (usd_per_gpu_hour, cost_per_mtok_usd, monthly_usd, and at the
    mean load); feasible, fits, reason (where the plan misses an SLO or holds nothing: why, and
    the remedies that would reach the target from the plan's figures, none already in use),
    notes, and `steps`: one {name, label, formula_latex, substituted, value, unit} per formula.
    Raises PlanError (or KeyError for an unknown catalogue key) with a one-sentence message.
    """
    _check_inputs(
        context=context, mem_util=mem_util, bw_eff=bw_eff, tp=tp, knee_tok_s=knee_tok_s,
        out_len=out_len, qps=qps, rho=rho, overhead_gib=overhead_gib, overhead_gb=overhead_gb,
        hold_s=hold_s, tpot_slo_ms=tpot_slo_ms, prompt_len=prompt_len,
        prompt_spread=prompt_spread, prefill_eff=prefill_eff,
        prefix_hit=prefix_hit, prefix_len=prefix_len, ttft_slo_ms=ttft_slo_ms, mean_qps=mean_qps,
        usd_per_gpu_hour=usd_per_gpu_hour, spec_accept=spec_accept, spec_tokens=spec_tokens,
        spec_draft_cost=spec_draft_cost,
    )  # fmt: skip
    catalog = load_catalog(catalog_dir)
    m = catalog.model(model)
    check_context(m, context, out_len)
    g = catalog.gpu(gpu)
    w = catalog.weight_dtype(weights)
    k = catalog.kv_dtype(kv)
    check_tp(m, tp)
    check_prompt(context=context, out_len=out_len, prompt_len=prompt_len, prefix_len=prefix_len)
    n_prompt = prompt_len if prompt_len is not None else max(context - out_len, 1)
    if mean_qps is not None and mean_qps > qps:
        raise PlanError(
            f"A mean of {format_number(mean_qps)} QPS is above the peak of "
            f"{format_number(qps)} QPS: the peak is the busiest the load gets.",
            "mean_qps",
        )
    by_prefix = prefix_len is not None
    if prefix_hit and not by_prefix and prefix_hit >= 1:
        raise PlanError(
            "A token hit rate must stay below 1: the last prompt token is always computed.",
            "prefix_hit",
        )
    # FP8 weights run on FP8 tensor cores where the GPU has them; AWQ dequantises to 16 bits.
    fp8 = w.key == "fp8" and g.fp8_tflops
    tflops = g.fp8_tflops if fp8 else g.bf16_tflops
    if not tflops:
        raise PlanError(f"The catalogue has no dense TFLOPS for {g.name}.", "gpu")
    price = usd_per_gpu_hour if usd_per_gpu_hour is not None else g.usd_per_hour
    measured_knee = knee_tok_s is not None

    env: dict[str, Quantity] = {
        "P": _q(m.params), "P_act": _q(m.params_per_token), "P_emb": _q(m.embedding_params),
        "P_in": _q(m.unread_embedding_params), "b_w": _q(w.bytes_per_param, "B"),
        "b_emb": _q(w.embedding_bytes_per_param, "B"), "L": _q(m.layers),
        "H_kv": _q(m.kv_heads), "d_head": _q(m.head_dim), "d_attn": _q(m.attention_width),
        "d_model": _q(m.hidden_size), "b_kv": _q(k.bytes, "B"), "TP": _q(tp), "mem": g.memory,
        "u": _q(mem_util), "ctx": _q(context, "tok"), "n_prompt": _q(n_prompt, "tok"),
        "n_out": _q(out_len, "tok"), "eta": _q(bw_eff), "beta": g.bandwidth,
        "mfu": _q(prefill_eff), "F_peak": _q(tflops, "TFLOPS"), "o_bar": _q(out_len, "tok/req"),
        "lambda_peak": _q(qps, "req/s"), "rho": _q(rho), "hit": _q(prefix_hit),
        "s_len": _q(prompt_spread),
        "month": _q(HOURS_PER_MONTH, "h"),
        "a_act": _q(ACTIVATION_PEAK_GIB, "GiB"), "d_ref": _q(ACTIVATION_REF_HIDDEN),
        "m_nt": _q(NON_TORCH_GIB[1 if tp == 1 else 2], "GiB"),
    }  # fmt: skip
    vision = bool(m.vision_params)
    names = ["W", "W_step"]
    if vision:
        env["P_vis"] = _q(m.vision_params or 0)
        names.insert(1, "W_vis")
    if overhead_gb is not None or overhead_gib is not None:
        env["overhead_in"] = (
            _q(overhead_gb, "GB") if overhead_gb is not None else _q(overhead_gib or 0, "GiB")
        )
        names.append("overhead_given")
    else:
        names.append("overhead")
    names += ["H_gpu", "kappa", "pool_vis" if vision else "pool", "n_flight", "kv_stream",
              "N_seq", "tpot", "c_tok"]  # fmt: skip
    allreduce = tp > 1
    if allreduce:
        env |= {
            "B_ar": g.allreduce_bandwidth or _q(0), "t_call": g.allreduce_latency or _q(0),
            "b_act": _q(ACTIVATION_BYTES, "B"),
        }  # fmt: skip
        names += ["r_ring", "tau_ar", "t_lat"]
    names.append("N_batch")
    if m.is_moe:
        env |= {"E_x": _q(m.experts or 1), "k_x": _q(m.experts_per_token or 1)}
        names += ["f_exp", "W_batch", "t_mem_moe"]
    else:
        names.append("t_mem")
    names.append("t_cmp")
    if allreduce:
        names.append("t_ar")
    if spec_decode:
        env |= {"alpha": _q(spec_accept), "k_spec": _q(spec_tokens), "c_draft": _q(spec_draft_cost)}
        names += ["t_step_spec", "E_tok", "t_tok_spec"]
    else:
        names.append("t_tok")
    if measured_knee:
        env["T_meas"] = _q(knee_tok_s or 0, "tok/s")
        names.append("T_out_measured")
    else:
        names.append("T_out")
    names += ["r_speed", "F_cold", "ttft_cold"]
    if prefix_hit > 0:
        if by_prefix:
            env["n_shared"] = _q(prefix_len or 0, "tok")
            names += ["n_cached", "F_hit", "ttft_hit", "t_pre"]
        else:
            names += ["n_cached_tokens", "F_hit", "ttft_hit", "t_pre_tokens"]
    else:
        names.append("t_pre_cold")
    if hold_s is not None:
        env["hold"] = _q(hold_s, "s/req")
        names.append("t_hold_measured")
    else:
        names.append("t_hold")
    names.append("r_memory")
    names += ["r_inst_measured"] if measured_knee else ["r_prefill", "r_inst"]
    # A measured knee already counts the stalls it was measured with, and a PD decode pool
    # does not prefill: only a derived, colocated plan counts prefill stalls.
    stalls = not measured_knee and not pd_disagg
    fleet = ["N_inst", "N_GPU"]
    if pd_disagg:
        fleet = ["t_dec" if hold_s is None else "t_dec_measured", "r_dec", "N_dec", "N_pre",
                 "N_inst_pd", "N_GPU"]  # fmt: skip
    elif stalls:
        fleet = ["s_str", "t_0", "r_load" if tpot_slo_ms is not None else "r_load_rate",
                 "N_inst_load", *LOAD_NAMES, "N_GPU"]  # fmt: skip
    names += fleet
    # The queue a request meets at the peak, checked against the TTFT SLO (a plan without one
    # sets TTFT no target), for a colocated fleet: a disaggregated what-if's prefill pool does
    # not decode and its decode pool does not prefill, so this queue is not its own.
    if ttft_slo_ms is not None and not pd_disagg:
        if not stalls:
            names += ["lambda_r", "u_pre", "u_stall"]
        # A prompt that fills the context cannot run longer than the mean: no spread.
        names += ["c_a", "c_n" if prompt_len is not None else "c_n_full"]
        if prefix_hit > 0 and by_prefix:
            names += ["sigma_cold", "sigma_hit", "c_s"]
        elif prefix_hit > 0:
            names += ["sigma_hit_tokens", "c_s_tokens"]
        else:
            names += ["sigma_cold", "c_s_cold"]
        names += [
            "W_pre", "W_pre99",
            "t_busy" if stalls and hold_s is None else "t_busy_hold",
            "u_slot", "P_slot", "W_slot", "W_slot99",
            "ttft_queued_hit" if prefix_hit > 0 and not (by_prefix and prefix_hit < 0.99)
            else "ttft_queued",
        ]  # fmt: skip
    if price is not None:
        env["price"] = _q(price, "USD/h")
        names += ["cost_h", "monthly", "cost_mtok"]
        if mean_qps is not None and not pd_disagg:
            env["lambda_mean"] = _q(mean_qps, "req/s")
            names += ["N_GPU_mean_load" if stalls else "N_GPU_mean", "monthly_mean",
                      "cost_mtok_mean", "saving"]  # fmt: skip
    if allreduce:
        names = [_WITH_ALLREDUCE.get(name, name) for name in names]
    formulas = [FORMULAS.get(name) or _VARIANTS[name] for name in names]
    fleet_names = {
        "N_inst", "N_GPU", "t_dec", "r_dec", "N_dec", "N_pre", "cost_h", "monthly", "cost_mtok",
        "N_GPU_mean", "monthly_mean", "cost_mtok_mean", "saving", "s_str", "t_0", "r_load",
        *LOAD_NAMES, *QUEUE_NAMES,
    }  # fmt: skip
    load_formulas = [f for f in formulas if f.name in LOAD_NAMES[1:]]
    decode_names = [f for f in formulas if f.name in (
        "f_exp", "W_batch", "t_mem", "t_cmp", "t_ar", "t_step", "E_tok", "t_tok",
    )]  # fmt: skip

    def decode_at(batch: int) -> dict[str, Quantity]:
        """The decode step's figures at `batch` streams, by the same formulas."""
        trial = dict(env, N_batch=_q(batch))
        for formula in decode_names:
            trial[formula.name] = Evaluator(trial).eval(_parsed_expr(formula.expr))
        return trial

    def tpot_at(batch: int) -> float:
        return float(decode_at(batch)["t_tok"].magnitude)

    def number(name: str) -> float:
        return float(env[name].magnitude)

    def at_load(load: float) -> dict[str, float] | None:
        """What an instance sees at `load` req/s, by the same formulas: {req_s,
        prefill_share, kv_share, stall_share (the prefills a decoding stream waits out),
        tpot_ms, tpot_p99_ms}; None where those prefills and the KV reads leave the weights no
        time."""
        trial = dict(env, lambda_r=_q(load, "req/s"))
        for formula in load_formulas:
            if (
                formula.name == "tpot_load"
                and trial["u_stall"].magnitude + trial["u_kv"].magnitude >= 1
            ):
                return None
            trial[formula.name] = Evaluator(trial).eval(_parsed_expr(formula.expr))
        figures = {name: float(trial[name].magnitude) for name in LOAD_NAMES}
        return {
            "req_s": figures["lambda_r"], "prefill_share": figures["u_pre"],
            "kv_share": figures["u_kv"], "stall_share": figures["u_stall"],
            "tpot_ms": figures["tpot_load"] * 1000, "tpot_p99_ms": figures["tpot_p99"] * 1000,
        }  # fmt: skip

    def p99_at(load: float) -> float:
        figures = at_load(load)
        return math.inf if figures is None else figures["tpot_p99_ms"] / 1000

    def stall_limit(limit_s: float) -> float:
        """The largest load per instance (req/s) whose p99 TPOT meets `limit_s`, searched
        to a part in a million below the load at which the weights get no time at all."""
        per_request = number("t_pre") + number("o_bar") * number("s_str")
        lo, hi = 0.0, 1 / per_request
        for _ in range(20):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if p99_at(mid) <= limit_s else (lo, mid)
        return lo

    def planned_batch(upper: int) -> tuple[int, str]:
        """The batch the plan runs, at most `upper` streams, and what set it: the measured
        knee (the smallest batch that reaches it), the TPOT SLO (the largest batch that meets
        it) or the streams that fit."""
        if measured_knee:
            knee = knee_tok_s or 0
            return _search_batch(
                upper, lambda n: n / tpot_at(n) >= knee, want_largest=False
            ), "knee"
        if tpot_slo_ms is not None:
            limit = tpot_slo_ms / 1000
            return _search_batch(upper, lambda n: tpot_at(n) <= limit, want_largest=True), "slo"
        return upper, "fits"

    steps: list[dict[str, Any]] = []
    parsed: dict[str, Line] = {}
    shown: dict[str, Formula] = {}
    fits = True
    batch_source = "fits"
    # Where the peak's prefills or holds fill an instance, its queue has no steady state:
    # the name of the share that does, and no queueing figure after it.
    queue_full = ""
    for formula in formulas:
        if not fits and formula.name in fleet_names:
            continue  # no fleet of instances that hold nothing
        if formula.name in QUEUE_NAMES and queue_full:
            continue
        if formula.name in ("c_a", "P_slot"):
            share = "u_pre" if formula.name == "c_a" else "u_slot"
            if env[share].magnitude >= 1:
                queue_full = share
                continue
        if formula.name == "N_batch":
            slots, batch_source = planned_batch(max(int(env["N_seq"].magnitude), 1))
            env["N_slo"] = _q(slots)
        if formula.name == "s_str":
            env["t_1"] = decode_at(1)["t_tok"]
        if formula.name == "r_load" and "r_stall" in formula.expr:
            assert tpot_slo_ms is not None
            if number("t_0") * 1000 >= tpot_slo_ms:  # the floor breaks it: no load helps
                formula = _VARIANTS["r_load_rate"]
            else:
                env["r_stall"] = _q(stall_limit(tpot_slo_ms / 1000), "req/s")
        line = _parsed_line(formula.expr)
        try:
            value = Evaluator(env).eval(line.expr)
        except NapkinError as error:  # only a degenerate input can get here (e.g. tiny r_inst)
            raise PlanError(f"{formula.label}: {error.message}") from None
        env[formula.name] = value
        parsed[formula.name] = line
        shown[formula.name] = formula
        steps.append(_step(formula, value))
        if formula.name == "N_seq":
            fits = int(value.magnitude) >= 1
    env["tpot_simple"] = _run("tpot_simple", env)
    # Every symbol of a substituted line, inputs and earlier results alike, shows its value,
    # so a reader can follow each line with a calculator.
    values_latex = {name: _value_latex(q) for name, q in env.items()}
    for name, formula in shown.items():
        target = parse_units(formula.unit) if formula.unit else None
        values_latex[name] = _value_latex(env[name], target)
    for step in steps:
        step["substituted"] = to_latex(parsed[step["name"]].expr, values_latex)

    tpot_floor_ms = number("tpot") * 1000
    tpot_ms = number("t_tok") * 1000
    one_stream_ms = float(decode_at(1)["t_tok"].magnitude) * 1000
    max_seqs = int(number("N_seq"))
    batch = int(number("N_batch"))
    ttft_cold_ms = number("ttft_cold") * 1000
    ttft_ms = number("ttft_hit") * 1000 if prefix_hit > 0 else ttft_cold_ms
    # p99 TTFT is a miss whenever more than 1% of requests miss the prefix cache.
    ttft_p99_ms = ttft_cold_ms if by_prefix and prefix_hit < 0.99 else ttft_ms
    if not prefix_hit:
        ttft_p99_ms = ttft_cold_ms
    prefill_flops_used = number("F_hit") if prefix_hit > 0 else number("F_cold")
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
        f"embedding table: {format_number(tpot_floor_ms)} ms. Counting every weight, as the "
        f"simple napkin figure does, gives {format_number(number('tpot_simple') * 1000)} ms."
    )
    if fits:  # with no stream that fits there is no step to time
        notes.append(
            f"At the planned batch of {batch} stream{'s' if batch != 1 else ''} a decode step "
            f"also reads each stream's {format_number(number('kv_stream') / GiB)} GiB of KV: "
            f"TPOT {format_number(tpot_ms)} ms (one stream alone: "
            f"{format_number(one_stream_ms)} ms)."
        )
    seqs_cap = g.vllm_default_max_num_seqs
    if fits and batch > seqs_cap:
        notes.append(
            f"vLLM batches at most {seqs_cap} sequences on the {g.name} by default: start it "
            f"with --max-num-seqs {batch} or more, or each instance runs {seqs_cap} streams, "
            f"not the {batch} this plan counts on."
        )
    overhead_given = overhead_gb is not None or overhead_gib is not None
    notes.append(
        f"Non-KV memory per GPU: {format_number(number('overhead') / GiB)} GiB"
        + (
            " (given)."
            if overhead_given
            else f", from vLLM's profile of Llama-3-8B (activation peak 1.26 GiB at hidden size "
            f"4096, scaled to {m.hidden_size}; non-torch {NON_TORCH_GIB[1 if tp == 1 else 2]} "
            f"GiB at TP = {'1' if tp == 1 else '2 and above'})."
        )
    )
    if measured_knee:
        knee_note = (
            f"Knee: the measured {format_number(knee_tok_s or 0)} tok/s you gave (it already "
            "includes prefill, so the prefill bound is not applied again)."
        )
    elif not fits:
        knee_note = "Knee: none, since no stream fits in the KV pool there is no decode step."
    else:
        if batch_source == "slo" and number("N_slo") < 1:
            # No batch meets the SLO: the plan runs one stream, and says that it misses too.
            why = (
                f": no batch meets the {format_number(tpot_slo_ms)} ms TPOT SLO, not even one "
                "stream, so the plan runs one."
            )
        elif batch_source == "slo" and batch < max_seqs:
            slo = format_number(tpot_slo_ms)
            why = f", the largest batch whose step meets the {slo} ms TPOT SLO."
        else:
            why = ", every stream that fits."
        knee_note = (
            f"Knee: derived, {format_number(number('T_out'))} tok/s = {batch} "
            f"stream{'s' if batch != 1 else ''} / {format_number(tpot_ms)} ms per step{why}"
            " Measure it (vllm bench serve at the SLO) and type it in to plan on it."
        )
    notes.append(knee_note)

    def allreduce_ms(tokens: float) -> float:
        """This plan's all-reduces for one forward pass over `tokens` tokens (ms)."""
        return allreduce_s(
            layers=m.layers, hidden_size=m.hidden_size, tp=tp, tokens=tokens,
            bandwidth_bytes_s=number("B_ar") if allreduce else 0,
            latency_s=number("t_call") if allreduce else 0,
        ) * 1000  # fmt: skip

    new_tokens = n_prompt - (number("n_cached") if prefix_hit > 0 else 0)
    if allreduce and fits:
        notes.append(
            f"All-reduce at TP {tp} over {g.interconnect}: two per layer, {2 * m.layers} a "
            f"forward pass, each {format_number(number('t_call') * 1e6)} µs of latency plus "
            f"{format_number(number('r_ring'))} × {m.hidden_size} × {ACTIVATION_BYTES} B per "
            f"token at {format_number(number('B_ar') / 1e9)} GB/s. A decode step of {batch} "
            f"stream{'s' if batch != 1 else ''} spends {format_number(number('t_ar') * 1000)} ms "
            f"on them ({format_number(number('t_lat') * 1000)} ms of it latency); a prefill of "
            f"{format_number(new_tokens)} tokens {format_number(allreduce_ms(new_tokens))} ms."
        )
    compute_ms = ttft_ms - (allreduce_ms(new_tokens) if allreduce else 0)
    notes.append(
        f"TTFT: {format_number(prefill_flops_used / 1e12)} TFLOP of prefill at "
        f"{format_number(prefill_eff)} × {format_number(tflops)} TFLOPS × TP {tp}"
        + (
            f" ({format_number(compute_ms)} ms) and its all-reduces "
            f"({format_number(ttft_ms - compute_ms)} ms)"
            if allreduce
            else ""
        )
        + f": {format_number(ttft_ms)} ms"
        + (
            f" after a prefix-cache hit; a miss prefills the whole prompt in "
            f"{format_number(ttft_cold_ms)} ms"
            + (
                f", and with {format_number((1 - prefix_hit) * 100)}% of requests missing "
                "that is the p99."
                if ttft_p99_ms == ttft_cold_ms
                else "."
            )
            if prefix_hit > 0
            else "."
        )
    )
    chunks = math.ceil(new_tokens / CHUNK_TOKENS)
    if chunks > 1 and fits and batch == 1:
        # One slot: the request prefills alone and the next waits for its slot, so no decode
        # shares a step with a chunk.
        notes.append(
            f"Chunked prefill: the {format_number(new_tokens)} new prompt tokens run in {chunks} "
            f"chunks of {CHUNK_TOKENS} (--max-num-batched-tokens); with one slot no other "
            "stream decodes beside them, so no decode step waits on a chunk."
        )
    elif chunks > 1 and fits:
        chunk_ms = ttft_s(
            flops=prefill_flops(
                linear_params=m.params_per_token - m.embedding_params,
                attention_width=m.attention_width, layers=m.layers,
                prompt_tokens=min(n_prompt, CHUNK_TOKENS * 2),
                cached_tokens=min(n_prompt, CHUNK_TOKENS * 2) - CHUNK_TOKENS,
            ),
            tflops=tflops, efficiency=prefill_eff, tp=tp,
        ) * 1000 + (allreduce_ms(CHUNK_TOKENS) if allreduce else 0)  # fmt: skip
        # A chunk and the decodes share one forward pass: one all-reduce latency, not the
        # chunk's and the step's both.
        stretched = chunk_ms + tpot_ms - (number("t_lat") * 1000 if allreduce else 0)
        text = (
            f"Chunked prefill: the {format_number(new_tokens)} new prompt tokens run in {chunks} "
            f"chunks of {CHUNK_TOKENS} (--max-num-batched-tokens), each sharing a step with the "
            f"running decodes: TTFT grows by about {format_number(chunks * tpot_ms)} ms, and "
            f"while it runs each decode step takes about {format_number(stretched)} ms."
        )
        if tpot_slo_ms is not None and stretched > tpot_slo_ms:
            text += (
                f" That is over the {format_number(tpot_slo_ms)} ms TPOT SLO: lower "
                "--max-num-batched-tokens or disaggregate prefill."
            )
        notes.append(text)
    if vision:
        notes.append(
            f"{m.name}'s {format_number(round((m.vision_params or 0) / 1e9, 2))}B-parameter "
            f"vision tower holds {format_number(number('W_vis') / 1e9)} GB of 16-bit weights "
            "beside the language model's"
            + (f", split over the {tp} GPUs" if tp > 1 else "")
            + ", taken from the KV pool; its compute on each image is not in the prefill "
            "figures, which are the language model's."
        )
    if m.is_moe:
        expert_bytes = (m.params - m.params_per_token) * w.bytes_per_param
        notes.append(
            f"{m.name} is a mixture of experts ({m.experts} experts, {m.experts_per_token} per "
            f"token): memory holds all {format_number(m.params / 1e9)}B parameters, the floor "
            f"and FLOPs use the {format_number(m.params_per_token / 1e9)}B active ones; at a "
            f"batch of {batch} a step reads {format_number(number('f_exp') * 100)}% of the "
            "other experts too."
        )
    usable = number("mem") * mem_util - number("overhead")  # B per GPU for weights and KV
    # The vision tower's weights share the GPUs with the language model's (W_vis says why).
    weights_per_gpu = (number("W") + (number("W_vis") if vision else 0)) / tp
    setup = _Setup(
        model=m, gpu=g, weights=w, kv=k, catalog=catalog, tp=tp, mem_util=mem_util,
        prefill_eff=prefill_eff, overhead_given=number("overhead") if overhead_given else None,
    )  # fmt: skip
    if weights_per_gpu > usable:
        reason = _weights_reason(setup)
        if m.is_moe:
            ep = math.ceil(expert_bytes / max(usable - (number("W") - expert_bytes) / tp, 1))
            notes.append(
                f"Expert parallelism (vLLM --enable-expert-parallel) spreads the "
                f"{format_number(expert_bytes / 1e9)} GB of routed experts over the GPUs "
                f"instead of slicing every expert: with attention at TP = {tp}, about {ep} GPUs "
                "hold the experts."
            )
    elif not fits:
        reason = _kv_reason(
            setup, pool=number("pool"), kv_stream=number("kv_stream"),
            n_flight=number("n_flight"), prompt_given=prompt_len is not None,
        )  # fmt: skip
    feasible: bool | None = None
    if tpot_slo_ms is not None:
        feasible = tpot_slo_ms >= tpot_ms
        if not feasible and reason is None:
            # A measured knee past the SLO: the largest batch that meets it, if any does.
            slo_batch = (
                _search_batch(batch, lambda n: tpot_at(n) * 1000 <= tpot_slo_ms,
                              want_largest=True)
                if batch > 1 else 0
            )  # fmt: skip
            if slo_batch:
                knee = slo_batch / tpot_at(slo_batch)
                reason = (
                    f"At the measured knee's batch of {batch} streams a step takes "
                    f"{format_number(tpot_ms)} ms, over the {format_number(tpot_slo_ms)} ms "
                    f"TPOT SLO: the knee was measured past it. At most {slo_batch} streams meet "
                    f"the SLO, about {format_number(knee)} tok/s: measure the knee at the SLO "
                    f"(vllm bench serve --goodput tpot:{format_number(tpot_slo_ms)}) and type "
                    "that in, or leave the knee blank to plan on the derived one."
                )
            else:
                reason = _tpot_floor_reason(
                    setup, slo_ms=tpot_slo_ms, one_stream_ms=one_stream_ms,
                    floor_ms=tpot_floor_ms, kv_stream=number("kv_stream"),
                    spec_decode=spec_decode,
                )  # fmt: skip
    if ttft_slo_ms is not None:
        ttft_ok = ttft_p99_ms <= ttft_slo_ms
        feasible = ttft_ok if feasible is None else feasible and ttft_ok
        if not ttft_ok and reason is None:
            reason = _ttft_reason(
                setup, slo_ms=ttft_slo_ms, p99_ms=ttft_p99_ms, n_prompt=n_prompt,
                prefix_hit=prefix_hit, by_prefix=by_prefix,
                n_cached=number("n_cached") if prefix_hit > 0 else 0, hit_ms=ttft_ms,
            )  # fmt: skip
    if not fits:
        feasible = False
    binding: str = "memory"
    if fits:
        r_memory, r_speed = number("r_memory"), number("r_speed")
        if ttft_slo_ms is not None and ttft_p99_ms > ttft_slo_ms:
            binding = "ttft"
        elif "r_stall" in env and number("N_inst") > _run("N_inst", env).magnitude:
            binding = "stall"  # the stalls, not the rate, set the fleet
        elif measured_knee:
            binding = "memory" if r_memory < r_speed else "tpot"
        elif r_memory <= number("r_inst"):
            binding = "memory"
        elif number("t_pre") >= 1 / r_speed:
            binding = "ttft"
        elif batch_source != "slo" or batch >= max_seqs:
            binding = "memory"  # the VRAM gate sets the batch
        else:
            binding = "tpot"

    def maybe(name: str, scale: float = 1.0) -> float | None:
        return number(name) * scale if name in env and fits else None

    # What one instance of the planned fleet sees at the peak, prefill stalls counted.
    at_peak = at_rate_fleet = None
    if "tpot_p99" in env and fits:
        at_peak = at_load(number("lambda_r"))
        # The same at the fleet r_inst alone asks for: what the stalls would do to it.
        at_rate_fleet = at_load(qps / _run("N_inst", env).magnitude)
    # What a request meets at the peak before its first token, queueing counted.
    ttft_queue = None

    def maybe_ms(name: str) -> float | None:
        return number(name) * 1000 if name in env else None

    if "ttft_queued" in env and fits:
        queued_ms = number("ttft_queued") * 1000
        ttft_queue = {
            "ttft_p99_ms": queued_ms, "step_ms": tpot_ms, "arrival_cv": number("c_a"),
            "prompt_cv": number("c_n"), "prefill_cv": number("c_s"),
            "prefill_sd_ms": maybe_ms("sigma_cold"), "hit_prefill_sd_ms": maybe_ms("sigma_hit"),
            "prefill_share": number("u_pre"), "wait_share": number("u_stall"),
            "prefill_wait_ms": number("W_pre") * 1000,
            "prefill_wait_p99_ms": number("W_pre99") * 1000,
            "slot_share": number("u_slot"), "slot_wait_chance": number("P_slot"),
            "slot_wait_ms": number("W_slot") * 1000,
            "slot_wait_p99_ms": number("W_slot99") * 1000,
            "over_slo": queued_ms > (ttft_slo_ms or 0),
        }  # fmt: skip
    result: dict[str, Any] = {
        "model": m.name,
        "gpu": g.name,
        "weights": w.name,
        "kv": k.name,
        "context": context,
        "tp": tp,
        "prompt_tokens": n_prompt,
        "prompt_spread": prompt_spread,
        "weights_bytes": number("W"),
        # A vision-language model's vision tower, held beside W (None for a text model).
        "vision_weights_bytes": number("W_vis") if vision else None,
        "weights_read_per_step_bytes": number("W_step"),
        "params": m.params,
        "active_params": m.params_per_token,
        "moe": m.is_moe,
        "kv_heads_per_gpu": number("H_gpu"),
        "kv_bytes_per_token": number("kappa"),
        "kv_pool_bytes": number("pool"),
        "tokens_per_stream": number("n_flight"),
        "kv_bytes_per_stream": number("kv_stream"),
        "memory_bytes": number("mem"),
        "memory_datasheet_bytes": float(g.memory_datasheet.magnitude),
        "overhead_bytes": number("overhead"),
        "overhead_source": "given" if overhead_given else "derived",
        "max_seqs": max_seqs,
        "batch": batch,
        "tpot_floor_ms": tpot_floor_ms,
        "tpot_floor_simple_ms": number("tpot_simple") * 1000,
        "tpot_ms": tpot_ms,
        "tpot_one_stream_ms": one_stream_ms,
        "knee_tok_s": number("T_out"),
        "knee_source": "measured" if measured_knee else "derived",
        "tflops": tflops,
        "prefill_eff": prefill_eff,
        "prefill_flops": prefill_flops_used,
        "prefill_flops_miss": number("F_cold"),
        # The prefill's all-reduces (0 at TP = 1): tau_ar for each new prompt token and t_lat
        # once a forward pass, so a prefill of n tokens spends t_lat + n tau_ar on them.
        "allreduce_s_per_token": number("tau_ar") if allreduce else 0.0,
        "allreduce_latency_s": number("t_lat") if allreduce else 0.0,
        "ttft_ms": ttft_ms,
        "ttft_miss_ms": ttft_cold_ms,
        "ttft_p99_ms": ttft_p99_ms,
        # The p99 TTFT at the peak with the waits for a slot and for the GPU counted (None
        # without a TTFT SLO, for a disaggregated what-if, or where the peak fills an
        # instance: the notes say).
        "ttft_p99_queued_ms": ttft_queue["ttft_p99_ms"] if ttft_queue else None,
        "ttft_queue": ttft_queue,
        # Where the peak's prefills or holds fill an instance: its queue grows without end.
        "queue_full": bool(queue_full and fits),
        "prefix_hit": prefix_hit,
        "r_speed_req_s": number("r_speed"),
        "hold_s": number("t_hold"),
        "r_memory_req_s": number("r_memory"),
        "r_prefill_req_s": None if measured_knee else number("r_prefill"),
        "r_inst_req_s": number("r_inst"),
        "binding": binding,
        "n_inst": int(number("N_inst")) if fits else None,
        # The fleet r_inst alone asks for, before prefill stalls are counted.
        "n_inst_rate": (int(_run("N_inst", env).magnitude) if stalls else int(number("N_inst")))
        if fits
        else None,
        "r_stall_req_s": maybe("r_stall"),
        "r_load_req_s": maybe("r_load"),
        "at_peak": at_peak,
        "at_rate_fleet": at_rate_fleet,
        "n_gpu": int(number("N_GPU")) if fits else None,
        "usd_per_gpu_hour": price,
        "price_date": g.usd_per_hour_date if usd_per_gpu_hour is None else None,
        "cost_per_hour_usd": maybe("cost_h", 3600),
        "monthly_usd": maybe("monthly"),
        "cost_per_mtok_usd": maybe("cost_mtok", 1e6),
        "n_gpu_mean": int(number("N_GPU_mean")) if "N_GPU_mean" in env and fits else None,
        "monthly_mean_usd": maybe("monthly_mean"),
        "cost_per_mtok_mean_usd": maybe("cost_mtok_mean", 1e6),
        "autoscaling_saving_usd": maybe("saving"),
        "spec_decode": None,
        "pd": None,
        "feasible": feasible,
        "fits": fits,
        "reason": reason,
        "notes": notes,
        "steps": steps,
    }
    if spec_decode:
        result["spec_decode"] = {
            "accept": spec_accept, "tokens": spec_tokens, "draft_cost": spec_draft_cost,
            "tokens_per_step": number("E_tok"), "tpot_without_ms": number("t_step") * 1000,
            "tpot_ms": tpot_ms,
        }  # fmt: skip
        notes.append(
            f"Speculative decoding (what-if): {spec_tokens} drafted tokens accepted with "
            f"probability {format_number(spec_accept)} each give "
            f"{format_number(number('E_tok'))} tokens per target step; a draft step costs "
            f"{format_number(spec_draft_cost)} of a target step, and verifying "
            f"{spec_tokens + 1} tokens costs {spec_tokens + 1}× the compute. TPOT "
            f"{format_number(number('t_step') * 1000)} → {format_number(tpot_ms)} ms: it pays "
            "while a step is memory-bound and costs once it is compute-bound."
        )
    if pd_disagg and fits:
        result["pd"] = {
            "prefill_instances": int(number("N_pre")), "decode_instances": int(number("N_dec")),
            "r_decode_req_s": number("r_dec"), "kv_transfer_bytes": number("kv_stream"),
            "prefill_s": number("t_pre"),
            # What sizes each pool, for the page: a prefill instance does one prefill after
            # another, and a decode instance takes the lower of its speed and memory bounds.
            "r_prefill_req_s": 1 / number("t_pre"),
            "decode_hold_s": number("t_dec"),
            "decode_binding": "memory"
            if number("N_seq") / number("t_dec") < number("r_speed")
            else "speed",
        }  # fmt: skip
        if hold_s is None:
            held = "a decode instance holds a stream only while it decodes"
        else:
            # The measured hold sizes the decode pool; it was measured with prefill and decode
            # sharing the GPU, so it may count time the split moves to the prefill pool.
            held = (
                f"a decode instance holds each stream for the measured hold time, "
                f"{format_number(hold_s)} s (measured with prefill on the same GPU, so the "
                "decode pool may be sized for more than its decode alone)"
            )
        notes.append(
            f"PD disaggregation (what-if): {int(number('N_pre'))} prefill and "
            f"{int(number('N_dec'))} decode instances of TP = {tp}, the same GPU. Assumes a "
            f"prefill instance only prefills (TTFT without decode interference) and {held}; "
            f"each request moves its {format_number(number('kv_stream') / GiB)} GiB of KV "
            "between them, not counted in TTFT here."
        )
    if "tpot_p99" in env and fits:
        head = f"At the peak each instance takes {format_number(number('lambda_r'))} req/s. "
        prefills = f"Prefills fill {format_number(number('u_pre') * 100)}% of its time"
        if batch == 1:
            # One slot: the next request waits for it, so none prefills beside the stream.
            text = (
                f"{head}{prefills}, but with one slot no other request prefills while its "
                f"stream decodes (the next waits for the slot), so its TPOT is the step's, "
                f"{format_number(number('tpot_p99') * 1000)} ms, at p99 too."
            )
        else:
            if number("u_stall") < number("u_pre"):
                # Too few slots for the peak's prefills: a decoding stream meets only those of
                # the requests holding the other slots.
                shares = (
                    f"{prefills}, but only the requests holding the other "
                    f"{f'{batch - 1} slots' if batch > 2 else 'slot'} prefill while a stream "
                    "decodes, "
                    f"{format_number(number('u_stall') * 100)}% of the time, and its streams' "
                    f"KV reads take {format_number(number('u_kv') * 100)}%"
                )
            else:
                shares = (
                    f"{prefills} and its streams' KV reads {format_number(number('u_kv') * 100)}%"
                )
            text = (
                f"{head}{shares}; a decoding stream waits through both, so its TPOT averages "
                f"{format_number(number('tpot_load') * 1000)} ms and reaches about "
                f"{format_number(number('tpot_p99') * 1000)} ms at p99 (a step at the full "
                f"batch of {batch} takes {format_number(tpot_ms)} ms)."
            )
        if binding == "stall":
            text += (
                f" Prefill stalls set the fleet: at r_inst's {result['n_inst_rate']} instances "
                f"each would prefill {format_number(at_rate_fleet['prefill_share'] * 100)}% of "
                f"the time and the p99 TPOT would be about "
                f"{format_number(at_rate_fleet['tpot_p99_ms'])} ms, over the "
                f"{format_number(tpot_slo_ms or 0)} ms SLO, so each "
                f"instance carries at most {format_number(number('r_stall'))} req/s and the "
                f"fleet is {result['n_inst']}. Chunked prefill spreads the same prefill compute "
                "over the steps rather than removing it; disaggregating prefill removes it."
            )
        notes.append(text)
    if ttft_queue and ttft_queue["over_slo"]:
        waits = [f"the {format_number(tpot_ms)} ms decode step it arrives during"]
        if ttft_queue["slot_wait_p99_ms"] > 0:
            waits.append(
                f"a slot ({format_number(ttft_queue['slot_wait_chance'] * 100)}% of arrivals "
                f"find all {batch} held; p99 wait "
                f"{format_number(ttft_queue['slot_wait_p99_ms'])} ms)"
            )
        if ttft_queue["prefill_wait_p99_ms"] > 0:
            others = (
                "prefills fill"
                if ttft_queue["wait_share"] >= ttft_queue["prefill_share"]
                else "the prefills of requests holding the other slots fill"
            )
            waits.append(
                f"the prompts ahead of it ({others} "
                f"{format_number(ttft_queue['wait_share'] * 100)}% of the GPU; p99 wait "
                f"{format_number(ttft_queue['prefill_wait_p99_ms'])} ms)"
            )
        text = (
            f"At the peak, queueing adds {format_number(ttft_queue['ttft_p99_ms'] - ttft_p99_ms)}"
            f" ms to the p99 TTFT, for {format_number(ttft_queue['ttft_p99_ms'])} ms against the "
            f"{format_number(ttft_slo_ms or 0)} ms SLO: a request waits for "
            + (", ".join(waits[:-1]) + " and " + waits[-1] if len(waits) > 1 else waits[0])
            + " before its own prefill."
        )
        if ttft_p99_ms <= (ttft_slo_ms or 0):
            text += (
                " The fleet is sized without these waits: more instances, each taking fewer "
                "requests, shorten them."
            )
        if ttft_queue["prompt_cv"] > 0:
            text += (
                f" The waits count prompts {format_number(prompt_spread * 100)}% either side "
                "of the mean; the request's own prefill here is a mean prompt's, and a longer "
                "one's takes longer."
            )
        notes.append(text)
    elif queue_full and fits:
        shares = {"u_pre": "prefills fill", "u_slot": "streams hold all the batch slots of"}
        notes.append(
            f"At the peak the {shares[queue_full]} each instance "
            f"({format_number(number(queue_full) * 100)}%): its queue grows without end, so no "
            "p99 TTFT with queueing is estimated. Plan more instances."
        )
    if price is not None and fits and mean_qps is None and not pd_disagg:
        notes.append("Give the mean QPS to see the monthly cost autoscaled to it.")
    if price is not None and fits and mean_qps is not None and pd_disagg:
        notes.append(
            f"The mean of {format_number(mean_qps)} QPS is not costed for the disaggregated "
            "what-if (its two pools would scale apart); without disaggregation the plan shows "
            "the month autoscaled to it."
        )
    return result


def fleet_curve(
    *,
    r_inst_req_s: float,
    rho: float,
    tp: int,
    qps_values: list[float],
    load_req_s: float | None = None,
    prefill_s: float | None = None,
    r_decode_req_s: float | None = None,
) -> list[tuple[float, int]]:
    """(peak QPS, GPUs) points: the fleet size as peak traffic grows, for the planner chart,
    by the plan's own fleet formulas: ⌈λ / (ρ r_inst)⌉ instances of tp GPUs; ⌈λ / r_load⌉
    when the plan set each instance's load (load_req_s, req/s: ρ r_inst, or less where prefill
    stalls cap it); a prefill pool ⌈λ t_pre / ρ⌉ plus a decode pool ⌈λ / (ρ r_dec)⌉ for a
    disaggregated plan (prefill_s, s per request, and r_decode_req_s, req/s)."""
    env = {"rho": _q(rho), "r_inst": _q(r_inst_req_s, "req/s"), "TP": _q(tp)}
    pd = prefill_s is not None and r_decode_req_s is not None
    if pd:
        env |= {"t_pre": _q(prefill_s or 0, "s"), "r_dec": _q(r_decode_req_s or 0, "req/s")}
        rules = ["N_dec", "N_pre", "N_inst_pd"]
    elif load_req_s is not None:
        env["r_load"] = _q(load_req_s, "req/s")
        rules = ["N_inst_load"]
    else:
        rules = ["N_inst"]
    points = []
    for qps in qps_values:
        trial = dict(env, lambda_peak=_q(qps, "req/s"))
        for rule in rules:
            formula = FORMULAS.get(rule) or _VARIANTS[rule]
            trial[formula.name] = Evaluator(trial).eval(_parsed_expr(formula.expr))
        gpus = _run("N_GPU", trial)
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
        stream = _run("kv_stream", {"kappa": kappa, "n_flight": _q(ctx, "tok")})
        seqs = _run("N_seq", {"pool": pool, "kv_stream": stream})
        rate = _run("r_memory", {"N_seq": seqs, "t_hold": hold})
        points.append((ctx, float(rate.magnitude)))
    return points


def kv_curve(*, kv_bytes_per_token: float, contexts: list[int]) -> list[tuple[int, float]]:
    """(context tokens, KV bytes per stream) points, for the planner chart."""
    kappa = _q(kv_bytes_per_token, "B/tok")
    return [
        (ctx, float(_run("kv_stream", {"kappa": kappa, "n_flight": _q(ctx, "tok")}).magnitude))
        for ctx in contexts
    ]
