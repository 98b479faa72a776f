"""Plans where only a few KV slots fit an instance, and plans whose weights do not fit.

Only a request that holds a slot prefills, so a decoding stream meets only the prefills of the
requests holding the other slots: with one slot it never stalls, and the fleet is the one the
rate asks for. Where the weights do not fit, the reason names what the planner's form accepts
(every TP it takes) and, where the overhead per GPU is the cause, says so."""

import pytest

from planner.engine import plan

# The planner page's defaults (Qwen2.5-7B, AWQ-INT4, RTX 4090, 50 QPS, 50 ms TPOT SLO) at a
# 131,072-token context.
LONG = dict(
    model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="awq-int4", kv="bf16",
    context=131072, out_len=256, qps=50, rho=0.7, tpot_slo_ms=50,
)  # fmt: skip


def steps_of(result: dict) -> dict[str, float]:
    return {s["name"]: s["value"] for s in result["steps"]}


def test_one_slot_never_stalls_so_the_rate_sizes_the_fleet() -> None:
    # A blank prompt fills the context: one stream fits per instance.
    result = plan(**LONG, prompt_len=None)
    assert result["max_seqs"] == 1 and result["batch"] == 1
    assert result["binding"] != "stall"
    assert result["n_inst"] == result["n_inst_rate"] == 4758
    peak = result["at_peak"]
    # The next request waits for the slot: no prefill runs while the stream decodes.
    assert peak["stall_share"] == 0
    assert peak["tpot_ms"] == pytest.approx(result["tpot_ms"])
    assert peak["tpot_p99_ms"] == pytest.approx(result["tpot_ms"])
    notes = " ".join(result["notes"])
    assert "with one slot no other request prefills while its stream decodes" in notes
    assert "Prefill stalls set the fleet" not in notes
    # Chunked prefill does not stretch a decode step that is not running beside it.
    assert "with one slot no other stream decodes beside them" in notes
    assert "each decode step takes about" not in notes


def test_the_stall_share_is_the_formula_shown() -> None:
    # Two slots at a high utilisation target: the peak's arrivals outrun what the other slot
    # turns over, so the cap binds.
    result = plan(**LONG | {"prompt_len": 100000, "rho": 0.95, "tpot_slo_ms": None})
    steps = steps_of(result)
    assert steps["N_batch"] == 2
    other_rate = (steps["N_batch"] - 1) / steps["t_hold"]
    assert other_rate < steps["lambda_r"]
    assert steps["u_stall"] == pytest.approx(other_rate * steps["t_pre"], rel=1e-3)
    assert steps["u_stall"] < steps["u_pre"]
    left = 1 - steps["u_stall"] - steps["u_kv"]
    assert steps["tpot_load"] == pytest.approx(steps["t_0"] / left, rel=1e-3)
    # The prefills a stream meets in one token's time come from the same capped rate (the
    # steps show tpot_load in ms).
    assert steps["k_pre"] == pytest.approx(other_rate * steps["tpot_load"] / 1000, rel=1e-3)


def test_two_slots_cap_the_stalls_a_stream_meets() -> None:
    # No TPOT SLO: the rate sets the fleet, and at its load the two slots' turnover, not the
    # arrivals, bounds the prefills a decoding stream meets.
    result = plan(**LONG | {"prompt_len": 100000, "rho": 0.95, "tpot_slo_ms": None})
    assert result["batch"] == 2
    peak = result["at_peak"]
    assert peak["stall_share"] < peak["prefill_share"]
    notes = " ".join(result["notes"])
    assert "only the requests holding the other slot prefill while a stream decodes" in notes


def test_two_slots_still_count_the_other_slots_prefills() -> None:
    # The other slot's 100,000-token prefill stalls a decoding stream for tens of seconds:
    # the simulator's p99 TPOT at the rate's fleet is about 290 ms, so the stalls still size it.
    result = plan(**LONG, prompt_len=100000)
    assert result["batch"] == 2
    assert result["binding"] == "stall"
    assert result["n_inst"] > result["n_inst_rate"]
    assert result["at_peak"]["tpot_p99_ms"] <= 50


def test_weights_too_large_for_eight_gpus_name_the_tp_the_form_takes() -> None:
    inputs = dict(LONG, context=8192, prompt_len=512, model="qwen2.5-72b-instruct",
                  weights="bf16")  # fmt: skip
    reason = plan(**inputs)["reason"]
    assert "No single change" not in reason
    assert "What would hold them: TP 16" in reason
    assert "past 8 GPUs an instance spans nodes" in reason
    assert plan(**inputs | {"tp": 16})["fits"]


def test_an_overhead_larger_than_the_gpu_is_named_as_the_cause() -> None:
    result = plan(**LONG | {"context": 8192}, prompt_len=512, overhead_gib=1000)
    reason = result["reason"]
    assert not result["fits"]
    assert "-978" not in reason and "−978" not in reason
    assert "combine more GPUs" not in reason
    assert reason.startswith(
        "The weights alone do not fit: the 1000 GiB of non-KV memory per GPU (given) is more "
        "than vLLM may use of each GPU (23.65 GiB × 0.9 = 21.29 GiB)"
    )
    assert "more GPUs per instance do not make room" in reason
    # 16.09 GiB is where the weights fill the rest: the advice says no KV fits there.
    assert "a non-KV memory well under 16.09 GiB per GPU (at 16.09 GiB" in reason
    assert "no KV fits" in reason


def test_a_low_memory_utilisation_is_named_not_an_overhead_nobody_gave() -> None:
    # At 0.05 of a 4090 even the derived non-KV memory does not fit vLLM's share: the fix is
    # the utilisation, not a non-KV memory the candidate never typed.
    inputs = dict(model="qwen2.5-72b-instruct", gpu="rtx-4090", weights="bf16", kv="bf16")
    reason = plan(**inputs, mem_util=0.05)["reason"]
    assert "Give the non-KV memory" not in reason
    assert "Raise --gpu-memory-utilization above" in reason


def test_kv_advice_offers_every_tp_the_form_takes() -> None:
    # 72B with FP8 weights at TP 8 on L4s leaves 39.78 GiB for a 40 GiB stream: TP 16 holds it.
    result = plan(
        model="qwen2.5-72b-instruct", gpu="l4", weights="fp8", kv="bf16", context=131072, tp=8
    )
    assert not result["fits"]
    assert "TP 16 (a pool of" in result["reason"]
    assert "past 8 GPUs an instance spans nodes" in result["reason"]


def test_with_one_slot_a_request_waits_for_the_slot_not_behind_a_prefill() -> None:
    # The request ahead prefills while it holds the only slot, so the wait for the slot
    # already covers it: counting a wait behind prefills as well would count it twice.
    result = plan(**LONG | {"prompt_len": None, "ttft_slo_ms": 600000, "qps": 1})
    steps = steps_of(result)
    assert steps["N_batch"] == 1 and steps["u_pre"] > 0
    assert steps["u_stall"] == 0
    assert steps["W_pre"] == 0 and steps["W_pre99"] == 0
    parts = steps["t_tok"] + steps["W_slot99"] + steps["ttft_cold"]
    assert steps["ttft_queued"] == pytest.approx(parts, rel=1e-3)
    assert result["ttft_queue"]["prefill_wait_p99_ms"] == 0
