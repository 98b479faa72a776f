"""Prefix-cache hit rate while grading through the real vLLM CPU server.

    .venv/bin/python -m bench.grading_vllm [--answers 20] [--question SLUG --step KEY]
                                           [--base-url URL]

Starts the real vLLM server (tools/vllm/server.py; the environment and tiny model must exist:
tools/vllm/setup.sh and make_tiny_model.py, or run tools/vllm/run-tests.sh once), grades N
different answers to the same step through `grading.grade` in LLM mode, and reads
vLLM's /metrics counters vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total
before and after. Prints one line:

    {"bench": "grading_vllm", "prefix_cache_hit_rate": 0.9, ...}

The hit rate is the share of prompt tokens served from vLLM's prefix cache: the grader puts
the fixed system prompt, question context, rubric and reference before the answer, so every
grading after the first should reuse that prefix. Target >= 0.5. The first grading (cold
cache) is counted too. With --base-url, an already running server is measured instead (its
/metrics must be at the URL's root).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from questionbank import StepSpec, load_question_spec  # noqa: E402
from tools.vllm.server import (  # noqa: E402
    SERVED_MODEL_NAME,
    VLLMServer,
    parse_metrics,
    prefix_cache_counters,
)

TARGET = 0.5

# Pieces of answers, combined deterministically into N different answers of varied length.
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


def read_metrics(root_url: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{root_url}/metrics", timeout=10) as r:
        return parse_metrics(r.read().decode("utf-8", "replace"))


def run(base_url: str, n: int, slug: str, step_key: str) -> dict:
    from grading import GraderConfig, grade

    root_url = base_url.rstrip("/").removesuffix("/v1")
    step, context = load_step(slug, step_key)
    answers = make_answers(n)
    config = GraderConfig(base_url=base_url, model=SERVED_MODEL_NAME)

    before = read_metrics(root_url)
    t0 = time.monotonic()
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
        prompt_tokens += getattr(getattr(result, "usage", None), "prompt_tokens", 0) or 0
    elapsed = time.monotonic() - t0
    after = read_metrics(root_url)

    q0, h0 = prefix_cache_counters(before)
    q1, h1 = prefix_cache_counters(after)
    queries, hits = q1 - q0, h1 - h0
    rate = round(hits / queries, 4) if queries > 0 else None
    latencies.sort()
    return {
        "bench": "grading_vllm",
        "prefix_cache_hit_rate": rate,
        "target": TARGET,
        "meets_target": rate is not None and rate >= TARGET,
        "answers": n,
        "question": slug,
        "step": step_key,
        "prefix_cache_queried_tokens": int(queries),
        "prefix_cache_hit_tokens": int(hits),
        "prompt_tokens_reported": prompt_tokens,
        "graded_by": dict(graders),
        "fallback_reasons": dict(fallbacks),
        "requests_succeeded": int(
            after.get("vllm:request_success_total", 0) - before.get("vllm:request_success_total", 0)
        ),
        "grading_s": round(elapsed, 2),
        "latency_p50_ms": round(1000 * latencies[len(latencies) // 2]),
        "latency_max_ms": round(1000 * latencies[-1]),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=20)
    ap.add_argument("--question", default="chat-api-50qps")
    ap.add_argument("--step", default="architecture")
    ap.add_argument("--base-url", default=None, help="measure a running server instead")
    args = ap.parse_args(argv)

    if args.base_url:
        out = run(args.base_url, args.answers, args.question, args.step)
    else:
        server = VLLMServer()
        server.start()
        try:
            out = run(server.base_url, args.answers, args.question, args.step)
            out["server_start_s"] = round(server.startup_seconds or 0.0, 1)
        finally:
            server.stop()
    print(json.dumps(out), flush=True)
    return 0 if out["prefix_cache_hit_rate"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
