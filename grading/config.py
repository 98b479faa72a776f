"""Where the model grader is and how patiently to talk to it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_MODEL = "Qwen/Qwen2.5-7B-Instruct"


# A retry re-sends the whole prompt and waits up to the timeout again; the task retries on a
# scale of minutes, so more than this only holds a worker on a server that is not answering.
MAX_RETRIES_CAP = 3


def _number(
    values: Mapping[str, str],
    name: str,
    default: float,
    *,
    minimum: float,
    maximum: float = float("inf"),
) -> float:
    raw = str(values.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None
    if value < minimum:
        raise ValueError(f"{name}={raw!r} must be at least {minimum:g}")
    if value > maximum:
        raise ValueError(f"{name}={raw!r} must be at most {maximum:g}")
    return value


def checked_base_url(raw: str) -> str:
    """`raw` stripped, or ValueError naming GRADER_BASE_URL when it is not an http(s) URL with
    a host. Empty is allowed: no model. A URL without its scheme (`127.0.0.1:8001/v1`) or with
    another one would only ever fail to connect, and read as a grader not answering yet."""
    url = raw.strip()
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises ValueError here
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(
            f"GRADER_BASE_URL={raw!r} is not an http:// or https:// URL with a host "
            "(e.g. http://127.0.0.1:8001/v1)"
        )
    return url


@dataclass(frozen=True)
class GraderConfig:
    """The model grader's endpoint and limits.

    `base_url` is an OpenAI-compatible API root such as `http://127.0.0.1:8001/v1`; empty
    means no model is configured and every grade is offline. Times are in seconds.
    """

    base_url: str = ""
    model: str = DEFAULT_MODEL
    api_key: str = ""
    timeout_s: float = 60.0
    # One retry covers a dropped connection or a replica restarting; the background task
    # retries on a longer scale, so more here would only hold a worker thread.
    max_retries: int = 1
    max_inflight: int = 8
    # How long a health-check answer is trusted before the endpoint is asked again.
    health_ttl_s: float = 15.0
    # How long a grading may wait for one of the `max_inflight` slots before giving up.
    queue_timeout_s: float = 120.0
    # Answers are cut to this many characters before they reach the model (prompt budget).
    max_answer_chars: int = 6000
    # Upper bound on the model's reply; the request asks for less when the rubric is short.
    max_output_tokens: int = 1536
    seed: int = 1234

    @property
    def endpoint(self) -> str:
        """The base URL in one canonical spelling, used as the key of shared state."""
        return self.base_url.strip().rstrip("/")

    @property
    def configured(self) -> bool:
        return bool(self.endpoint)

    @classmethod
    def from_settings(cls, values: Mapping[str, str]) -> GraderConfig:
        """Build the configuration from the GRADER_* settings (strings; empty means default).

        `values` is Django's `settings.GRADER`, read from the environment once at start-up.
        Raises ValueError naming the setting when a number is malformed or out of range, or
        GRADER_BASE_URL is not an http(s) URL.
        """

        def text(name: str) -> str:
            return str(values.get(name) or "").strip()

        return cls(
            base_url=checked_base_url(text("GRADER_BASE_URL")),
            model=text("GRADER_MODEL") or DEFAULT_MODEL,
            api_key=text("GRADER_API_KEY"),
            timeout_s=_number(values, "GRADER_TIMEOUT_S", cls.timeout_s, minimum=0.1),
            max_retries=int(
                _number(
                    values,
                    "GRADER_MAX_RETRIES",
                    cls.max_retries,
                    minimum=0,
                    maximum=MAX_RETRIES_CAP,
                )
            ),
            max_inflight=int(_number(values, "GRADER_MAX_INFLIGHT", cls.max_inflight, minimum=1)),
            health_ttl_s=_number(values, "GRADER_HEALTH_TTL_S", cls.health_ttl_s, minimum=0),
            max_output_tokens=int(
                _number(values, "GRADER_MAX_TOKENS", cls.max_output_tokens, minimum=64)
            ),
        )
