"""The simulator draws prompts with the spread the capacity planner plans with: the planner's
prompt_spread reaches a run made from its inputs, and ±50% stays the draw for a question."""

from __future__ import annotations

import math

import pytest

from planner.forms import DEFAULTS
from simulator.engine import ReplicaModel, Scenario, SimulationError, Workload, simulate
from simulator.services import RunSpec, design_from_plan_inputs, fleet_run

# Prefill only, 1 ms a token and no decode to speak of: a request's own prefill is its
# prompt's length in ms.
REPLICA = ReplicaModel(
    max_batch=8, kv_tokens=10**7, step_base_s=0.0001, step_per_stream_s=0.0,
    prefill_s_per_token=0.001,
)  # fmt: skip


def own_prefills_ms(spread: float) -> list[float]:
    workload = Workload(qps=2, input_tokens=1000, output_tokens=2, input_spread=spread)
    run = simulate(REPLICA, workload, Scenario(replicas=2, seconds=60, seed=3))
    return [t * 1000 for t in run.own_prefill if not math.isnan(t)]


def test_prompts_spread_as_far_as_the_workload_says():
    assert {round(t) for t in own_prefills_ms(0)} == {1000}
    narrow, wide = own_prefills_ms(0.1), own_prefills_ms(0.9)
    assert 900 <= min(narrow) and max(narrow) <= 1100 and max(narrow) - min(narrow) > 100
    assert min(wide) < 300 and max(wide) > 1700


def test_a_spread_past_the_mean_is_refused():
    workload = Workload(qps=2, input_tokens=1000, output_tokens=2, input_spread=1.5)
    with pytest.raises(SimulationError, match="input_spread must be between 0 and 1"):
        simulate(REPLICA, workload, Scenario(replicas=2, seconds=10, seed=3))


def test_a_run_from_the_planners_inputs_draws_prompts_with_its_spread():
    def own_p99_ms(spread: float) -> float:
        design = design_from_plan_inputs(dict(DEFAULTS, prompt_spread=spread, qps=5))
        run = fleet_run(design, RunSpec(seconds=60, seed=2))
        return run["figures"]["own_prefill_p99_ms"]

    even, default, wide = own_p99_ms(0), own_p99_ms(0.5), own_p99_ms(1)
    assert even < default < wide
