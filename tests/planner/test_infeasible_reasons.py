"""Why a plan is infeasible, and what would help: each remedy the reason names reaches the
target when planned, and none is a lever the plan already pulls (caching a prefix it caches,
quantising weights already at 4 bits, FP8 KV it already has, speculation it already runs)."""

from __future__ import annotations

import pytest

from planner.engine import plan
from planner.engine.capacity import QUEUE_CAVEAT
from tests.planner.test_ttft_queueing import brief_inputs

RAG = brief_inputs("long-context-rag")  # 90% of requests hit a 28k-token prefix of 30k
COLD = {"model": "qwen2.5-7b-instruct", "gpu": "h200", "context": 131072, "prompt_len": 128000,
        "out_len": 256, "qps": 1, "ttft_slo_ms": 2000}  # fmt: skip


# --- TTFT --------------------------------------------------------------------------------------


def test_a_plan_that_caches_already_is_not_told_to_cache_the_prefix() -> None:
    result = plan(**RAG)
    reason = result["reason"]
    assert result["feasible"] is False
    assert "cache the shared prefix" not in reason and "caching a prefix" not in reason
    assert reason.startswith(
        "The p99 TTFT is a prefix-cache miss: the cache already serves 90% of requests (a hit "
        "prefills in 597.9 ms), but the 10% that miss prefill the whole 30000-token prompt in "
        "6927 ms, over the 2000 ms SLO."
    )
    # A larger TP splits the compute but not the all-reduces: 30,000 tokens over the 4090's
    # PCIe through host memory take about 1.1 s at TP 4, so TP no longer reaches 2 s.
    assert "TP 4" not in reason and plan(**RAG | {"tp": 4})["ttft_p99_ms"] > 2000
    assert "a GPU with more compute (H100 SXM, H100 PCIe or H200 SXM)" in reason
    assert (
        "prompts of at most 10848 tokens (the shared prefix, 28000 tokens now, within them)"
        in reason
    )
    assert "a hit rate of 99% or more, which makes the p99 a hit's 597.9 ms" in reason
    assert reason.endswith("or a TTFT SLO of at least 6928 ms." + QUEUE_CAVEAT)


@pytest.mark.parametrize(
    "remedy",
    [{"gpu": "h100-sxm"}, {"prompt_len": 10848, "prefix_len": 10848}, {"prefix_hit": 0.99},
     {"ttft_slo_ms": 6928}],
    ids=["gpu", "prompt", "hit-rate", "slo"],
)  # fmt: skip
def test_each_remedy_named_for_the_rag_plan_meets_its_ttft_slo(remedy: dict) -> None:
    inputs = RAG | remedy
    assert plan(**inputs)["ttft_p99_ms"] <= inputs["ttft_slo_ms"]


def test_one_more_token_than_the_longest_prompt_named_misses() -> None:
    assert plan(**RAG | {"prompt_len": 10849, "prefix_len": 10849})["ttft_p99_ms"] > 2000


def test_a_plan_without_a_cache_may_be_told_to_cache_with_the_99_percent_caveat() -> None:
    reason = plan(**COLD)["reason"]
    assert "one prefill of the whole 128000-token prompt, 10024 ms" in reason
    assert (
        "caching a prefix the prompts share, if they share one (the p99 becomes a hit's only "
        "once 99% of requests hit)" in reason
    )
    # TP stops at one node's 8 GPUs: TP 4, the most Qwen2.5-7B shards over there, is not
    # enough, and TP 28 is not offered.
    assert "TP " not in reason
    assert plan(**COLD | {"prompt_len": 44860})["ttft_p99_ms"] <= 2000
    assert "prompts of at most 44860 tokens" in reason


def test_a_hits_own_suffix_is_what_a_99_percent_hit_plan_shortens() -> None:
    inputs = {"model": "qwen2.5-7b-instruct", "gpu": "h200", "context": 32768,
              "prompt_len": 32000, "prefix_hit": 0.995, "prefix_len": 20000,
              "ttft_slo_ms": 500}  # fmt: skip
    reason = plan(**inputs)["reason"]
    assert reason.startswith(
        "The p99 TTFT is a prefix-cache hit's: with 20000 of its 32000 tokens cached, the "
        "prefill of the rest takes 569.7 ms"
    )
    assert "caching" not in reason and "hit rate" not in reason
    assert "at most 10653 tokens after the cached prefix (now 12000)" in reason
    assert plan(**inputs | {"prompt_len": 30653})["ttft_p99_ms"] <= 500
    assert plan(**inputs | {"tp": 2})["ttft_p99_ms"] <= 500


def test_a_token_hit_rate_plan_is_told_the_rate_that_would_do() -> None:
    inputs = {"model": "qwen2.5-7b-instruct", "gpu": "h200", "context": 32768,
              "prompt_len": 32000, "prefix_hit": 0.5, "ttft_slo_ms": 500}  # fmt: skip
    reason = plan(**inputs)["reason"]
    assert "with 50% of each prompt's tokens cached" in reason
    assert "a token hit rate of 0.676 or more" in reason and "caching a prefix" not in reason
    assert plan(**inputs | {"prefix_hit": 0.676})["ttft_p99_ms"] <= 500
    assert plan(**inputs | {"prefix_hit": 0.67})["ttft_p99_ms"] > 500


# --- memory ------------------------------------------------------------------------------------


def test_weights_already_at_four_bits_are_not_told_to_quantise() -> None:
    inputs = {"model": "qwen2.5-72b-instruct", "gpu": "rtx-4090", "weights": "awq-int4"}
    reason = plan(**inputs)["reason"]
    assert reason.startswith("The weights alone do not fit: 41.46 GB per GPU")
    assert "weights (" not in reason and "quantise" not in reason
    assert "TP 4 (10.37 GB of weights per GPU)" in reason
    assert plan(**inputs | {"tp": 4})["fits"] is True
    assert plan(**inputs | {"tp": 2})["reason"].startswith("The weights alone")


def test_bf16_weights_are_told_the_least_squeezed_dtype_that_fits() -> None:
    reason = plan(model="qwen2.5-72b-instruct", gpu="h200", weights="bf16")["reason"]
    assert "TP 2 (72.71 GB of weights per GPU) or FP8 weights (75.2 GB per GPU)" in reason
    assert "AWQ" not in reason
    fp8 = plan(model="qwen2.5-72b-instruct", gpu="h200", weights="fp8")
    assert fp8["fits"] is True


def test_a_kv_cache_already_in_fp8_is_not_told_to_use_fp8_kv() -> None:
    inputs = {"model": "qwen2.5-7b-instruct", "gpu": "l4", "weights": "bf16", "kv": "fp8",
              "context": 131072}  # fmt: skip
    reason = plan(**inputs)["reason"]
    assert reason.startswith("Not even one sequence of 131072 tokens fits")
    assert "FP8 KV" not in reason
    assert "a blank prompt fills the context: give one, or shorten the context to 102959" in reason
    for remedy in ({"tp": 2}, {"weights": "fp8"}, {"context": 102959}):
        assert plan(**inputs | remedy)["fits"] is True, remedy
    assert plan(**inputs | {"context": 102960})["fits"] is False


def test_a_bf16_kv_cache_is_told_fp8_kv_where_it_makes_room() -> None:
    reason = plan(model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="bf16",
                  context=131072)["reason"]  # fmt: skip
    assert "FP8 KV (3.5 GiB a stream)" in reason
    assert plan(model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="bf16", kv="fp8",
                context=131072)["fits"] is True  # fmt: skip


# --- TPOT --------------------------------------------------------------------------------------


def test_a_tpot_slo_below_the_floor_names_what_reads_fewer_bytes_or_faster() -> None:
    inputs = {"model": "qwen2.5-7b-instruct", "gpu": "rtx-4090", "weights": "bf16",
              "tpot_slo_ms": 10}  # fmt: skip
    reason = plan(**inputs)["reason"]
    assert reason.startswith("The TPOT SLO of 10 ms is below the floor of 20.71 ms")
    # The larger TP's figure counts the all-reduces it adds, and is the plan's own at TP 4.
    assert "TP 4 (about 6.615 ms" in reason and "plus the all-reduces TP 4 adds" in reason
    assert plan(**inputs | {"tp": 4})["tpot_one_stream_ms"] == pytest.approx(6.615, abs=0.001)
    assert "AWQ-INT4 weights (about 7.015 ms)" in reason
    assert "speculative decoding (about 8.961 ms" in reason
    for remedy in ({"tp": 4}, {"weights": "awq-int4"}, {"gpu": "h100-sxm"},
                   {"spec_decode": True}, {"tpot_slo_ms": 20.8}):  # fmt: skip
        assert plan(**inputs | remedy)["feasible"] is True, remedy
    assert plan(**inputs | {"tp": 2})["feasible"] is False  # hence TP 4, not 2


def test_speculation_already_on_is_not_suggested_again() -> None:
    reason = plan(model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="bf16", tpot_slo_ms=5,
                  spec_decode=True)["reason"]  # fmt: skip
    assert "speculative" not in reason
    assert "FP8 weights (about 4.959 ms)" in reason
    assert plan(model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="fp8", tpot_slo_ms=5,
                spec_decode=True)["feasible"] is True  # fmt: skip


def test_a_knee_measured_past_the_tpot_slo_says_the_knee_that_meets_it() -> None:
    inputs = {"model": "qwen2.5-7b-instruct", "gpu": "rtx-4090", "weights": "awq-int4",
              "knee_tok_s": 6000, "tpot_slo_ms": 20, "prompt_len": 512}  # fmt: skip
    reason = plan(**inputs)["reason"]
    assert reason.startswith(
        "At the measured knee's batch of 321 streams a step takes 56.15 ms, over the 20 ms TPOT "
        "SLO: the knee was measured past it. At most 114 streams meet the SLO, about 5716 tok/s"
    )
    assert "vllm bench serve --goodput tpot:20" in reason
    assert plan(**inputs | {"knee_tok_s": 5700})["feasible"] is True
