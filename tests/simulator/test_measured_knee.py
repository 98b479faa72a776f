"""A question's measured knee is the hardware's own figure: where the planner's step times fall
short of it even with every stream that fits, the simulated replica still runs at the knee
(its steps and prefills shortened by one factor), as the question's reference arithmetic does,
and the run's note says so. first-model-one-gpu measures 750 tok/s at 300 output tokens a
request, 2.5 req/s, where the step times give about 532 tok/s."""

from __future__ import annotations

import pytest

from planner.engine import plan
from simulator.services import RunSpec, fleet_run
from tests.simulator.bank import reference_design

SLUG = "first-model-one-gpu"


@pytest.fixture(scope="module")
def design():
    return reference_design(SLUG)


def test_the_replica_runs_at_the_measured_knee(design):
    knee = design.plan_kwargs["knee_tok_s"]
    run = fleet_run(design, RunSpec(seconds=120, replicas=1, label="peak load"))
    assert run["figures"]["replica_req_s"] == pytest.approx(knee / design.output_tokens, rel=0.02)
    assert "they are shortened to" in run["note"] and "runs at the knee" in run["note"]


def test_the_brief_s_peak_holds_on_the_one_gpu_the_reference_sizes(design):
    assert plan(**design.plan_kwargs)["n_inst"] == 1
    run = fleet_run(design, RunSpec(seconds=600, replicas=1, label="peak load"))
    assert run["figures"]["holds_slo"], run["verdict"]
