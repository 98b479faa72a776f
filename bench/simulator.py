"""Benchmark of the load simulator: `python -m bench.simulator` (also run by bench.run).

Prints one JSON line: {"bench": "simulator", "window_s", "qps", "replicas", "requests",
"cpu_s", "requests_per_cpu_s", "mmc_requests_per_cpu_s", "ratio_vs_mmc", "ttft_p99_ms",
"little_law_error"}. The run is the chat question's seed design (10 replicas, the measured
2000 tok/s knee) for a 10-minute simulated window at 50 QPS, timed in CPU seconds (best of
three). The baseline is a plain first-come first-served M/M/c simulation (one heap of server
free times) of the same arrivals and the same service times, with c = the fleet's batch
slots: what the fleet simulation costs over the simplest queue that sees the same traffic.
"""

from __future__ import annotations

import json
import math
import time

from planner.engine import plan
from simulator.engine import (
    Scenario,
    Workload,
    figures,
    mmc_waits,
    replica_from_plan,
    simulate,
)

WINDOW_S, QPS, REPLICAS, REPEATS = 600.0, 50.0, 10, 3


def main() -> None:
    seed_plan = plan(
        model="qwen2.5-7b",
        gpu="rtx-4090",
        weights="awq-int4",
        kv="bf16",
        context=8192,
        knee_tok_s=2000,
        out_len=256,
        qps=QPS,
        rho=0.7,
        overhead_gib=1.5,
        prompt_len=512,
        tpot_slo_ms=50,
        ttft_slo_ms=300,
    )
    replica = replica_from_plan(seed_plan, model="qwen2.5-7b", output_tokens=256).replica
    workload = Workload(qps=QPS, input_tokens=512, output_tokens=256)
    scenario = Scenario(replicas=REPLICAS, seconds=WINDOW_S, seed=1)
    best, result = math.inf, None
    for _ in range(REPEATS):
        started = time.process_time()
        result = simulate(replica, workload, scenario)
        best = min(best, time.process_time() - started)
    assert result is not None
    figs = figures(result)
    done = [i for i, d in enumerate(result.finish) if not math.isnan(d)]
    arrivals = [result.arrival[i] for i in done]
    services = [result.finish[i] - result.admitted_at[i] for i in done]
    plain = math.inf
    for _ in range(REPEATS):
        started = time.process_time()
        mmc_waits(arrivals, services, REPLICAS * replica.max_batch)
        plain = min(plain, time.process_time() - started)
    n = len(result.arrival)
    rate = n / best
    plain_rate = len(done) / max(plain, 1e-9)
    print(
        json.dumps(
            {
                "bench": "simulator",
                "window_s": WINDOW_S,
                "qps": QPS,
                "replicas": REPLICAS,
                "requests": n,
                "cpu_s": round(best, 3),
                "requests_per_cpu_s": round(rate),
                "mmc_requests_per_cpu_s": round(plain_rate),
                "ratio_vs_mmc": round(plain_rate / rate, 2),
                "ttft_p99_ms": figs["ttft_p99_ms"],
                "little_law_error": figs["little_law_error"],
            }
        )
    )


if __name__ == "__main__":
    main()
