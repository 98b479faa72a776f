"""The voice agent question's estimate step against the planner.

Compared (the planner models one instance of Llama-3.1-8B-Instruct with BF16 weights and BF16 KV
on an H100 SXM, a 3,050-token prompt, 40 output tokens and a 20 ms TPOT SLO): kv_per_token,
kv_stream (its KV per stream), kv_pool, tpot_floor, batch_max (its planned batch under the TPOT
SLO), t_out (its derived knee), the three prefill times (ttft_cold with no cache, ttft_sys with
prefix_hit = 1 and the system prompt as prefix_len, ttft_hit with the system prompt plus the
call's history as prefix_len), r_inst_hit, n_inst_hit (with the history cached) and n_inst_cold
(no cache, the fleet by throughput: n_inst_rate, before the planner counts prefill stalls).

Not modelled by the planner, and why:
- qps: live calls turned into turns per second by Little's law; the planner takes QPS as input.
- llm_slice, tpot_budget: the split of the voice-to-voice budget among pipeline stages; the
  planner takes the TPOT SLO as an input.
- speech_rate: speech in tokens per second, outside the serving model.
- chunk_stall: one step's compute with a 2,048-token prefill chunk; the planner does not model
  chunked prefill's per-step budget.
- hist_per_replica: KV of the calls waiting between turns; the planner models the KV of the
  streams in flight only.
"""

import pytest

from planner.engine import load_catalog, plan
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("voice-agent-latency-budget")
given, question = FIGURES.given, FIGURES.question
NOT_MODELLED = {"qps", "llm_slice", "tpot_budget", "speech_rate", "chunk_stall",
                "hist_per_replica"}  # fmt: skip

# The question's givens as planner inputs: BF16 weights and KV, its memory utilisation and
# reserve, the mid-call prompt and reply, the 20 ms TPOT budget and the peak turns per second.
BASE = dict(
    model="llama-3.1-8b-instruct", gpu="h100-sxm", weights="bf16", kv="bf16",
    context=FIGURES.brief.value_of("context_length"), mem_util=given("mem_util"),
    overhead_gib=given("reserve") / GiB, prompt_len=given("n_prompt"), out_len=40,
    prefill_eff=given("mfu"), bw_eff=given("eta"), rho=given("rho"),
    qps=given("calls") / given("t_turn"), tpot_slo_ms=question("tpot_budget"),
)  # fmt: skip
SYSTEM = given("n_sys")
CACHED = given("n_sys") + given("n_hist")


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity it models, in the question's unit."""
    cold = plan(**BASE)
    system = plan(**BASE, prefix_hit=1, prefix_len=SYSTEM)
    hit = plan(**BASE, prefix_hit=1, prefix_len=CACHED)
    return {
        "kv_per_token": cold["kv_bytes_per_token"] / 1024,
        "kv_stream": cold["kv_bytes_per_stream"] / 1024**2,
        "kv_pool": cold["kv_pool_bytes"] / GiB,
        "tpot_floor": cold["tpot_floor_ms"],
        "batch_max": cold["batch"],
        "t_out": cold["knee_tok_s"],
        "ttft_cold": cold["ttft_miss_ms"],
        "ttft_sys": system["ttft_ms"],
        "ttft_hit": hit["ttft_ms"],
        "r_inst_hit": hit["r_inst_req_s"],
        "n_inst_hit": hit["n_inst"],
        "n_inst_cold": cold["n_inst_rate"],
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures, NOT_MODELLED)


def test_the_givens_are_the_catalogues_model_and_gpu() -> None:
    catalog = load_catalog()
    m = catalog.model("llama-3.1-8b-instruct")
    g = catalog.gpu("h100-sxm")
    cold = plan(**BASE)
    assert given("p_lin") == pytest.approx(m.params_per_token - m.embedding_params, rel=1e-3)
    assert given("W") == pytest.approx(cold["weights_bytes"], rel=1e-3)
    assert given("flops") == pytest.approx(g.bf16_tflops * 1e12, rel=1e-3)
    assert given("bw") == pytest.approx(float(g.bandwidth.magnitude), rel=1e-3)
    assert given("vram") == pytest.approx(float(g.memory.magnitude))
    assert (int(given("layers")), int(given("kv_heads")), int(given("head_dim"))) == (
        m.layers, m.kv_heads, m.head_dim,
    )  # fmt: skip


def test_only_the_system_prompt_cached_needs_about_25_gpus() -> None:
    # Random routing finds the call's history about one turn in N, so most turns pay the
    # system-prompt-only prefill: the fleet sits between the cached 7 and the cold 58.
    system = plan(**BASE, prefix_hit=1, prefix_len=SYSTEM)
    assert system["n_inst_rate"] == 25
    assert question("n_inst_hit") < system["n_inst_rate"] < question("n_inst_cold")


def test_the_stalls_of_long_prefills_grow_the_fleets_the_reference_names() -> None:
    # "the planner puts the p99 TPOT at about 32 ms ... and holds it only with about 85
    # replicas (29 with only the system prompt cached) ... the 7 replicas keep the p99 TPOT
    # near 13 ms."
    cold = plan(**BASE)
    system = plan(**BASE, prefix_hit=1, prefix_len=SYSTEM)
    hit = plan(**BASE, prefix_hit=1, prefix_len=CACHED)
    assert cold["at_rate_fleet"]["prefill_share"] == pytest.approx(0.63, abs=0.01)
    assert cold["at_rate_fleet"]["tpot_p99_ms"] == pytest.approx(32, abs=1)
    assert (cold["n_inst"], system["n_inst"], hit["n_inst"]) == (85, 29, 7)
    assert hit["binding"] != "stall"
    assert hit["at_peak"]["prefill_share"] == pytest.approx(0.09, abs=0.01)
    assert hit["at_peak"]["tpot_p99_ms"] == pytest.approx(13, abs=0.5)


def test_the_15k_calls_follow_up_fleets() -> None:
    # fu-vc-15k-calls: 1,000 turns a second, "17 H100s with the history cached against 145 by
    # throughput if every turn were cold (about 211 once the cold prefills' stalls are counted)".
    cold = plan(**{**BASE, "qps": 1000})
    hit = plan(**{**BASE, "qps": 1000}, prefix_hit=1, prefix_len=CACHED)
    assert (hit["n_inst_rate"], hit["n_inst"]) == (17, 17)
    assert (cold["n_inst_rate"], cold["n_inst"]) == (145, 211)
