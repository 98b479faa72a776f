"""Prefill stalls: a decoding stream waits out every other request's prefill on its GPU, so the
planner sizes the fleet on the p99 TPOT each instance sees at the peak, not on one decode step.
Whether those figures match a simulated fleet is checked question by question in
tests/simulator/test_bank_at_peak.py."""

import pytest

from planner.engine import plan

# Qwen2.5-7B on an H100 with 4,000-token prompts (1,500 of them a shared, cached prefix) and a
# 12 ms TPOT SLO: a step at the full batch meets the SLO, but prefill fills much of each GPU.
EXTRACTION = dict(
    model="qwen2.5-7b-instruct", gpu="h100-sxm", qps=24, mean_qps=10, prompt_len=4000,
    out_len=200, prefix_hit=0.95, prefix_len=1500, tpot_slo_ms=12,
)  # fmt: skip


def test_the_fleet_grows_until_the_p99_tpot_at_the_peak_meets_the_slo() -> None:
    result = plan(**EXTRACTION)
    assert result["tpot_ms"] <= 12  # the step alone would pass
    assert result["binding"] == "stall"
    assert result["n_inst"] > result["n_inst_rate"]
    assert result["at_peak"]["tpot_p99_ms"] <= 12
    # The smallest such fleet: one instance fewer would carry more than the stall limit.
    stall = result["r_stall_req_s"]
    assert 24 / result["n_inst"] <= stall < 24 / (result["n_inst"] - 1)
    assert result["r_load_req_s"] == pytest.approx(stall)
    assert result["n_gpu"] == result["n_inst"]
    # At the fleet r_inst alone asks for, the p99 TPOT breaks the SLO: the note says by how much.
    before = result["at_rate_fleet"]
    assert before["req_s"] == pytest.approx(24 / result["n_inst_rate"])
    assert before["tpot_p99_ms"] > 12 >= result["at_peak"]["tpot_p99_ms"]
    notes = " ".join(result["notes"])
    assert f"at r_inst's {result['n_inst_rate']} instances each would prefill 44.13%" in notes
    assert "the p99 TPOT would be about 17.34 ms, over the 12 ms SLO" in notes


def test_the_mean_tpot_at_the_peak_is_the_fixed_step_over_the_time_left() -> None:
    result = plan(**EXTRACTION)
    steps = {s["name"]: s["value"] for s in result["steps"]}
    peak = result["at_peak"]
    assert peak["req_s"] == pytest.approx(24 / result["n_inst"])
    assert peak["prefill_share"] == pytest.approx(peak["req_s"] * steps["t_pre"])
    left = 1 - peak["prefill_share"] - peak["kv_share"]
    assert peak["tpot_ms"] == pytest.approx(steps["t_0"] / left)
    # A request meets more or fewer of the prefills than the mean: its p99 sits above.
    assert peak["tpot_ms"] < peak["tpot_p99_ms"]


def test_more_prefill_per_request_means_a_larger_fleet() -> None:
    cached = plan(**EXTRACTION)
    cold = plan(**{**EXTRACTION, "prefix_hit": 0.0, "prefix_len": None})
    assert cold["at_peak"]["prefill_share"] > cached["at_peak"]["prefill_share"]
    assert cold["n_inst"] > cached["n_inst"]


def test_without_a_tpot_slo_the_rate_sets_the_fleet_and_the_peak_is_still_shown() -> None:
    result = plan(**{**EXTRACTION, "tpot_slo_ms": None})
    assert result["n_inst"] == result["n_inst_rate"]
    assert result["r_stall_req_s"] is None
    assert result["binding"] != "stall"
    assert result["at_peak"]["tpot_p99_ms"] > result["at_peak"]["tpot_ms"] > 0


def test_the_autoscaled_fleet_carries_the_same_load_per_instance_as_the_peak() -> None:
    result = plan(**EXTRACTION, usd_per_gpu_hour=2.0)
    # 10 QPS at no more than r_stall per instance, not at rho x r_inst.
    assert result["n_gpu_mean"] == -(-10 // result["r_load_req_s"])
    assert result["n_gpu_mean"] > -(-10 // (0.7 * result["r_inst_req_s"]))


@pytest.mark.parametrize(
    "change",
    [{"knee_tok_s": 4000}, {"pd_disagg": True}],
    ids=["measured knee: it already counts the stalls", "PD: the decode pool does not prefill"],
)
def test_a_plan_whose_decode_does_not_wait_for_prefill_here_counts_no_stalls(
    change: dict,
) -> None:
    result = plan(**EXTRACTION, **change)
    assert result["at_peak"] is None and result["r_stall_req_s"] is None
    assert result["binding"] != "stall"
    assert "Prefill stalls set the fleet" not in " ".join(result["notes"])


def test_a_slo_below_the_weights_step_is_refused_without_a_stall_search() -> None:
    result = plan(**{**EXTRACTION, "tpot_slo_ms": 2})
    assert result["feasible"] is False
    assert result["r_stall_req_s"] is None
    assert result["n_inst"] == result["n_inst_rate"]
