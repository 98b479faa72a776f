"""The one client for the model server: the `openai` client, one per configuration.

Grading, the health check and the /grader/ page all talk to the server through it, so the
timeouts, the retry cap and the API key are applied the same way everywhere.
"""

from __future__ import annotations

import threading
from typing import Any

import openai

from grading.config import GraderConfig
from grading.inflight import gate_for

_clients: dict[GraderConfig, openai.OpenAI] = {}
_clients_lock = threading.Lock()


def client_for(config: GraderConfig) -> openai.OpenAI:
    """One OpenAI client per configuration, shared by threads (its connection pool is).

    The client retries at most `config.max_retries` times: the background task retries on a
    longer scale, so retries here would only hold a worker.
    """
    with _clients_lock:
        client = _clients.get(config)
        if client is None:
            client = _clients[config] = openai.OpenAI(
                base_url=config.endpoint,
                api_key=config.api_key or "EMPTY",
                timeout=config.timeout_s,
                max_retries=config.max_retries,
            )
        return client


def server_root(config: GraderConfig) -> str:
    """The server's root URL (where vLLM serves /metrics and /version): the API root minus /v1."""
    endpoint = config.endpoint
    return endpoint[: -len("/v1")] if endpoint.endswith("/v1") else endpoint


def chat_completion(
    config: GraderConfig, messages: list[dict[str, str]], *, max_tokens: int, **options: Any
) -> Any:
    """One chat completion from the configured model at temperature 0 with the configured
    seed, so asking again about the same text gets the same reply; `options` go to the call.

    Every call holds a slot of the endpoint's in-flight gate (grades and the mock
    interviewer's reworded probes alike), so the server never holds more than
    `max_inflight` of ours; GateTimeout when no slot frees within `queue_timeout_s`."""
    with gate_for(config.endpoint, config.max_inflight).slot(timeout=config.queue_timeout_s):
        return client_for(config).chat.completions.create(
            model=config.model,
            messages=messages,  # type: ignore[arg-type]
            temperature=0,
            seed=config.seed,
            max_tokens=max_tokens,
            **options,
        )
