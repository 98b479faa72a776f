"""The offline batch question's estimate step against the planner: Llama-3.1-8B with FP8 weights
on one L4, documents of 2000 tokens in and 200 out, the question's memory utilisation, reserve,
bandwidth and prefill efficiency. The batch is planned as a steady arrival rate, the night's
documents over the six-hour window (the brief's peak_qps), at the question's rho, and every
figure the planner models agrees with the question within the quantity's tolerance.

Compared: w_fp8, kv_per_token, kv_pool, max_streams, t_step (the planner's TPOT at the planned
batch: weights and every stream's KV read once), decode_tok_s (its derived knee), prefill_s
(ttft_miss_ms of one document), docs_per_gpu_s (r_inst: prefill and decode sharing the GPU),
n_gpu, cost_night (cost_per_hour_usd over the window) and cost_mtok_out (cost_per_mtok_usd).

Not modelled by the planner, and so not compared:
- tokens_night: a plain count of the night's input and output tokens; the planner works per
  request, not per batch.
- cost_mtok_all: the planner prices output tokens only (cost_per_mtok_usd); a cost per token
  processed, input included, is not one of its figures.
- spot_cost_night: the planner has no spot price or preemption rework; it prices on-demand
  GPU-hours only.
"""

import pytest

from planner.engine import plan
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("offline-batch-summaries")
given, question = FIGURES.given, FIGURES.question
NOT_MODELLED = {"tokens_night", "cost_mtok_all", "spot_cost_night"}


WINDOW_S = given("window")
NIGHT = dict(
    model="llama-3.1-8b-instruct", gpu="l4", weights="fp8", kv="bf16",
    context=int(given("ctx")), prompt_len=given("n_in"), out_len=given("n_out"),
    mem_util=given("mem_util"), bw_eff=given("eta"), overhead_gib=given("reserve") / GiB,
    prefill_eff=given("mfu"), qps=given("n_docs") / WINDOW_S, rho=given("rho"),
    usd_per_gpu_hour=given("price") * 3600,
)  # fmt: skip


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity it models, in the question's unit."""
    night = plan(**NIGHT)
    return {
        "w_fp8": night["weights_bytes"] / 1e9,
        "kv_per_token": night["kv_bytes_per_token"] / 1024,
        "kv_pool": night["kv_pool_bytes"] / 1e9,
        "max_streams": night["max_seqs"],
        "t_step": night["tpot_ms"],
        "decode_tok_s": night["knee_tok_s"],
        "prefill_s": night["ttft_miss_ms"] / 1000,
        "docs_per_gpu_s": night["r_inst_req_s"],
        "n_gpu": night["n_gpu"],
        "cost_night": night["cost_per_hour_usd"] * WINDOW_S / 3600,
        "cost_mtok_out": night["cost_per_mtok_usd"],
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures, NOT_MODELLED)


def test_the_brief_rate_is_the_night_over_the_window() -> None:
    assert FIGURES.brief.value_of("peak_qps") == pytest.approx(given("n_docs") / WINDOW_S, rel=0.01)
    assert FIGURES.brief.value_of("e2e_p99_ms") == pytest.approx(WINDOW_S * 1000)


def test_fp8_weights_are_what_make_the_l4_worth_batching_on() -> None:
    # BF16 weights leave room for 6 documents and cut throughput per GPU about fourfold.
    bf16 = plan(**{**NIGHT, "weights": "bf16"})
    fp8 = plan(**NIGHT)
    assert (bf16["max_seqs"], fp8["max_seqs"]) == (6, 30)
    assert fp8["r_inst_req_s"] / bf16["r_inst_req_s"] == pytest.approx(4.1, abs=0.1)


def test_the_follow_ups_figures_fp8_kv_and_the_h100() -> None:
    # fu-triple: FP8 KV doubles the documents in flight, about 2.0 documents per second.
    fp8_kv = plan(**{**NIGHT, "kv": "fp8"})
    assert fp8_kv["max_seqs"] == 61
    assert fp8_kv["r_inst_req_s"] == pytest.approx(2.0, abs=0.05)
    # fu-h100: about 17 documents per second on an H100 SXM, half the L4's cost per document.
    h100 = plan(**{**NIGHT, "gpu": "h100-sxm", "usd_per_gpu_hour": 4.76})
    l4 = plan(**NIGHT)
    assert h100["r_inst_req_s"] == pytest.approx(17.5, abs=0.5)
    per_doc = {r["gpu"]: r["usd_per_gpu_hour"] / r["r_inst_req_s"] for r in (h100, l4)}
    assert per_doc["H100 SXM"] / per_doc["L4"] == pytest.approx(0.46, abs=0.03)
