"""Grading backpressure: how 100 submissions drain through the in-flight cap; and, with
--vllm, the prefix-cache hit rate on the real vLLM CPU server.

    .venv/bin/python -m bench.grading [--submissions 100] [--cap 8] [--latency-ms 200] [--vllm]

A pool of threads (more than the cap, as a busy worker would have) grades 100 different
answers in LLM mode against a loopback OpenAI-compatible server that takes a fixed time per
request. Every request passes the endpoint's in-flight gate, so at most `cap` are ever at the
server. Prints one line:

    {"bench": "grading", "inflight_cap": 8, "max_inflight_seen": 8, "drain_ratio": 1.05, ...}

drain_ratio = measured drain time / (ceil(submissions / cap) x latency); target <= 1.3.
`max_inflight_seen` is the gate's own count and `server_max_concurrent` what the server saw;
neither may exceed the cap.

`measure_prefix_cache(base_url, step, answers)` grades `answers` to one step and reads vLLM's
/metrics counters vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total before and
after: the hit rate is the share of prompt tokens its prefix cache served. The grader puts the
fixed system prompt, question context, rubric and reference before the answer, so every
grading after the first should reuse that prefix. With --vllm the line's
`prefix_cache_hit_rate` is that figure for 20 answers to a shipped step on the real server
(`measure_prefix_cache_on_vllm`); bench/grading_vllm.py prints it alone, with its details.
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
from grading.metrics import parse_metrics, prefix_cache_counters  # noqa: E402
from grading.types import GradedStep  # noqa: E402
from questionbank import StepSpec, load_question_spec  # noqa: E402

TARGET_DRAIN_RATIO = 1.3
# The shipped step graded on the real vLLM server.
VLLM_QUESTION, VLLM_STEP = "chat-api-50qps", "architecture"

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


# Pieces of answers for the real-vLLM figure, combined deterministically into N different
# answers of varied length.
OPENINGS = [
    "Clients reach an API gateway that authenticates them and applies rate limits.",
    "An L7 load balancer terminates TLS and forwards chat requests to a router.",
    "Requests enter through a gateway, then a router picks a replica.",
    "I would start with a single region and a stateless front tier.",
    "The front door is a gateway with per-tenant quotas.",
]
MIDDLES = [
    "A prefix-aware router sends requests with the same system prompt to the same vLLM replica.",
    "Each replica runs vLLM with prefix caching and chunked prefill enabled.",
    "Routing is round robin, which is simple but wastes the prefix cache.",
    "We keep the KV cache hot by sticky routing on a hash of the system prompt.",
    "Replicas are RTX 4090 cards serving the AWQ build to fit more KV cache.",
    "Continuous batching keeps the GPUs busy while holding TPOT under 50 ms.",
]
CLOSINGS = [
    "We autoscale on queue depth, adding a replica when waiting requests pass a threshold.",
    "Scaling follows GPU utilisation, with a floor of two replicas.",
    "Metrics: TTFT and TPOT percentiles, queue length and KV cache usage per replica.",
    "Failover drains a dead replica and retries its requests elsewhere.",
    "",
]


def make_answers(n: int) -> list[str]:
    """N different answers to the shipped architecture step, from the pieces above."""
    answers: list[str] = []
    i = 0
    while len(answers) < n:
        o = OPENINGS[i % len(OPENINGS)]
        m1 = MIDDLES[(i * 7) % len(MIDDLES)]
        m2 = MIDDLES[(i * 7 + 1 + i // len(OPENINGS)) % len(MIDDLES)]
        c = CLOSINGS[(i * 3) % len(CLOSINGS)]
        text = " ".join(s for s in (o, m1, m2 if i % 2 else "", c) if s)
        text = f"{text} (Candidate {i + 1}.)"
        if text not in answers:
            answers.append(text)
        i += 1
    return answers


def load_step(slug: str, step: str) -> tuple[StepSpec, dict]:
    """The step spec and the grader's question context, from content/questions/<slug>.md."""
    spec = load_question_spec(slug)
    context = {
        "slug": slug,
        "title": spec.title,
        "brief": spec.brief.as_dict(),
        "step_key": step,
    }
    return spec.step(step), context


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
        "prefix_cache_hit_rate": None,  # the real-vLLM figure, with --vllm
    }


def read_metrics(root_url: str) -> dict[str, float]:
    """A server's /metrics page (at its root URL), summed over label sets."""
    with urllib.request.urlopen(f"{root_url}/metrics", timeout=10) as response:
        return parse_metrics(response.read().decode("utf-8", "replace"))


def measure_prefix_cache(
    base_url: str,
    step: GradedStep,
    answers: list[str],
    *,
    config: GraderConfig | None = None,
    context: dict[str, Any] | str | None = None,
) -> dict[str, Any]:
    """Grade every answer in LLM mode and report how much of the prompts vLLM's prefix cache
    served, from its /metrics counters read before and after, with what graded them.

    `base_url` is the OpenAI API root (`http://host:port/v1`); /metrics is read at the host's
    root. `prefix_cache_hit_rate` is None when nothing was queried.
    """
    config = config or GraderConfig(base_url=base_url)
    root_url = base_url.rstrip("/").removesuffix("/v1")
    before = read_metrics(root_url)
    started = time.monotonic()
    graders: Counter[str] = Counter()
    fallbacks: Counter[str] = Counter()
    latencies = []
    prompt_tokens = 0
    for answer in answers:
        t = time.monotonic()
        result = grade(step, answer, mode="llm", context=context, config=config)
        latencies.append(time.monotonic() - t)
        graders[result.grader] += 1
        if result.fallback_reason:
            fallbacks[str(result.fallback_reason)[:80]] += 1
        prompt_tokens += result.usage.prompt_tokens
    elapsed = time.monotonic() - started
    after = read_metrics(root_url)

    queried_before, hits_before = prefix_cache_counters(before)
    queried_after, hits_after = prefix_cache_counters(after)
    queried, hits = queried_after - queried_before, hits_after - hits_before
    latencies.sort()
    return {
        "prefix_cache_hit_rate": round(hits / queried, 4) if queried > 0 else None,
        "prefix_cache_queried_tokens": int(queried),
        "prefix_cache_hit_tokens": int(hits),
        "prompt_tokens_reported": prompt_tokens,
        "graded_by": dict(graders),
        "fallback_reasons": dict(fallbacks),
        "requests_succeeded": int(
            after.get("vllm:request_success_total", 0) - before.get("vllm:request_success_total", 0)
        ),
        "grading_s": round(elapsed, 2),
        "latency_p50_ms": round(1000 * latencies[len(latencies) // 2]) if latencies else None,
        "latency_max_ms": round(1000 * latencies[-1]) if latencies else None,
    }


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
        result["prefix_cache_hit_rate"] = measure_prefix_cache_on_vllm()["prefix_cache_hit_rate"]
    print(json.dumps(result), flush=True)
    return 0 if result["meets_target"] else 1


def measure_prefix_cache_on_vllm(
    answers: int = 20,
    question: str = VLLM_QUESTION,
    step_key: str = VLLM_STEP,
    *,
    base_url: str | None = None,
) -> dict[str, Any]:
    """Grade `answers` different answers to one shipped step through the app on the real vLLM
    CPU server (tools/vllm), started here unless `base_url` names a running one, and measure
    its prefix cache (`measure_prefix_cache`, plus the server's start-up time when started)."""
    from tools.vllm.server import SERVED_MODEL_NAME, VLLMServer

    step, context = load_step(question, step_key)

    def measure(url: str) -> dict[str, Any]:
        config = GraderConfig(base_url=url, model=SERVED_MODEL_NAME)
        return measure_prefix_cache(
            url, step, make_answers(answers), config=config, context=context
        )

    if base_url:
        return measure(base_url)
    server = VLLMServer()
    server.start()
    try:
        measured = measure(server.base_url)
        measured["server_start_s"] = round(server.startup_seconds or 0.0, 1)
        return measured
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
