"""What the /grader/ page shows: the model server's state and our own grading queue.

Reads the model server's OpenAI-compatible `/v1/models`, vLLM's `/version` and Prometheus
`/metrics` with short timeouts; a server that is down is reported, never raised.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import httpx

from interview.grading import GraderConfig

TIMEOUT_S = 2.0
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+([-+0-9.eEinfNa]+)")


@dataclass
class ServerStatus:
    endpoint: str
    model: str
    configured: bool
    reachable: bool = False
    reason: str = ""
    served_models: list[str] = field(default_factory=list)
    version: str = ""
    waiting: float | None = None
    running: float | None = None
    kv_cache_usage: float | None = None
    prefix_cache_hit_rate: float | None = None


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text -> {metric name: sum over its label sets} (comments skipped)."""
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if not match:
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        totals[match.group(1)] = totals.get(match.group(1), 0.0) + value
    return totals


def server_status(config: GraderConfig) -> ServerStatus:
    """Ask the model server what it serves and how busy it is."""
    status = ServerStatus(
        endpoint=config.endpoint, model=config.model, configured=config.configured
    )
    if not config.configured:
        status.reason = "No GRADER_BASE_URL is set: every answer is graded offline."
        return status
    root = re.sub(r"/v1$", "", config.endpoint)
    headers = {"Authorization": f"Bearer {config.api_key or 'EMPTY'}"}
    try:
        with httpx.Client(timeout=TIMEOUT_S, headers=headers) as client:
            models = client.get(f"{config.endpoint}/models")
            status.reachable = models.status_code == 200
            if status.reachable:
                status.served_models = [str(m.get("id")) for m in models.json().get("data", [])]
            else:
                status.reason = f"/models answered HTTP {models.status_code}"
            version = client.get(f"{root}/version")
            if version.status_code == 200:
                status.version = str(version.json().get("version", ""))
            metrics = client.get(f"{root}/metrics")
            if metrics.status_code == 200:
                _read_metrics(status, parse_metrics(metrics.text))
    except (httpx.HTTPError, ValueError) as exc:
        status.reachable = False
        status.reason = f"unreachable ({type(exc).__name__})"
    return status


def _read_metrics(status: ServerStatus, m: dict[str, float]) -> None:
    status.waiting = m.get("vllm:num_requests_waiting")
    status.running = m.get("vllm:num_requests_running")
    usage = m.get("vllm:kv_cache_usage_perc", m.get("vllm:gpu_cache_usage_perc"))
    status.kv_cache_usage = usage
    queries = m.get("vllm:prefix_cache_queries_total", m.get("vllm:prefix_cache_queries"))
    hits = m.get("vllm:prefix_cache_hits_total", m.get("vllm:prefix_cache_hits"))
    if queries:
        status.prefix_cache_hit_rate = (hits or 0.0) / queries


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0..100) by nearest rank; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[rank]
