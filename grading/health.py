"""Is the model grader up? A cheap check, cached so that grading never waits on it twice.

The check asks the OpenAI-compatible `/models` route (vLLM and routers in front of it both
answer it) and counts the endpoint as up only when the configured model is listed: a server
that answers but does not serve our model would fail every grading with a 404.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

import openai

from grading.client import client_for
from grading.config import GraderConfig

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


# How long the last health answer is kept for display after it stops being trusted for
# routing: the public /grader/ page shows it ("down since ...") and never asks the server itself.
LAST_KNOWN_KEEP_S = 24 * 3600


# How a reason begins when the server gave no answer at all (refused, or silent past the limit).
UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class HealthSnapshot:
    """The last health answer: up or not, why not, and when it was found (Unix seconds)."""

    up: bool
    reason: str
    checked_at: float

    @property
    def unreachable(self) -> bool:
        """Whether the server gave no answer at all: asking it anything more now would wait
        for its own timeout too. Read from the reason `probe_model` words, which opens with
        UNREACHABLE then and only then (a stored answer has its reason and nothing more)."""
        return not self.up and self.reason.startswith(UNREACHABLE)

    def fresh(self, ttl_s: float, now: float | None = None) -> bool:
        """Whether the answer is young enough to route gradings by."""
        return ((time.time() if now is None else now) - self.checked_at) < ttl_s


def health_cache_key(config: GraderConfig) -> str:
    return f"grader:health:{config.endpoint}:{config.model}"


def _remember(config: GraderConfig, cache: HealthCache, up: bool, reason: str) -> None:
    # Stored as a plain dict so any cache backend (pickle or JSON) can hold it; wall-clock
    # time because web and worker processes share the answer.
    value = {"up": up, "reason": reason, "checked_at": time.time()}
    cache.set(health_cache_key(config), value, LAST_KNOWN_KEEP_S)


def last_health(config: GraderConfig, *, cache: HealthCache | None = None) -> HealthSnapshot | None:
    """The last health answer stored for this endpoint, however old; None when never checked.

    Never contacts the server: this is what a public page may show.
    """
    cache = default_health_cache if cache is None else cache
    value = cache.get(health_cache_key(config))
    if not isinstance(value, dict):
        return None
    try:
        return HealthSnapshot(
            up=value["up"] is True,
            reason=str(value.get("reason") or ""),
            checked_at=float(value["checked_at"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def probe_model(config: GraderConfig) -> tuple[bool, str]:
    """Ask the endpoint now, once (no retry). Returns (up, a one-line reason when it is not)."""
    if not config.configured:
        return False, "no GRADER_BASE_URL configured"
    client = client_for(config).with_options(
        timeout=min(HEALTH_TIMEOUT_S, config.timeout_s), max_retries=0
    )
    try:
        served = [str(m.id) for m in client.models.list().data]
    except openai.APIStatusError as exc:
        return False, f"/models answered HTTP {exc.status_code}"
    except openai.APIError as exc:
        return False, f"{UNREACHABLE} ({type(exc).__name__})"
    except (ValueError, TypeError, AttributeError):
        return False, "/models answered something that is not a model list"
    if config.model not in served:
        listed = ", ".join(served) or "none"
        return False, f"model {config.model!r} is not served (served: {listed})"
    return True, ""


def check_health(config: GraderConfig, *, cache: HealthCache | None = None) -> HealthSnapshot:
    """Probe the endpoint now and store the answer for every process sharing `cache`."""
    cache = default_health_cache if cache is None else cache
    up, reason = probe_model(config)
    if config.configured:
        _remember(config, cache, up, reason)
    return HealthSnapshot(up=up, reason=reason, checked_at=time.time())


def model_is_up(config: GraderConfig, *, cache: HealthCache | None = None) -> bool:
    """Whether the model grader answers, from a stored answer trusted for `health_ttl_s`.

    `cache` is any object with get/set (Django's cache works); the default is in-process.
    Probes the endpoint only when the stored answer is missing or older than the TTL.
    """
    if not config.configured:
        return False
    last = last_health(config, cache=cache)
    if last is not None and last.fresh(config.health_ttl_s):
        return last.up
    return check_health(config, cache=cache).up


def mark_model_down(config: GraderConfig, reason: str, *, cache: HealthCache | None = None) -> None:
    """Remember a failed call so the next gradings go offline without waiting on the model."""
    if config.configured:
        _remember(config, default_health_cache if cache is None else cache, False, reason)
