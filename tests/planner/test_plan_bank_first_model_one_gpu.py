"""The intro question's estimate step against the planner: Llama-3.1-8B-Instruct in BF16 on one
RTX 4090, --max-model-len 8192, the question's memory utilisation, reserve and bandwidth
efficiency, the measured 750 tok/s knee, 300-token answers and a 1 QPS busy-hour peak at the
question's rho. Every quantity of the step is a planner figure and agrees with the question
within the quantity's tolerance.

Compared: w_bf16 and w_fp8 (weights_bytes in BF16 and FP8), kv_per_token, kv_per_stream (the
KV of one sequence at the full 8192-token cap), kv_pool, max_streams (max_seqs with every
stream at the cap, the worst case vLLM must admit), tpot_floor (tpot_floor_simple_ms: every
weight read once), r_inst (r_inst_req_s with the measured knee) and n_gpu.

Not modelled: nothing; every quantity of the step is compared.
"""

import pytest

from planner.engine import plan
from planner.engine.capacity import ACTIVATION_PEAK_GIB, NON_TORCH_GIB
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("first-model-one-gpu")
given, question = FIGURES.given, FIGURES.question
NOT_MODELLED: set[str] = set()

CHAT = dict(
    model="llama-3.1-8b-instruct", gpu="rtx-4090", weights="bf16", kv="bf16",
    context=int(given("ctx")), prompt_len=given("in_len"), out_len=given("out_len"),
    mem_util=given("mem_util"), bw_eff=given("eta"), overhead_gib=given("reserve") / GiB,
    qps=given("qps_peak"), mean_qps=given("qps_mean"), rho=given("rho"),
)  # fmt: skip
# The worst case the question sizes memory for: every stream filling --max-model-len.
FULL_CONTEXT = {**CHAT, "prompt_len": None}
MEASURED = {**CHAT, "knee_tok_s": given("T_out")}


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity of the step, in the question's unit."""
    worst = plan(**FULL_CONTEXT)
    fp8 = plan(**{**FULL_CONTEXT, "weights": "fp8"})
    measured = plan(**MEASURED)
    return {
        "w_bf16": worst["weights_bytes"] / 1e9,
        "w_fp8": fp8["weights_bytes"] / 1e9,
        "kv_per_token": worst["kv_bytes_per_token"] / 1024,
        "kv_per_stream": worst["kv_bytes_per_stream"] / GiB,
        "kv_pool": worst["kv_pool_bytes"] / GiB,
        "max_streams": worst["max_seqs"],
        "tpot_floor": worst["tpot_floor_simple_ms"],
        "r_inst": measured["r_inst_req_s"],
        "n_gpu": measured["n_gpu"],
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures, NOT_MODELLED)


def test_the_reserve_is_the_planners_own_profile_of_an_8b_model() -> None:
    # vLLM's profile of an 8B Llama (PR 10511): activation peak plus non-torch memory at TP 1.
    assert given("reserve") / GiB == pytest.approx(ACTIVATION_PEAK_GIB + NON_TORCH_GIB[1])
    derived = plan(**{**FULL_CONTEXT, "overhead_gib": None})
    assert derived["overhead_bytes"] == pytest.approx(given("reserve"), rel=1e-6)


def test_the_brief_matches_the_givens() -> None:
    brief = FIGURES.brief
    assert brief.value_of("context_length") == given("ctx")
    assert brief.value_of("peak_qps") == pytest.approx(given("qps_peak"))
    assert brief.value_of("mean_qps") == pytest.approx(given("qps_mean"))
    assert brief.value_of("input_tokens") == pytest.approx(given("in_len"))
    assert brief.value_of("output_tokens") == pytest.approx(given("out_len"))


def test_the_defaults_and_the_context_cap() -> None:
    # Left unset, --max-model-len is the model's 131072: 16 GiB for one sequence, nothing fits.
    default = plan(**{**FULL_CONTEXT, "context": int(given("ctx_default"))})
    assert default["kv_bytes_per_stream"] / GiB == pytest.approx(16)
    assert not default["fits"] and default["max_seqs"] == 0
    # Today's vLLM default of 0.92 instead of the explicit 0.90 still fits only 3 full chats.
    assert plan(**{**FULL_CONTEXT, "mem_util": 0.92})["max_seqs"] == 3
    # Trade-offs: a 4k cap fits 6 worst-case chats; a 32k cap fits none in BF16.
    assert plan(**{**FULL_CONTEXT, "context": 4096})["max_seqs"] == 6
    assert not plan(**{**FULL_CONTEXT, "context": 32768})["fits"]


def test_the_reference_figures_for_average_chats_speed_and_cost() -> None:
    chat = plan(**CHAT)
    # Paged KV: about 20 average 1300-token chats fit, against 3 at the full cap.
    assert chat["max_seqs"] == 20
    # The derived knee lands within a few per cent of the measured 750 tok/s, at about 26 ms.
    assert chat["knee_tok_s"] == pytest.approx(given("T_out"), rel=0.05)
    assert chat["tpot_ms"] == pytest.approx(26.1, abs=0.2)
    # Prefill of a 1000-token prompt is well inside the 1 s TTFT target.
    assert chat["ttft_miss_ms"] < 250
    # One card on demand around the clock: about 438 USD a month; a second doubles it.
    assert plan(**MEASURED)["monthly_usd"] == pytest.approx(438)


def test_the_follow_ups_figures() -> None:
    # fu-usage-triples: 3 QPS needs 2 BF16 GPUs with the measured knee.
    assert plan(**{**MEASURED, "qps": 3, "mean_qps": None})["n_gpu"] == 2
    # FP8 weights: 9 full 8k chats, about 61 average ones, a 12.9 ms floor, and a knee that
    # lets one card carry 3 QPS at rho 0.7 (to be re-measured, as the reference says).
    fp8_full = plan(**{**FULL_CONTEXT, "weights": "fp8"})
    assert fp8_full["max_seqs"] == 9
    assert fp8_full["tpot_floor_simple_ms"] == pytest.approx(12.9, abs=0.1)
    fp8_chat = plan(**{**CHAT, "weights": "fp8", "qps": 3, "mean_qps": None})
    assert fp8_chat["max_seqs"] == 61
    assert fp8_chat["n_gpu"] == 1
    # fu-long-docs: FP8 weights leave about 9.8 GiB, two 32k sequences, and a 24k prompt
    # takes about 3 s to prefill.
    docs = plan(**{**FULL_CONTEXT, "weights": "fp8", "context": 32768})
    assert docs["kv_pool_bytes"] / GiB == pytest.approx(9.78, abs=0.05)
    assert docs["max_seqs"] == 2
    paste = plan(**{**CHAT, "weights": "fp8", "context": 32768, "prompt_len": 24000})
    assert paste["ttft_miss_ms"] == pytest.approx(2900, rel=0.1)
