"""The knee question's estimate step against the planner.

Each figure the step checks that the planner models is computed by `plan(...)` from the
question's own givens (Llama-3.1-8B in BF16 on an A100 40GB, the question's memory
utilisation, reserve, bandwidth and prefill efficiency) and agrees within the quantity's
tolerance: the TPOT floor, KV per token, the KV pool, the streams that fit at the full context
and at the mean tokens in flight, the decode step at that batch, the derived knee, the prefill
of one prompt, the derived r_inst (prefill and decode sharing the GPU) and the fleet sized on
the measured last passing rate.

Not modelled by the planner, so not compared: `in_flight`, Little's law applied to the sweep's
measured rate and end-to-end latency (6 req/s x 7.2 s); the planner has no measured latency
input, only the rate.
"""

import pytest

from planner.engine import plan
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("knee-load-test-framework-choice")
given, question = FIGURES.given, FIGURES.question
NOT_MODELLED = {"in_flight"}


# The question's givens as planner inputs. The TPOT SLO lets every stream that fits run
# (its step, about 32.6 ms, is under 40 ms), which is the batch the question predicts from.
BASE = dict(
    model="llama-3.1-8b-instruct", gpu="a100-40gb", weights="bf16", kv="bf16",
    context=int(given("ctx")), mem_util=given("mem_util"), overhead_gib=given("reserve") / GiB,
    bw_eff=given("eta"), prefill_eff=given("mfu"), qps=given("qps_peak"), rho=given("rho"),
    out_len=given("out_len"), tpot_slo_ms=FIGURES.brief.value_of("tpot_p99_ms"),
)  # fmt: skip
MEAN = dict(BASE, prompt_len=given("in_len"))
# The fleet is sized on the sweep's last passing rate: a measured knee of that many
# requests' output tokens per second.
MEASURED = dict(MEAN, knee_tok_s=given("r_pass") * given("out_len"))


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity it models, in the question's unit."""
    full, mean, measured = plan(**BASE), plan(**MEAN), plan(**MEASURED)
    return {
        "tpot_floor": mean["tpot_floor_ms"],
        "kv_per_token": mean["kv_bytes_per_token"] / 1024,
        "kv_pool": mean["kv_pool_bytes"] / 1e9,
        "streams_full_ctx": full["max_seqs"],
        "max_streams": mean["max_seqs"],
        "t_step": mean["tpot_ms"],
        "knee_derived": mean["knee_tok_s"],
        "prefill_ms": mean["ttft_ms"],
        "r_inst": mean["r_inst_req_s"],
        "n_inst": measured["n_inst"],
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures, NOT_MODELLED)


def test_the_planned_batch_is_every_stream_that_fits() -> None:
    mean = plan(**MEAN)
    assert mean["batch"] == mean["max_seqs"] == 122
    assert mean["knee_source"] == "derived"


def test_the_prediction_lands_near_the_measured_last_passing_rate() -> None:
    # The napkin prediction (about 6.2 req/s) and the sweep (6 req/s) agree within 5%,
    # and both are far below the decode bound alone (about 14.6 req/s).
    mean = plan(**MEAN)
    assert mean["r_inst_req_s"] == pytest.approx(given("r_pass"), rel=0.05)
    assert mean["r_speed_req_s"] > 2 * given("r_pass")
    assert plan(**MEASURED)["r_inst_req_s"] == pytest.approx(given("r_pass"))
