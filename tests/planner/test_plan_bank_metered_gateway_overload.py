"""The metered-gateway question's estimate step against the planner.

Compared (the planner models one TP = 2 instance of Qwen2.5-72B on H200s and the fleet at the
peak): kv_per_token, kv_pool, kv_stream (a 2,000-token prompt plus 500 out), max_streams,
kv_worst and streams_worst (a prompt that fills the 16k context), r_inst (the measured knee
over the output length), n_inst and n_gpu.

Not modelled by the planner, and why:
- tpm_fleet, oversub: tokens per minute sold to tenants are a gateway figure; the planner
  stops at requests per second.
- retry_after: a token bucket's refill time belongs to the gateway's metering.
- q_max: the queue bound per instance applies Little's law to a waiting-time budget the
  planner does not take.
- shed_share: the planner sizes a fleet for a load; what share of a larger burst that fleet
  must refuse is the question's step after it.
"""

import pytest

from planner.engine import plan
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("metered-gateway-overload")
given, question = FIGURES.given, FIGURES.question
NOT_MODELLED = {"tpm_fleet", "oversub", "retry_after", "q_max", "shed_share"}


# The question's givens as planner inputs: BF16 weights and KV at TP = 2, its memory
# utilisation and per-GPU reserve, the measured knee, the peak and rho. The hold time (15 s, a
# measured figure) keeps the memory bound (136 slots / 15 s = 9 req/s) above the 5 req/s speed
# bound the question uses.
BASE = dict(
    model="qwen2.5-72b-instruct", gpu="h200", weights="bf16", kv="bf16", tp=int(given("TP")),
    context=int(given("ctx")), mem_util=given("mem_util"), overhead_gib=given("reserve") / GiB,
    out_len=FIGURES.brief.value_of("output_tokens"), knee_tok_s=given("T_out"), hold_s=15,
    qps=given("qps_peak"), rho=given("rho"),
)  # fmt: skip
MEAN = dict(BASE, prompt_len=FIGURES.brief.value_of("input_tokens"))


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity it models, in the question's unit."""
    mean = plan(**MEAN)
    worst = plan(**BASE)  # no prompt_len: the prompt fills the context
    return {
        "kv_per_token": mean["kv_bytes_per_token"] / 1024,
        "kv_pool": mean["kv_pool_bytes"] / GiB,
        "kv_stream": mean["kv_bytes_per_stream"] / GiB,
        "max_streams": mean["max_seqs"],
        "kv_worst": worst["kv_bytes_per_stream"] / GiB,
        "streams_worst": worst["max_seqs"],
        "r_inst": mean["r_inst_req_s"],
        "n_inst": mean["n_inst"],
        "n_gpu": mean["n_gpu"],
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures, NOT_MODELLED)


def test_the_weights_given_is_the_planners_and_needs_two_gpus() -> None:
    mean = plan(**MEAN)
    assert given("W") == pytest.approx(mean["weights_bytes"], rel=1e-3)
    one_gpu = given("vram") * given("mem_util") - given("reserve")
    assert given("W") > one_gpu


def test_the_burst_exceeds_the_knee_by_a_quarter() -> None:
    # 9 instances at 5 req/s complete 45 req/s at the knee; a 60 QPS burst leaves 25% to shed.
    mean = plan(**MEAN)
    capacity = mean["n_inst"] * mean["r_inst_req_s"]
    assert 1 - capacity / given("qps_burst") == pytest.approx(question("shed_share"))
    assert question("shed_share") == pytest.approx(0.25)
