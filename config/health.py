import time

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


def worker_state(*, now: float | None = None) -> str:
    """How the task worker is, from evidence: "ok", "idle" (nothing to show it is alive or
    dead: no task waits, and no shared cache carries its heartbeat), or "not seen for N s".

    Evidence, newest first: the heartbeat the worker stores each round in a shared cache
    (config.worker.SEEN_KEY), and the task table: a task due for longer than a few rounds while
    none runs is one no worker claimed, N counted from the last claim (or from when it fell
    due). Raises DatabaseError when the task table cannot be read."""
    from django.tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult, get_date_max

    from config.worker import RECLAIM_EVERY_S, SEEN_KEY

    now = time.time() if now is None else now
    stale_s = 3 * RECLAIM_EVERY_S + 5  # a few missed rounds, not one slow one
    seen = None
    if _cache_answers():
        seen = caches["default"].get(SEEN_KEY)
        if seen is not None and now - seen <= stale_s:
            return "ok"
    tasks = DBTaskResult.objects
    if tasks.filter(status=TaskResultStatus.RUNNING).exists():
        return "ok"  # it is running one (a worker gone mid-task is reclaimed by the others)
    oldest = tasks.ready().order_by("enqueued_at").values_list("run_after", "enqueued_at").first()
    last_claim = (
        tasks.exclude(started_at=None).order_by("-started_at").values_list("started_at", flat=True)
    ).first()
    if oldest is not None:
        run_after, enqueued_at = oldest
        due = enqueued_at if run_after == get_date_max() else run_after
        if now - due.timestamp() > stale_s:
            evidence = [due.timestamp()]
            evidence += [last_claim.timestamp()] if last_claim else []
            evidence += [seen] if seen is not None else []
            return f"not seen for {now - max(evidence):.0f} s"
        return "ok" if seen is not None else "idle"
    if seen is not None:
        return f"not seen for {now - seen:.0f} s"
    if _cache_answers():
        return "not seen"  # a shared cache, and no worker has written to it
    return "idle"


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """200 {"status": "ok", "database": "ok", "worker": ...} when the app can query its
    database (and, with a shared cache configured, `"cache": "ok"` when that answers too),
    else 503 naming what does not answer.

    "worker" is `worker_state()`: "ok", "idle" or "not seen for N s". A dead worker leaves the
    status 200: the web app still serves every page and saves every answer (they wait,
    queued, for a worker), and a load balancer that took it out of rotation for that would
    turn late feedback into no site at all."""
    body: dict[str, str] = {"status": "ok", "database": "ok"}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        body.update(status="error", database="unreachable", detail=type(exc).__name__)
    else:
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
