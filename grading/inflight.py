"""A cap on requests in flight to one model server, shared by every thread of the process.

vLLM queues whatever it is sent, so without a cap a burst of submissions becomes a burst of
requests that all wait inside the server, time out together and fall back together. The gate
keeps at most `max_inflight` requests at the server per endpoint and records the most it
ever saw, which the grading benchmark reports.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass


class GateTimeout(Exception):
    """No slot became free in time."""


class InflightGate:
    """A counting semaphore that also keeps the current and the highest number in flight."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, int(limit))
        self._slots = threading.BoundedSemaphore(self.limit)
        self._lock = threading.Lock()
        self.current = 0
        self.max_seen = 0

    @contextmanager
    def slot(self, timeout: float | None = None) -> Iterator[None]:
        """Hold one slot for the duration of the block; raise GateTimeout after `timeout` s."""
        if not self._slots.acquire(timeout=timeout):
            raise GateTimeout(f"all {self.limit} grader slots busy for {timeout:g}s")
        with self._lock:
            self.current += 1
            self.max_seen = max(self.max_seen, self.current)
        try:
            yield
        finally:
            with self._lock:
                self.current -= 1
            self._slots.release()


@dataclass(frozen=True)
class InflightStats:
    """A snapshot of one endpoint's gate."""

    endpoint: str
    limit: int
    current: int
    max_seen: int


_gates: dict[tuple[str, int], InflightGate] = {}
_gates_lock = threading.Lock()


def gate_for(endpoint: str, limit: int) -> InflightGate:
    """The process-wide gate of an endpoint (one per endpoint and limit)."""
    key = (endpoint, max(1, int(limit)))
    with _gates_lock:
        gate = _gates.get(key)
        if gate is None:
            gate = _gates[key] = InflightGate(key[1])
        return gate


def inflight_stats(endpoint: str, limit: int) -> InflightStats:
    """Current and highest in-flight counts of an endpoint's gate."""
    gate = gate_for(endpoint, limit)
    return InflightStats(endpoint, gate.limit, gate.current, gate.max_seen)


def each_inflight[T, R](fn: Callable[[T], R], items: Iterable[T], limit: int) -> list[R]:
    """`fn` over `items`, up to `limit` at once, the results in `items`' order; the first
    exception is raised once the calls under way have ended.

    For runs of many model grades (a question's answer tests, a calibration set): a grade
    spends its time waiting on the server, and vLLM batches the requests it holds, so eight
    at once take little longer than one. Give the endpoint's `max_inflight` as `limit`: the
    gate still caps what reaches the server, with any other grades of the process."""
    items = list(items)
    workers = min(max(1, int(limit)), len(items))
    if workers <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grade") as pool:
        return list(pool.map(fn, items))
