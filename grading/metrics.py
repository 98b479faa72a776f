"""Reading a model server's Prometheus /metrics page (vLLM's) into totals per metric.

The /grader/ page, the grading bench and the vLLM launcher (tools/vllm/server.py) all read it
here. Standard library only and importing nothing of this package: the launcher runs under a
bare python3 and loads this file by its path, without the graders in grading/__init__.py.
"""

from __future__ import annotations

import re

# A sample line: a name, an optional label set (quoted values may hold spaces, braces and
# escaped quotes), the value, and an optional timestamp, which is not read.
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?\s+(\S+)')

# vLLM's prefix-cache counters in tokens; older releases named them without "_total".
PREFIX_CACHE_QUERIES = ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries")
PREFIX_CACHE_HITS = ("vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits")


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text -> {metric name: value summed over its label sets}.

    Comments and lines that are not a sample with a number (NaN and +Inf included) are skipped.
    """
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if not match:
            continue
        try:
            value = float(match.group(2))
        except ValueError:
            continue
        totals[match.group(1)] = totals.get(match.group(1), 0.0) + value
    return totals


def _first(metrics: dict[str, float], names: tuple[str, ...]) -> float:
    return next((metrics[name] for name in names if name in metrics), 0.0)


def prefix_cache_counters(metrics: dict[str, float]) -> tuple[float, float]:
    """(queried, hit) prompt tokens from vLLM's prefix-cache counters; 0 for a missing one."""
    return _first(metrics, PREFIX_CACHE_QUERIES), _first(metrics, PREFIX_CACHE_HITS)
