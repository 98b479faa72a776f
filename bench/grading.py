"""Grading backpressure: how 100 submissions drain through the in-flight cap.

    .venv/bin/python -m bench.grading [--submissions 100] [--cap 8] [--latency-ms 200]

A pool of threads (more than the cap, as a busy worker would have) grades 100 different
answers in LLM mode against a loopback OpenAI-compatible server that takes a fixed time per
request. Every request passes the endpoint's in-flight gate, so at most `cap` are ever at the
server. Prints one line:

    {"bench": "grading", "inflight_cap": 8, "max_inflight_seen": 8, "drain_ratio": 1.05, ...}

drain_ratio = measured drain time / (ceil(submissions / cap) x latency); target <= 1.3.
`max_inflight_seen` is the gate's own count and `server_max_concurrent` what the server saw;
neither may exceed the cap.

`prefix_cache_hit_rate(base_url, step, answers)` measures the share of prompt tokens vLLM's
prefix cache served while grading `answers` to one step, from its /metrics counters; the real
vLLM figure is produced by bench/grading_vllm.py.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grading import GraderConfig, grade, grader_inflight  # noqa: E402
from grading.fake_server import (  # noqa: E402
    FakeChatServer,
    ScriptedReply,
    answer_message,
    grade_content,
    response_ids,
)

TARGET_DRAIN_RATIO = 1.3
PREFIX_CACHE_COUNTERS = ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total")

# A small step in the content format; the bench measures the plumbing, not the rubric.
BENCH_STEP: dict[str, Any] = {
    "prompt": "Sketch the serving path and name the routing policy and the autoscaling signal.",
    "rubric": [
        {
            "id": "prefix-router",
            "says": "A router sends requests sharing a prefix to the replica holding its cache.",
            "weight": 2,
            "recognise": {"all": [["prefix aware", "sticky"], ["rout"]]},
        },
        {
            "id": "queue-autoscale",
            "says": "Autoscale on queue depth, not GPU utilisation.",
            "weight": 1,
            "recognise": {"all": [["autoscal"], ["queue", "waiting"]]},
        },
    ],
    "reference": "A prefix-aware router in front of vLLM replicas; autoscale on waiting requests.",
}
BENCH_CONTEXT = {"slug": "bench", "title": "Grading bench", "brief": {}, "step_key": "architecture"}


def bench_answers(n: int) -> list[str]:
    """N different answers, each with a quotable sentence."""
    return [
        f"Candidate {i}: a prefix-aware router keeps each shared prompt on one replica, and we "
        f"autoscale on the queue once {i % 7 + 2} requests are waiting per replica."
        for i in range(n)
    ]


def _honest_reply(request: dict[str, Any]) -> ScriptedReply:
    quote = answer_message(request)[:60]
    verdicts = [
        {"id": point_id, "evidence": quote, "verdict": "hit", "comment": "Covered."}
        for point_id in response_ids(request)
    ]
    return ScriptedReply(content=grade_content(verdicts))


def _serve(latency_s: float, conn: Any) -> None:
    """Run the fake model server in its own process until told to stop; report what it saw."""
    server = FakeChatServer(_honest_reply, latency_s=latency_s).start()
    conn.send(server.base_url)
    conn.recv()
    conn.send({"max_concurrent": server.max_concurrent, "requests": len(server.requests)})
    server.stop()


def measure_drain(
    submissions: int = 100, cap: int = 8, latency_s: float = 0.2, workers: int = 32
) -> dict[str, Any]:
    """Drain `submissions` gradings through a cap of `cap` against a server taking `latency_s`.

    The server runs in a process of its own, as a model server would, so its work does not
    compete with the grading threads for this interpreter's lock.
    """
    answers = bench_answers(submissions)
    ours, theirs = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(latency_s, theirs), daemon=True
    )
    process.start()
    try:
        base_url = ours.recv()
        config = GraderConfig(base_url=base_url, max_inflight=cap, max_retries=0, timeout_s=30)
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(
                pool.map(
                    lambda answer: grade(
                        BENCH_STEP, answer, mode="llm", context=BENCH_CONTEXT, config=config
                    ),
                    answers,
                )
            )
        drain_s = time.perf_counter() - started
        stats = grader_inflight(config)
        ours.send("stop")
        seen_by_server = ours.recv()
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.terminate()
    ideal_s = math.ceil(submissions / cap) * latency_s
    ratio = drain_s / ideal_s
    return {
        "bench": "grading",
        "inflight_cap": cap,
        "max_inflight_seen": stats.max_seen,
        "server_max_concurrent": seen_by_server["max_concurrent"],
        "drain_ratio": round(ratio, 3),
        "target_drain_ratio": TARGET_DRAIN_RATIO,
        "meets_target": ratio <= TARGET_DRAIN_RATIO and stats.max_seen <= cap,
        "drain_s": round(drain_s, 3),
        "ideal_s": round(ideal_s, 3),
        "submissions": submissions,
        "requests_served": seen_by_server["requests"],
        "request_latency_ms": round(latency_s * 1000),
        "threads": workers,
        "graded_by": dict(Counter(r.grader for r in results)),
        "prefix_cache_hit_rate": None,  # real-vLLM figure: bench/grading_vllm.py
    }


def read_prefix_cache_counters(root_url: str) -> tuple[float, float]:
    """(queried, hit) prompt tokens from a vLLM /metrics page, summed over label sets."""
    from practice.grader_status import parse_metrics  # the app's one Prometheus reader

    with urllib.request.urlopen(f"{root_url}/metrics", timeout=10) as response:
        totals = parse_metrics(response.read().decode("utf-8", "replace"))
    return totals.get(PREFIX_CACHE_COUNTERS[0], 0.0), totals.get(PREFIX_CACHE_COUNTERS[1], 0.0)


def prefix_cache_hit_rate(
    base_url: str,
    step: dict[str, Any],
    answers: list[str],
    *,
    config: GraderConfig | None = None,
    context: dict[str, Any] | str | None = None,
) -> float | None:
    """Share of prompt tokens served from vLLM's prefix cache while grading `answers`.

    `base_url` is the OpenAI API root (`http://host:port/v1`); /metrics is read at the host's
    root before and after grading every answer in LLM mode. None when nothing was queried.
    """
    config = config or GraderConfig(base_url=base_url)
    root_url = base_url.rstrip("/").removesuffix("/v1")
    queried_before, hits_before = read_prefix_cache_counters(root_url)
    for answer in answers:
        grade(step, answer, mode="llm", context=context, config=config)
    queried_after, hits_after = read_prefix_cache_counters(root_url)
    queried = queried_after - queried_before
    if queried <= 0:
        return None
    return round((hits_after - hits_before) / queried, 4)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--cap", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument(
        "--vllm",
        action="store_true",
        help="also start the real vLLM CPU server and measure its prefix-cache hit rate",
    )
    args = parser.parse_args(argv if argv is not None else [])
    result = measure_drain(args.submissions, args.cap, args.latency_ms / 1000, args.threads)
    if args.vllm:
        result["prefix_cache_hit_rate"] = measure_prefix_cache_on_vllm()
    print(json.dumps(result), flush=True)
    return 0 if result["meets_target"] else 1


def measure_prefix_cache_on_vllm(answers: int = 20) -> float | None:
    """Start the real vLLM CPU server (tools/vllm), grade 20 different answers to one step
    through the app, and return the share of prompt tokens its prefix cache served."""
    from bench.grading_vllm import load_step, make_answers
    from tools.vllm.server import SERVED_MODEL_NAME, VLLMServer

    step, context = load_step("chat-api-50qps", "architecture")
    server = VLLMServer()
    server.start()
    try:
        config = GraderConfig(base_url=server.base_url, model=SERVED_MODEL_NAME)
        return prefix_cache_hit_rate(
            server.base_url, step, make_answers(answers), config=config, context=context
        )
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
