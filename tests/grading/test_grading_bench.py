"""bench/grading.py, run small: the drain never exceeds the cap, the hit rate reads /metrics."""

from __future__ import annotations

import json

from bench.grading import BENCH_STEP, bench_answers, main, measure_drain, prefix_cache_hit_rate
from grading import GraderConfig
from grading.fake_server import FakeChatServer, ScriptedReply, grade_content, response_ids


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


def test_prefix_cache_hit_rate_reads_the_counters_around_the_gradings():
    def reply(request):
        verdicts = [{"id": i, "evidence": "", "verdict": "miss", "comment": ""}
                    for i in response_ids(request)]  # fmt: skip
        return ScriptedReply(content=grade_content(verdicts))

    with FakeChatServer(reply) as server:
        config = GraderConfig(base_url=server.base_url, max_retries=0)
        rate = prefix_cache_hit_rate(server.base_url, BENCH_STEP, bench_answers(5), config=config)
        queries, hits = server.prefix_cache.queries, server.prefix_cache.hits
    assert len(server.requests) == 5
    # Everything before the answer is shared, so all but the first grading mostly hit.
    assert rate == round(hits / queries, 4)
    assert 0.6 < rate < 1.0
