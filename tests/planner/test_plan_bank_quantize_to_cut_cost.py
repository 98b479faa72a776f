"""The quantization-cost question's estimate step against the planner.

Each option is planned with the question's own givens (Llama-3.1-70B on H100 SXM, the
question's memory utilisation, reserve and bandwidth efficiency, 1500 tokens in and 400 out,
the 20 QPS peak, rho 0.7, the catalogue's list price) and the knee the question says was
measured for it. Compared, within each quantity's tolerance: the weights in BF16, FP8 and AWQ
INT4; the FP8 TP=2 TPOT floor (every weight read once a step, the planner's simple floor); KV
per token; the pools at TP=4 and TP=2; the streams that fit (FP8 KV included); the GPUs of each
option; the monthly bills; the saving; and the cost per million output tokens at peak.

Every quantity of the step is modelled by the planner; none is left out.
"""

import pytest

from planner.engine import plan
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("quantize-to-cut-cost")
given, question = FIGURES.given, FIGURES.question


BASE = dict(
    model="llama-3.1-70b-instruct", gpu="h100-sxm",
    context=FIGURES.brief.value_of("context_length"),
    prompt_len=given("in_len"), out_len=given("out_n"), qps=given("qps_peak"), rho=given("rho"),
    mem_util=given("mem_util"), overhead_gib=given("reserve") / GiB, bw_eff=given("eta"),
    usd_per_gpu_hour=given("price") * 3600,
)  # fmt: skip
OPTIONS = {
    "bf16": dict(BASE, weights="bf16", kv="bf16", tp=int(given("tp_bf16")),
                 knee_tok_s=given("knee_bf16")),
    "fp8": dict(BASE, weights="fp8", kv="bf16", tp=int(given("tp_fp8")),
                knee_tok_s=given("knee_fp8")),
    "fp8_kv8": dict(BASE, weights="fp8", kv="fp8", tp=int(given("tp_fp8")),
                    knee_tok_s=given("knee_fp8_kv8")),
    "awq": dict(BASE, weights="awq-int4", kv="bf16", tp=int(given("tp_awq")),
                knee_tok_s=given("knee_awq")),
}  # fmt: skip


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity of the step, in the question's unit."""
    p = {name: plan(**inputs) for name, inputs in OPTIONS.items()}
    return {
        "w_bf16": p["bf16"]["weights_bytes"] / 1e9,
        "w_fp8": p["fp8"]["weights_bytes"] / 1e9,
        "w_awq": p["awq"]["weights_bytes"] / 1e9,
        "tpot_floor_fp8": p["fp8"]["tpot_floor_simple_ms"],
        "kv_per_token": p["bf16"]["kv_bytes_per_token"] / 1024,
        "kv_pool_bf16": p["bf16"]["kv_pool_bytes"] / 1e9,
        "kv_pool_fp8": p["fp8"]["kv_pool_bytes"] / 1e9,
        "streams_bf16": p["bf16"]["max_seqs"],
        "streams_fp8": p["fp8"]["max_seqs"],
        "streams_fp8_kv8": p["fp8_kv8"]["max_seqs"],
        "n_gpu_bf16": p["bf16"]["n_gpu"],
        "n_gpu_fp8": p["fp8"]["n_gpu"],
        "n_gpu_fp8_kv8": p["fp8_kv8"]["n_gpu"],
        "n_gpu_awq": p["awq"]["n_gpu"],
        "monthly_bf16": p["bf16"]["monthly_usd"],
        "monthly_fp8_kv8": p["fp8_kv8"]["monthly_usd"],
        "saving": 1 - p["fp8_kv8"]["monthly_usd"] / p["bf16"]["monthly_usd"],
        "cost_mtok_bf16": p["bf16"]["cost_per_mtok_usd"],
        "cost_mtok_fp8_kv8": p["fp8_kv8"]["cost_per_mtok_usd"],
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures)


def test_the_price_is_the_catalogues_list_price() -> None:
    assert plan(**{**OPTIONS["bf16"], "usd_per_gpu_hour": None})["usd_per_gpu_hour"] == (
        pytest.approx(given("price") * 3600)
    )


def test_fp8_weights_alone_reach_the_target_with_no_margin_and_fp8_kv_halves_the_bill() -> None:
    figures = planner_figures()
    assert figures["n_gpu_fp8"] / figures["n_gpu_bf16"] == pytest.approx(0.7)
    assert figures["saving"] == pytest.approx(0.5)
    # AWQ at TP = 1 saves almost nothing: its prefill per GPU is no faster than BF16's.
    assert figures["n_gpu_awq"] >= figures["n_gpu_bf16"] - 1


def test_awq_needs_more_gpus_than_today_once_its_prefill_stalls_are_counted() -> None:
    # The question's AWQ figures: 19 GPUs by throughput, about 22 once the stalls of its
    # 0.42 s single-GPU prefills hold the 40 ms p99 TPOT; the FP8 and BF16 options hold 40 ms
    # at their throughput fleets. The planner derives its own knee here, which is what models
    # the stalls.
    def stalls(name: str) -> dict:
        inputs = {k: v for k, v in OPTIONS[name].items() if k != "knee_tok_s"}
        return plan(**inputs, tpot_slo_ms=40, ttft_slo_ms=1000)

    awq = stalls("awq")
    assert awq["ttft_ms"] == pytest.approx(420, abs=10)
    assert awq["n_inst_rate"] == 19
    assert awq["binding"] == "stall"
    assert awq["n_gpu"] == 22
    assert awq["n_gpu"] > planner_figures()["n_gpu_bf16"]
    # From its own step times, all-reduces included, the planner gives BF16 and FP8 with BF16
    # KV the knee's fleet or one instance more, with no stall to count; FP8 with FP8 KV, the
    # largest batch, misses 40 ms on its knee's 5 instances (about 45 ms) and takes a sixth.
    for name, extra in (("bf16", 1), ("fp8", 0)):
        p = stalls(name)
        assert p["binding"] != "stall"
        assert p["n_inst"] == planner_figures()[f"n_gpu_{name}"] / p["tp"] + extra
        assert p["at_peak"]["tpot_p99_ms"] < 40
    kv8 = stalls("fp8_kv8")
    assert kv8["binding"] == "stall" and kv8["n_inst_rate"] == 5 and kv8["n_gpu"] == 12
    assert kv8["at_rate_fleet"]["tpot_p99_ms"] == pytest.approx(45, abs=1)
    assert kv8["at_peak"]["tpot_p99_ms"] < 40
