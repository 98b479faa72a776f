"""Is the model grader up? A cheap check, cached so that grading never waits on it twice.

The check asks the OpenAI-compatible `/models` route (vLLM and routers in front of it both
answer it) and counts the endpoint as up only when the configured model is listed: a server
that answers but does not serve our model would fail every grading with a 404.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

import httpx

from interview.grading.config import GraderConfig

# The health check must be quick: it runs before a grading in `auto` mode.
HEALTH_TIMEOUT_S = 3.0


class HealthCache(Protocol):
    """What the health check needs from a cache; Django's cache fits as it is."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def set(self, key: str, value: Any, timeout: float | None = None) -> None: ...


class TTLCache:
    """A small thread-safe in-process cache with per-key expiry (the default HealthCache)."""

    def __init__(self) -> None:
        self._values: dict[str, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            entry = self._values.get(key)
            if entry is None or entry[0] < time.monotonic():
                self._values.pop(key, None)
                return default
            return entry[1]

    def set(self, key: str, value: Any, timeout: float | None = None) -> None:
        expires = time.monotonic() + (timeout if timeout is not None else 1e12)
        with self._lock:
            self._values[key] = (expires, value)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


default_health_cache = TTLCache()


def health_cache_key(config: GraderConfig) -> str:
    return f"grader:health:{config.endpoint}:{config.model}"


def probe_model(config: GraderConfig) -> tuple[bool, str]:
    """Ask the endpoint now. Returns (up, a one-line reason when it is not up)."""
    if not config.configured:
        return False, "no GRADER_BASE_URL configured"
    headers = {"Authorization": f"Bearer {config.api_key or 'EMPTY'}"}
    try:
        response = httpx.get(
            f"{config.endpoint}/models",
            headers=headers,
            timeout=min(HEALTH_TIMEOUT_S, config.timeout_s),
        )
    except httpx.HTTPError as exc:
        return False, f"unreachable ({type(exc).__name__})"
    if response.status_code != 200:
        return False, f"/models answered HTTP {response.status_code}"
    try:
        served = [m.get("id") for m in response.json().get("data", [])]
    except (ValueError, AttributeError):
        return False, "/models answered something that is not a model list"
    if config.model not in served:
        listed = ", ".join(map(str, served)) or "none"
        return False, f"model {config.model!r} is not served (served: {listed})"
    return True, ""


def model_is_up(config: GraderConfig, *, cache: HealthCache | None = None) -> bool:
    """Whether the model grader answers, from a cache trusted for `config.health_ttl_s`.

    `cache` is any object with get/set (Django's cache works); the default is in-process.
    """
    if not config.configured:
        return False
    cache = default_health_cache if cache is None else cache
    key = health_cache_key(config)
    cached = cache.get(key)
    # Stored as strings so that a cache miss (None) is never mistaken for "down".
    if cached in ("up", "down"):
        return cached == "up"
    up, _reason = probe_model(config)
    cache.set(key, "up" if up else "down", config.health_ttl_s)
    return up


def mark_model_down(config: GraderConfig, *, cache: HealthCache | None = None) -> None:
    """Remember a failed call so the next gradings go offline without waiting on the model."""
    if config.configured:
        cache = default_health_cache if cache is None else cache
        cache.set(health_cache_key(config), "down", config.health_ttl_s)
