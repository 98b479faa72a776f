from django.core.cache import caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe


def _cache_answers() -> bool | None:
    """Whether the shared cache (REDIS_URL) answers; None when the cache is each process's
    own memory, which cannot be down. Sessions, log-in throttling and rate limits live there,
    so without it no one can sign in."""
    cache = caches["default"]
    if isinstance(cache, LocMemCache | DummyCache):
        return None
    try:
        cache.get("healthz")
    except Exception:  # the Redis client's ConnectionError, a timeout, ...
        return False
    return True


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """200 {"status": "ok", "database": "ok", "worker": ...} when the app can query its
    database (and, with a shared cache configured, `"cache": "ok"` when that answers too),
    else 503 naming what does not answer.

    "worker" is practice.grader_status.worker_state(): "ok", "idle" or "not seen for N s". A
    dead worker leaves the status 200: the web app still serves every page and saves every
    answer (they wait, queued, for a worker), and a load balancer that took it out of rotation
    for that would turn late feedback into no site at all."""
    body: dict[str, str] = {"status": "ok", "database": "ok"}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        body.update(status="error", database="unreachable", detail=type(exc).__name__)
    else:
        from practice.grader_status import worker_state

        try:
            body["worker"] = worker_state()
        except DatabaseError:  # the task table is missing (not migrated): no evidence
            body["worker"] = "unknown"
    shared = _cache_answers()
    if shared is not None:
        body["cache"] = "ok" if shared else "unreachable"
        if not shared:
            body["status"] = "error"
    return JsonResponse(body, status=200 if body["status"] == "ok" else 503)
