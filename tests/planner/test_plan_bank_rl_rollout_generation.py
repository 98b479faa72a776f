"""The RL rollout question's estimate step against the planner: Qwen2.5-7B-Instruct in BF16 on
one H100 SXM per vLLM engine (TP 1), rollouts of 500 prompt and 1,500 output tokens, the
question's memory utilisation, reserve, bandwidth and prefill efficiency. A step's 4,096
rollouts over the 60 s window are planned as a steady arrival rate (the brief's peak_qps), at
the question's rho, with 7 of every 8 rollouts hitting their group's 500-token prompt in the
prefix cache (one request per prompt with n = 8).

Compared: w_bf16 (weights_bytes), kv_per_token, kv_pool, max_streams (max_seqs with each
rollout holding its own prompt), max_streams_shared (max_seqs with each rollout holding an
eighth of its group's prompt, prompt_len = in_len / 8), t_step (the planner's TPOT at the
planned batch), decode_tok_s (its derived knee), t_prefill_group (ttft_miss_ms, one whole
prompt), r_gpu (r_inst with the shared prefill), n_gpu, tpot_floor (tpot_floor_ms, the weights
a step reads at batch 1, the input embedding table left out);
t_bulk, t_tail_floor, t_tail_full, t_gen_sync and util_sync are the question's formulas over
those planner figures (rollouts over the pool's rate; the longest completion at the floor and
at the planned step; the bulk plus the longest sample's remaining tokens at the floor).

Not modelled by the planner, and so not compared:
- n_rollouts, tokens_step and qps_gen: counts of a training step (prompts times group size,
  their output tokens, the step over its window); the planner starts from a rate.
- t_sync_ib and t_sync_nvl: the planner has no interconnect; weight transfer is not one of its
  figures.
- step_sync, step_async and cost_step: they add the measured trainer time and the weight sync,
  which the planner does not know, and price the trainer's GPUs beside the pool.
"""

import pytest

from planner.engine import plan
from questionbank import load_question_spec
from simulator.services import design_from_brief
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("rl-rollout-generation")
given, question = FIGURES.given, FIGURES.question
NOT_MODELLED = {
    "n_rollouts", "tokens_step", "qps_gen", "t_sync_ib", "t_sync_nvl",
    "step_sync", "step_async", "cost_step",
}  # fmt: skip

GROUP = given("n_samp")
ROLLOUTS = given("n_prompts") * GROUP
WINDOW_S = given("window")
OUT_MAX = given("out_max")
POOL = dict(
    model="qwen2.5-7b-instruct", gpu="h100-sxm", weights="bf16", kv="bf16",
    context=int(given("ctx")), prompt_len=given("n_in"), out_len=given("n_out"),
    mem_util=given("mem_util"), bw_eff=given("eta"), overhead_gib=given("reserve") / GiB,
    prefill_eff=given("mfu"), qps=ROLLOUTS / WINDOW_S, rho=given("rho"),
    usd_per_gpu_hour=given("price") * 3600,
)  # fmt: skip
# One request per prompt with n = 8: seven of the group's eight rollouts find its prompt cached.
SHARED = dict(POOL, prefix_hit=(GROUP - 1) / GROUP, prefix_len=given("n_in"))


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity it models, in the question's unit."""
    own, shared = plan(**POOL), plan(**SHARED)
    eighth = plan(**{**POOL, "prompt_len": given("n_in") / GROUP})
    step_s, floor_s = shared["tpot_ms"] / 1000, shared["tpot_floor_ms"] / 1000
    t_bulk = ROLLOUTS / (shared["n_gpu"] * shared["r_inst_req_s"])
    t_gen_sync = t_bulk + (OUT_MAX - t_bulk / step_s) * floor_s
    return {
        "w_bf16": own["weights_bytes"] / 1e9,
        "kv_per_token": own["kv_bytes_per_token"] / 1024,
        "kv_pool": own["kv_pool_bytes"] / GiB,
        "max_streams": own["max_seqs"],
        "max_streams_shared": eighth["max_seqs"],
        "t_step": own["tpot_ms"],
        "decode_tok_s": own["knee_tok_s"],
        "t_prefill_group": own["ttft_miss_ms"],
        "r_gpu": shared["r_inst_req_s"],
        "n_gpu": shared["n_gpu"],
        "t_bulk": t_bulk,
        "tpot_floor": shared["tpot_floor_ms"],
        "t_tail_floor": OUT_MAX * floor_s,
        "t_tail_full": OUT_MAX * step_s,
        "t_gen_sync": t_gen_sync,
        "util_sync": t_bulk / t_gen_sync,
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures, NOT_MODELLED)


def test_the_brief_rate_is_a_steps_rollouts_over_the_window() -> None:
    brief = FIGURES.brief
    assert brief.value_of("peak_qps") == pytest.approx(ROLLOUTS / WINDOW_S, rel=0.001)
    assert brief.value_of("e2e_p99_ms") == pytest.approx(WINDOW_S * 1000)
    assert brief.value_of("context_length") == given("ctx")
    assert brief.value_of("input_tokens") == pytest.approx(given("in_len"))
    assert brief.value_of("output_tokens") == pytest.approx(given("out_len"))


def test_the_reserve_is_the_planners_own_profile_of_this_model() -> None:
    derived = plan(**{**POOL, "overhead_gib": None})
    assert derived["overhead_bytes"] / GiB == pytest.approx(given("reserve") / GiB, abs=0.01)


def test_sharing_the_prompt_and_the_headroom_set_the_pool() -> None:
    # Without the shared prefill a GPU finishes about 9.6 rollouts a second, not 10.8.
    assert plan(**POOL)["r_inst_req_s"] == pytest.approx(9.57, abs=0.05)
    # Flat out (rho 1) the pool would be 7 GPUs; the headroom makes it one node of 8.
    assert plan(**{**SHARED, "rho": 1.0})["n_gpu"] == 7
    # Decode stays memory-bound at 507 rollouts: the matrix work is under half the step even at
    # half the BF16 peak.
    shared = plan(**SHARED)
    assert shared["binding"] == "memory" and shared["batch"] == 507


def test_the_reference_design_reaches_the_planner_page_and_the_simulator() -> None:
    # The page and the simulator read the brief; with the design's prefix sharing and rho
    # (the QUESTION_DESIGNS entry the reference settles on) they plan the same 8 engines.
    brief = load_question_spec("rl-rollout-generation").brief
    design = design_from_brief(brief, slug="rl-rollout-generation")
    assert 1 <= design.replicas <= 64
    entry = {"prefix_hit": (GROUP - 1) / GROUP, "prefix_len": given("n_in"), "rho": given("rho")}
    assert plan(**{**design.plan_kwargs, **entry})["n_inst"] == 8


def test_the_follow_ups_figures() -> None:
    # fu-32b: one H100 holds about 14 rollouts beside the 32B weights; a TP 2 pair holds 145,
    # steps in about 31.6 ms (1.7 ms of it all-reduce over NVLink), finishes about 3.0
    # rollouts a second, and the window needs 29 pairs, 58 H100s; its batch-1 step is about
    # 15 ms, so a 7,680-token sample takes at least about 115 s.
    big = {**SHARED, "model": "qwen2.5-32b-instruct", "overhead_gib": None}
    assert plan(**{**big, "tp": 1})["max_seqs"] == 14
    pair = plan(**{**big, "tp": 2})
    assert pair["max_seqs"] == 145
    assert pair["tpot_ms"] == pytest.approx(31.6, abs=0.1)
    assert pair["knee_tok_s"] == pytest.approx(4600, rel=0.01)
    assert pair["r_inst_req_s"] == pytest.approx(3.0, abs=0.05)
    assert (pair["n_inst"], pair["n_gpu"]) == (29, 58)
    assert 7680 * pair["tpot_one_stream_ms"] / 1000 == pytest.approx(115, abs=1)
    # fu-engine-dies: seven engines clear the bulk in about 54 s, inside the 55 s update.
    seven = ROLLOUTS / (7 * plan(**SHARED)["r_inst_req_s"])
    assert seven == pytest.approx(54.3, abs=0.3) and seven < given("t_train")
