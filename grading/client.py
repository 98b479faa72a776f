"""The one client for the model server: the `openai` client, one per configuration.

Grading, the health check and the /grader/ page all talk to the server through it, so the
timeouts, the retry cap and the API key are applied the same way everywhere.
"""

from __future__ import annotations

import threading

import openai

from grading.config import GraderConfig

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
