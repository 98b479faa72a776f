"""The long-context question's estimate step against the planner: every figure the step checks
is computed by the engine from the same givens, and agrees within the question's tolerance
(the prefill times included: causal attention, and the suffix's attention over the cached
prefix, are in both)."""

import pytest

from planner.engine import load_catalog, plan
from planner.engine.capacity import prefill_flops
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("long-context-rag")
given, question = FIGURES.given, FIGURES.question


CTX = int(given("ctx"))
# The question's givens as planner inputs: Qwen2.5-7B AWQ on a 4090 at its memory utilisation
# and reserve, its prefill efficiency, its peak and rho.
BASE = dict(
    model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="awq-int4", context=CTX,
    mem_util=given("mem_util"), overhead_gib=given("reserve") / GiB,
    prefill_eff=given("mfu"), qps=given("qps_peak"), rho=given("rho"),
    out_len=FIGURES.brief.value_of("output_tokens"),
)  # fmt: skip
# A full prompt fills the 32k context but for one output token; a hit skips all but the
# unique suffix.
FULL = dict(BASE, out_len=1, prompt_len=CTX - 1)
SUFFIX = dict(FULL, prefix_hit=1, prefix_len=CTX - given("suffix_len"))
FLEET = dict(BASE, kv="fp8", hold_s=given("t_hold"), knee_tok_s=2000)


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity the question checks, in the question's unit."""
    bf16, fp8 = plan(**BASE, kv="bf16"), plan(**BASE, kv="fp8")
    fleet = plan(**FLEET)
    return {
        "kv_per_token": bf16["kv_bytes_per_token"] / 1024,
        "kv_stream": bf16["kv_bytes_per_stream"] / GiB,
        "kv_stream_fp8": fp8["kv_bytes_per_stream"] / GiB,
        "kv_stream_128k": plan(**{**BASE, "context": int(given("ctx_long"))})["kv_bytes_per_stream"]
        / GiB,
        "kv_pool": bf16["kv_pool_bytes"] / 1e9,
        "max_streams": fp8["max_seqs"],
        "prefill_full": plan(**FULL)["ttft_miss_ms"] / 1000,
        "prefill_suffix": plan(**SUFFIX)["ttft_ms"] / 1000,
        "r_inst": fleet["r_inst_req_s"],
        "n_inst": fleet["n_inst"],
    }


def test_every_quantity_of_the_estimate_step_is_compared() -> None:
    FIGURES.assert_covers(planner_figures())


@pytest.mark.parametrize("quantity_id", FIGURES.quantity_ids)
def test_the_planner_agrees_with_the_question(quantity_id: str) -> None:
    FIGURES.assert_agrees(planner_figures(), quantity_id)


def test_the_prefill_flops_are_the_planners_linear_and_causal_attention_terms() -> None:
    # The question's formula, written out: 2 x non-embedding parameters x tokens, plus
    # 2 x width x layers x (n^2 - cached^2) for the causal attention, as the planner counts.
    m = load_catalog().model("qwen2.5-7b")
    tokens, cached = CTX - 1, CTX - given("suffix_len")
    linear = 2 * (m.params - m.embedding_params) * tokens
    attention = 2 * m.attention_width * m.layers * tokens**2
    assert plan(**FULL)["prefill_flops_miss"] == pytest.approx(linear + attention)
    assert plan(**SUFFIX)["prefill_flops"] == pytest.approx(
        prefill_flops(
            linear_params=m.params - m.embedding_params,
            attention_width=m.attention_width,
            layers=m.layers,
            prompt_tokens=tokens,
            cached_tokens=cached,
        )  # fmt: skip
    )
    assert (question("prefill_full"), question("prefill_suffix")) == (
        pytest.approx(7.8, abs=0.05),
        pytest.approx(0.64, abs=0.01),
    )


def test_without_a_measured_knee_prefill_compute_binds_below_the_questions_r_inst() -> None:
    # The question's 4 req/s is the memory bound alone. Computing each request's 2k-token
    # suffix prefill on the same GPU leaves the instance about 1.2 req/s.
    derived = plan(**{**FLEET, "knee_tok_s": None}, prompt_len=CTX - 128,
                   prefix_hit=1, prefix_len=CTX - given("suffix_len"))  # fmt: skip
    assert derived["binding"] == "ttft"
    assert derived["r_inst_req_s"] < question("r_inst") / 2
    assert derived["n_inst"] > question("n_inst")


def test_prefill_compute_not_the_slots_binds_the_fleet() -> None:
    # "What the 4 leaves out": the slot count gives 4 GPUs, but a cached request's 0.6 s
    # suffix prefill caps one GPU near 1.7 req/s, and with decode beside it the planner (no
    # measured hold time or knee) needs about 12 GPUs even with every request hitting. With one
    # prompt in ten missing, the p99 TTFT is a cold prefill of about 6.9 s at 30k and the plan
    # is infeasible.
    prompt, prefix = FIGURES.brief.value_of("input_tokens"), CTX - given("suffix_len")
    hit = plan(**BASE, kv="fp8", prompt_len=prompt, prefix_hit=1, prefix_len=prompt - 2000,
               ttft_slo_ms=2000)  # fmt: skip
    assert question("n_inst") == 4
    assert hit["r_prefill_req_s"] == pytest.approx(1.7, abs=0.05)
    assert hit["n_inst"] == 12 and hit["feasible"]
    full = plan(**BASE, kv="fp8", prompt_len=CTX - 128, prefix_hit=1, prefix_len=prefix,
                ttft_slo_ms=2000)  # fmt: skip
    assert full["n_inst"] == 12
    miss = plan(**BASE, kv="fp8", prompt_len=prompt, prefix_hit=0.9, prefix_len=prompt - 2000,
                ttft_slo_ms=2000)  # fmt: skip
    assert miss["ttft_p99_ms"] == pytest.approx(6900, rel=0.02)
    assert miss["n_inst"] == 21 and not miss["feasible"]
