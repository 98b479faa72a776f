"""grading/metrics.py: the one reader of a model server's Prometheus /metrics page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grading.metrics import parse_metrics, prefix_cache_counters

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# HELP vllm:num_requests_waiting waiting", {}),
        ("garbage line", {}),
        ("vllm:kv_cache_usage_perc 0.25", {"vllm:kv_cache_usage_perc": 0.25}),
        # Label values may hold spaces, braces and escaped quotes; a timestamp is not read.
        ('vllm:success{reason="stop", model="a b}"} 4 1712345678000', {"vllm:success": 4.0}),
        ('vllm:success{model="say \\"hi\\""} 1', {"vllm:success": 1.0}),
        ('vllm:latency_bucket{le="+Inf"} 7', {"vllm:latency_bucket": 7.0}),
        ("vllm:ratio +Inf", {"vllm:ratio": float("inf")}),
    ],
)
def test_parse_metrics_reads_one_sample_per_line(line, expected):
    assert parse_metrics(line + "\n") == expected


def test_parse_metrics_sums_label_sets():
    text = (
        'vllm:num_requests_waiting{model_name="a"} 2.0\n'
        'vllm:num_requests_waiting{model_name="b"} 3.0\n'
        "vllm:num_requests_waiting 1\n"
    )
    assert parse_metrics(text) == {"vllm:num_requests_waiting": 6.0}


def test_prefix_cache_counters_prefer_the_total_names():
    assert prefix_cache_counters({}) == (0.0, 0.0)
    assert prefix_cache_counters(
        {"vllm:prefix_cache_queries": 10.0, "vllm:prefix_cache_hits": 4.0}
    ) == (10.0, 4.0)
    metrics = {
        "vllm:prefix_cache_queries_total": 0.0,
        "vllm:prefix_cache_queries": 10.0,
        "vllm:prefix_cache_hits_total": 3.0,
    }
    assert prefix_cache_counters(metrics) == (0.0, 3.0)


def test_the_vllm_launcher_reads_metrics_without_the_app_packages():
    # tools/vllm/server.py runs under a bare python3: -S leaves out the venv's packages.
    code = (
        "import json, sys; sys.path.insert(0, 'tools/vllm'); import server; "
        "print(json.dumps([server.parse_metrics('a{x=\"1\"} 2\\na 3\\n'), "
        "sorted(m for m in sys.modules if m.split('.')[0] in ('grading', 'openai', 'django'))]))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    metrics, app_modules = json.loads(done.stdout)
    assert metrics == {"a": 5.0}
    assert app_modules == []
