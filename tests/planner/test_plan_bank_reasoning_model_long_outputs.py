"""The reasoning-model question's estimate step against the planner.

Every quantity of the step is compared with the planner's figure for the question's own givens
(Qwen3-32B in BF16 on H100 SXM, 1,000 prompt and 4,000 output tokens, a 4 GiB non-KV reserve per
GPU), within the quantity's tolerance:

- one card (TP 1): kv_per_token, kv_stream, max_streams_1 and tpot_floor_1 from `plan(tp=1)`;
- the TP 2 pair: kv_pool, max_streams and tpot_floor from `plan(tp=2)`; t_step_full is the
  pair's step with every stream that fits (no TPOT SLO given), n_batch and t_step the planned
  batch and its step under the brief's 25 ms TPOT SLO (the planner leaves out the input
  embedding table a step never reads, so it allows 35 streams where the question's simple
  figure gives 34);
- t_visible is the thinking tokens times the planner's step; t_prefill the planner's TTFT;
  decode_share the decode bound's time per request over it plus the prefill's;
- r_inst, n_inst and n_gpu from the planner's requests per instance, instances and GPUs;
  cost_req from its fleet cost per hour over the peak arrival rate.

think_budget (the p99 deadline over the p99 pace, t_vis / tpot_slo) has no planner figure.
"""

from planner.engine import plan
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("reasoning-model-long-outputs")
given, question = FIGURES.given, FIGURES.question

BASE = dict(
    model="qwen3-32b", gpu="h100-sxm", weights="bf16", kv="bf16",
    context=int(given("ctx")), prompt_len=given("n_in"), out_len=given("o_bar"),
    mem_util=given("mem_util"), bw_eff=given("eta"), overhead_gib=given("reserve") / GiB,
    prefill_eff=given("mfu"), qps=given("qps_peak"), rho=given("rho"),
    usd_per_gpu_hour=given("price") * 3600,
)  # fmt: skip
PAIR = dict(BASE, tp=int(given("TP")))
SLO = dict(PAIR, tpot_slo_ms=given("tpot_slo") * 1000)


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity the question checks, in the question's unit."""
    one, full, capped = plan(**BASE, tp=1), plan(**PAIR), plan(**SLO)
    decode_s = 1 / capped["r_speed_req_s"]
    return {
        "kv_per_token": one["kv_bytes_per_token"] / 1024,
        "kv_stream": one["kv_bytes_per_stream"] / GiB,
        "max_streams_1": one["max_seqs"],
        "tpot_floor_1": one["tpot_floor_simple_ms"],
        "kv_pool": full["kv_pool_bytes"] / GiB,
        "max_streams": full["max_seqs"],
        "tpot_floor": full["tpot_floor_simple_ms"],
        "t_step_full": full["tpot_ms"],
        "n_batch": capped["batch"],
        "t_step": capped["tpot_ms"],
        "t_visible": given("n_think") * capped["tpot_ms"] / 1000,
        "t_prefill": capped["ttft_ms"],
        "decode_share": decode_s / (decode_s + capped["ttft_ms"] / 1000),
        "r_inst": capped["r_inst_req_s"],
        "n_inst": capped["n_inst"],
        "n_gpu": capped["n_gpu"],
        "cost_req": capped["cost_per_hour_usd"] / (given("qps_peak") * 3600),
    }


NOT_MODELLED = {"think_budget"}


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures, NOT_MODELLED)


def test_one_card_fails_both_gates_and_the_pair_meets_the_slo() -> None:
    slo = FIGURES.brief.value_of("tpot_p99_ms")
    one = plan(**BASE, tp=1, tpot_slo_ms=slo)
    pair = plan(**SLO)
    assert one["max_seqs"] == 5 and one["feasible"] is False
    assert pair["feasible"] is True and pair["tpot_ms"] <= slo < plan(**PAIR)["tpot_ms"]
    # The brief's output length, not its prompt, sets the VRAM gate.
    prompt_only = plan(**{**PAIR, "out_len": 1})
    assert prompt_only["max_seqs"] > 4 * pair["max_seqs"]


def test_the_thinking_budget_is_the_deadline_over_the_p99_pace() -> None:
    assert question("think_budget") == given("t_vis") / given("tpot_slo") == 4800
