"""The load simulator's engine, no Django imports: a discrete-event simulation of an
inference fleet (fleet.simulate), the figures and verdict of a run (figures), the replica
the planner's numbers make (design.replica_from_plan) and the queueing theory it is checked
against (queueing)."""

from .design import (
    Calibration,
    PlanPrefix,
    PooledDesign,
    plan_prefix,
    pooled_replica,
    pooled_replicas,
    replica_from_plan,
    saturated_rate,
)
from .figures import (
    NEVER,
    figures,
    goodput_text,
    percentile,
    qps_text,
    tpot_bins,
    ttft_bins,
    verdict,
)
from .fleet import (
    AUTOSCALERS,
    HPA_PERIOD_S,
    ROUTERS,
    ReplicaModel,
    Result,
    Scenario,
    SimulationError,
    Workload,
    simulate,
)
from .queueing import erlang_c, mmc_waits

__all__ = [
    "AUTOSCALERS",
    "HPA_PERIOD_S",
    "NEVER",
    "ROUTERS",
    "Calibration",
    "PlanPrefix",
    "PooledDesign",
    "ReplicaModel",
    "Result",
    "Scenario",
    "SimulationError",
    "Workload",
    "erlang_c",
    "figures",
    "goodput_text",
    "mmc_waits",
    "percentile",
    "qps_text",
    "plan_prefix",
    "pooled_replica",
    "pooled_replicas",
    "replica_from_plan",
    "saturated_rate",
    "simulate",
    "tpot_bins",
    "ttft_bins",
    "verdict",
]
