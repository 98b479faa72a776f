"""The speculative-decoding question's estimate step against the planner.

Every quantity of the step is compared with the planner's figure for the question's own givens
(Qwen2.5-32B-Instruct in BF16 on one H100 SXM, the draft folded into the non-KV reserve), within
the quantity's tolerance:

- the memory figures (kv_per_token, kv_stream, kv_pool, max_streams) from `plan()`;
- the TPOT floor from the planner's simple floor (every weight read once per step);
- the speculation figures (e_tok, tpot_spec, speedup, tpot_batch) from `plan(spec_decode=True)`
  with the question's acceptance, drafted tokens and draft cost; accept_share is derived from the
  planner's tokens per step, (E - 1) / k;
- t_cmp_tok from the planner's decode compute step (its per-token FLOPs also count attention
  over the stream's 4k tokens of KV, about 6% more than 2 x P);
- b_ridge from the planner's floor over k + 1 times its per-token compute (the planner has no
  crossover output of its own; a separate test checks that past it the planner's speculative
  step is slower than the plain one);
- t_prefill, r_inst and n_inst from the planner's TTFT, requests per instance and instances.

No quantity of the step is left out.
"""

import pytest

from planner.engine import plan
from tests.planner.agreement import GiB, QuestionFigures

FIGURES = QuestionFigures("spec-decoding-assistant")
given, question = FIGURES.given, FIGURES.question


K_SPEC = int(given("k_spec"))
BASE = dict(
    model="qwen2.5-32b-instruct", gpu="h100-sxm", weights="bf16", kv="bf16",
    context=int(given("ctx")), prompt_len=given("n_in"), out_len=given("o_bar"),
    mem_util=given("mem_util"), bw_eff=given("eta"), overhead_gib=given("reserve") / GiB,
    prefill_eff=given("mfu"), qps=given("qps_peak"), rho=given("rho"),
)  # fmt: skip
SPECULATE = dict(
    BASE, spec_decode=True, spec_accept=given("alpha"), spec_tokens=K_SPEC,
    spec_draft_cost=given("c_draft"),
)  # fmt: skip


def step_value(result: dict, name: str) -> float:
    """One formula's value from a plan's step-by-step derivation, in the unit shown."""
    return float(next(s["value"] for s in result["steps"] if s["name"] == name))


def per_token_compute_ms(result: dict) -> float:
    """The planner's decode compute time per token: its compute step over the planned batch."""
    return step_value(result, "t_cmp") / result["batch"]


def planner_figures() -> dict[str, float]:
    """The planner's figure for each quantity the question checks, in the question's unit."""
    plain, spec = plan(**BASE), plan(**SPECULATE)
    tokens_per_step = spec["spec_decode"]["tokens_per_step"]
    t_cmp_tok = per_token_compute_ms(plain)
    return {
        "kv_per_token": plain["kv_bytes_per_token"] / 1024,
        "kv_stream": plain["kv_bytes_per_stream"] / GiB,
        "kv_pool": plain["kv_pool_bytes"] / GiB,
        "max_streams": plain["max_seqs"],
        "tpot_floor": plain["tpot_floor_simple_ms"],
        "e_tok": tokens_per_step,
        "accept_share": (tokens_per_step - 1) / K_SPEC,
        "tpot_spec": spec["tpot_one_stream_ms"],
        "speedup": plain["tpot_one_stream_ms"] / spec["tpot_one_stream_ms"],
        "t_cmp_tok": t_cmp_tok,
        "b_ridge": plain["tpot_floor_simple_ms"] / ((K_SPEC + 1) * t_cmp_tok),
        "t_prefill": spec["ttft_ms"] / 1000,
        "tpot_batch": spec["tpot_ms"],
        "r_inst": spec["r_inst_req_s"],
        "n_inst": spec["n_inst"],
    }


(
    test_every_quantity_is_compared_or_listed_as_not_modelled,
    test_the_planner_agrees_with_the_question,
) = FIGURES.agreement_tests(planner_figures)


def test_without_speculation_the_floor_misses_the_tpot_slo_and_with_it_the_slo_holds() -> None:
    slo = FIGURES.brief.value_of("tpot_p99_ms")
    plain = plan(**BASE, tpot_slo_ms=slo)
    spec = plan(**SPECULATE, tpot_slo_ms=slo)
    assert plain["feasible"] is False and plain["tpot_one_stream_ms"] > slo
    assert spec["feasible"] is True and spec["tpot_ms"] < slo
    assert (question("tpot_floor"), question("tpot_spec")) == (
        pytest.approx(27.9, abs=0.1),
        pytest.approx(10.0, abs=0.1),
    )


def test_past_the_crossover_batch_speculation_makes_a_step_slower() -> None:
    # FP8 weights and KV with short streams let far more than the ridge's ~42 streams fit, so
    # the planned batch is past it: verifying k + 1 tokens per stream is compute-bound and the
    # speculative TPOT is worse than plain decoding. At the question's 5 streams it is better.
    busy = dict(weights="fp8", kv="fp8", prompt_len=512, out_len=256)
    plain, spec = plan(**{**BASE, **busy}), plan(**{**SPECULATE, **busy})
    assert plain["batch"] > 4 * question("b_ridge")
    assert spec["tpot_ms"] > plain["tpot_ms"]
    assert plan(**SPECULATE)["tpot_ms"] < plan(**BASE)["tpot_ms"] / 2


def test_about_one_request_in_eight_waits_for_a_kv_slot_on_the_throughput_fleet() -> None:
    # The reference's slot paragraph: 5 slots per replica, each held for the prefill plus 512
    # speculative steps (about 5.9 s); at 3 QPS over the planner's 7 replicas the Erlang-C
    # chance that every slot is taken is about one in eight, which is why the design runs 8.
    import math

    p = plan(**SPECULATE)
    slots, replicas = p["max_seqs"], p["n_inst"]
    assert (slots, replicas) == (5, 7)
    hold_s = p["ttft_ms"] / 1000 + given("o_bar") * p["tpot_ms"] / 1000
    assert hold_s == pytest.approx(5.9, abs=0.15)
    load = given("qps_peak") / replicas * hold_s
    assert load == pytest.approx(2.5, abs=0.1)
    top = load**slots / math.factorial(slots) * slots / (slots - load)
    wait = top / (sum(load**k / math.factorial(k) for k in range(slots)) + top)
    assert 0.1 < wait < 0.16
