"""bench/grading.py, run small: the drain never exceeds the cap, the hit rate reads /metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench import grading_vllm
from bench.grading import BENCH_STEP, bench_answers, main, measure_drain, measure_prefix_cache
from grading import GraderConfig
from grading.fake_server import FakeChatServer, ScriptedReply, grade_content, response_ids

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_drain_respects_the_cap():
    result = measure_drain(submissions=12, cap=3, latency_s=0.05, workers=8)
    assert result["bench"] == "grading"
    assert result["inflight_cap"] == 3
    assert 1 <= result["max_inflight_seen"] <= 3
    assert result["server_max_concurrent"] <= 3
    assert result["requests_served"] == 12 and result["graded_by"] == {"llm": 12}
    assert result["drain_ratio"] >= 0.95  # it cannot beat ceil(n / cap) x latency


def test_main_prints_one_json_line(capsys):
    main(["--submissions", "4", "--cap", "2", "--latency-ms", "20", "--threads", "4"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    data = json.loads(lines[0])
    assert {"bench", "inflight_cap", "max_inflight_seen", "drain_ratio"} <= data.keys()


def _all_missed(request):
    verdicts = [{"id": i, "evidence": "", "verdict": "miss", "comment": ""}
                for i in response_ids(request)]  # fmt: skip
    return ScriptedReply(content=grade_content(verdicts))


def test_the_prefix_cache_is_measured_from_the_counters_around_the_gradings():
    with FakeChatServer(_all_missed) as server:
        config = GraderConfig(base_url=server.base_url, max_retries=0)
        measured = measure_prefix_cache(
            server.base_url, BENCH_STEP, bench_answers(5), config=config
        )
        rate = measured["prefix_cache_hit_rate"]
        queries, hits = server.prefix_cache.queries, server.prefix_cache.hits
    assert len(server.requests) == 5 and measured["graded_by"] == {"llm": 5}
    assert measured["prefix_cache_queried_tokens"] == queries
    # Everything before the answer is shared, so all but the first grading mostly hit.
    assert rate == round(hits / queries, 4)
    assert 0.6 < rate < 1.0


def test_the_vllm_bench_measures_a_running_server(capsys):
    with FakeChatServer(_all_missed) as server:
        grading_vllm.main(["--base-url", server.base_url, "--answers", "3"])
    data = json.loads(capsys.readouterr().out)
    assert data["bench"] == "grading_vllm" and data["question"] == "chat-api-50qps"
    assert data["graded_by"] == {"llm": 3} and data["fallback_reasons"] == {}
    assert data["prefix_cache_queried_tokens"] == server.prefix_cache.queries
    assert data["prefix_cache_hit_rate"] == round(
        server.prefix_cache.hits / server.prefix_cache.queries, 4
    )


def test_the_vllm_bench_runs_as_make_bench_grading_runs_it_without_django_settings():
    """`make bench-grading` runs the bench as a plain process, where nothing configures Django:
    the path that reads the server's counters must not need settings."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    with FakeChatServer(_all_missed) as server:
        done = subprocess.run(
            [sys.executable, "-m", "bench.grading_vllm", "--base-url", server.base_url,
             "--answers", "2"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["graded_by"] == {"llm": 2}
    assert data["prefix_cache_hit_rate"] == round(
        server.prefix_cache.hits / server.prefix_cache.queries, 4
    )
