"""GET /healthz: 200 only when the app can serve, i.e. its database and its shared cache
both answer. With REDIS_URL set, sessions, log-in throttling and rate limits live in Redis:
a dead Redis fails every log-in with a 500, so the health check must not say "ok"."""

import socket

import pytest
from django.test import override_settings


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.django_db
def test_healthz_is_ok_when_the_database_answers_and_no_shared_cache_is_set(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    # No task waits and no shared cache carries the worker's heartbeat: nothing to tell.
    assert response.json() == {"status": "ok", "database": "ok", "worker": "idle"}


@pytest.mark.django_db
def test_healthz_is_503_when_the_shared_cache_is_down(client):
    dead = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{closed_port()}/7",
    }
    with override_settings(CACHES={"default": dead}):
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["database"] == "ok"
    assert body["cache"] == "unreachable"
