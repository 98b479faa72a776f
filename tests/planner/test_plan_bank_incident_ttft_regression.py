"""The TTFT-incident question's estimate step against the planner.

The planner is run twice with the question's own givens (Qwen2.5-14B in BF16 on an A100 80GB,
its memory utilisation and reserve, its prefill efficiency): before the deploy (a 2000-token
prompt whose 1500-token system prompt hits the prefix cache, an 8192 cap) and after it (a
3000-token prompt with no cache, a 32768 cap). Compared, within each quantity's tolerance:
the prefill of the cached prompt, of the same prompt uncached and of the longer prompt; the
share of time each replica spends prefilling now and at the peak (the arrival rate over the
planner's prefill bound); KV per token; the pool; the streams that fit at the real lengths
before and after; and the worst-case streams at each cap.

Not modelled by the planner, so not compared:
- `chunks_after` and `chunk_ttft_floor`: the planner splits prefill at a fixed 8192-token
  chunk (its CHUNK_TOKENS), not at the deploy's 512-token --max-num-batched-tokens, and has no
  measured step time;
- `queue_wait` and `in_flight`: Little's law applied to measured queue lengths and latencies
  from the dashboards; the planner takes no measured queue or latency.
"""

from planner.engine import plan
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("incident-ttft-regression")
given, question = FIGURES.given, FIGURES.question
NOT_MODELLED = {"chunks_after", "chunk_ttft_floor", "queue_wait", "in_flight"}


BASE = dict(
    model="qwen2.5-14b-instruct", gpu="a100-80gb", weights="bf16", kv="bf16",
    mem_util=given("mem_util"), overhead_gib=given("reserve") / GiB, prefill_eff=given("mfu"),
    out_len=given("out_len"), qps=given("qps_peak"),
)  # fmt: skip
PROMPT_BEFORE = given("sys_before") + given("user_len")
PROMPT_AFTER = given("sys_after") + given("user_len")
BEFORE = dict(BASE, context=int(given("ctx_before")), prompt_len=PROMPT_BEFORE,
              prefix_hit=1, prefix_len=given("sys_before"))  # fmt: skip
AFTER = dict(BASE, context=int(given("ctx_after")), prompt_len=PROMPT_AFTER)
# Without prompt_len every stream fills the context: the worst case at each cap.
CAP_BEFORE = dict(BASE, context=int(given("ctx_before")))
CAP_AFTER = dict(BASE, context=int(given("ctx_after")))


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity it models, in the question's unit."""
    before, after = plan(**BEFORE), plan(**AFTER)
    per_replica_now = given("rate_replica")
    per_replica_peak = given("qps_peak") / given("replicas")
    return {
        "prefill_hit_before": before["ttft_ms"],
        "prefill_cold_before": before["ttft_miss_ms"],
        "prefill_cold_after": after["ttft_ms"],
        "prefill_busy_now": per_replica_now / after["r_prefill_req_s"],
        "prefill_busy_peak": per_replica_peak / after["r_prefill_req_s"],
        "kv_per_token": before["kv_bytes_per_token"] / 1024,
        "kv_pool": before["kv_pool_bytes"] / 1e9,
        "streams_before": before["max_seqs"],
        "streams_after": after["max_seqs"],
        "streams_cap_before": plan(**CAP_BEFORE)["max_seqs"],
        "streams_cap_after": plan(**CAP_AFTER)["max_seqs"],
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures, NOT_MODELLED)


def test_the_context_cap_leaves_the_paged_pool_unchanged() -> None:
    # Paged KV allocates blocks as tokens arrive: raising --max-model-len changes the worst
    # case, not the pool.
    assert plan(**BEFORE)["kv_pool_bytes"] == plan(**AFTER)["kv_pool_bytes"]
    assert plan(**CAP_BEFORE)["max_seqs"] > 4 * plan(**CAP_AFTER)["max_seqs"]


def test_the_new_config_cannot_carry_the_peak_on_prefill_alone() -> None:
    # More than one second of prefill per second per replica at 24 QPS over 9 replicas.
    after = plan(**AFTER)
    assert given("qps_peak") / given("replicas") > after["r_prefill_req_s"]
    assert given("qps_peak") / given("replicas") < plan(**BEFORE)["r_prefill_req_s"]


def test_scaling_out_instead_of_rolling_back_means_roughly_quadrupling_the_fleet() -> None:
    # The scale-out misconception's figures: at the 24 QPS peak the old config fits on the
    # 9 replicas, the new one needs about 27 A100s by throughput and about 34 once its
    # prefills' stalls hold the 50 ms p99 TPOT.
    slo = dict(tpot_slo_ms=50, ttft_slo_ms=1000)
    before, after = plan(**BEFORE, **slo), plan(**AFTER, **slo)
    assert before["n_gpu"] == given("replicas")
    assert after["n_inst_rate"] == 27
    assert after["binding"] == "stall"
    assert after["n_gpu"] == 34
    assert 3.5 < after["n_gpu"] / before["n_gpu"] < 4
