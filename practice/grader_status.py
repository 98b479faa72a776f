"""What the /grader/ page shows: whether grading by the model works, our queue, and for staff
the model server's own state.

The public part is read from the stored health answer and our database only, so a slow or
hung model server never holds a web worker for a visitor. The health answer is stored by
whichever process asked the model (mostly the grading worker); only a cache shared between
processes (Redis, REDIS_URL) carries it to the web server, so without one the page shows what
the database tells: who graded the newest answer, and when (the REDIS_URL advice is for staff).

The details (endpoint, served models, vLLM's /version and /metrics) are asked of the server
through the one model client, with a short timeout, for staff only: they name internal hosts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import openai
from django.core.cache import cache as default_cache
from django.core.cache import caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache
from django.db.models import Count
from django.utils import timezone
from django.utils.timesince import timesince

from grading import GraderConfig, HealthCache, TTLCache, check_health, last_health
from grading.client import client_for, server_root
from grading.metrics import parse_metrics, prefix_cache_counters
from grading.stats import percentile
from practice.models import Grade, Submission

DETAILS_TIMEOUT_S = 2.0

# The task worker's heartbeat in the default cache: {"at": Unix time, "round_s": how often it
# beats}. An idle worker leaves no trace in the task table, so without it nothing could tell an
# idle worker from a dead one; the cache, not a table, since the worker writes there each round
# already (the model server's health). Only a shared cache (REDIS_URL) carries it to the web
# processes; without one the task table alone is the evidence.
WORKER_SEEN_KEY = "worker:seen"
# How often a worker beats, and how long a task may run before another worker reclaims it,
# until a worker has said (config.worker's WORKER_RECLAIM_EVERY_S and TASK_LEASE_S defaults).
WORKER_ROUND_S = 30.0
WORKER_LEASE_S = 900.0


def ago(when: datetime, *, now: datetime | None = None) -> str:
    """How long ago `when` was, in words: "just now" under a minute (or a clock a little
    ahead), where Django's timesince alone would say "0 minutes"."""
    now = timezone.now() if now is None else now
    if (now - when).total_seconds() < 60:
        return "just now"
    return f"{timesince(when, now)} ago"


@dataclass(frozen=True)
class PublicStatus:
    """What anyone may see: is the model grading, as of when, and how long is our queue.

    `state` is "up", "down", "offline" (no model configured) or "unknown" (no health answer in
    the cache). `shared_cache` False: the cache lives in each process's memory, so the grading
    worker's health answers never reach this page. For "unknown", the database stands in:
    `newest_graded_at` and `newest_graded_by` ("model" or "offline", None when nothing is
    graded yet) for the newest graded answer, `model_graded_at` for the model's newest grade.
    """

    state: str
    checked_at: datetime | None
    queued: int
    grading: int
    offline: int
    oldest_queued_at: datetime | None = None
    shared_cache: bool = True
    newest_graded_at: datetime | None = None
    newest_graded_by: str | None = None
    model_graded_at: datetime | None = None
    # The task worker, as worker_state() tells it: "ok", "idle", "not seen", "not seen for N s".
    worker: str = ""

    @property
    def worker_missing(self) -> bool:
        return self.worker.startswith("not seen")

    @property
    def worker_words(self) -> str:
        """The worker's state for people: "running", or how long it has not been seen in
        minutes and hours ("not seen for 10 minutes"), where /healthz gives seconds."""
        if self.worker.startswith("not seen for "):
            seconds = float(self.worker.removeprefix("not seen for ").removesuffix(" s"))
            if seconds >= 60:
                return f"not seen for {timesince(timezone.now() - timedelta(seconds=seconds))}"
            return self.worker
        return {"ok": "running", "idle": "nothing has waited long for it"}.get(
            self.worker, "not seen running"
        )

    @property
    def checked_ago(self) -> str:
        return ago(self.checked_at) if self.checked_at else ""

    @property
    def newest_graded_ago(self) -> str:
        return ago(self.newest_graded_at) if self.newest_graded_at else ""

    @property
    def model_graded_ago(self) -> str:
        return ago(self.model_graded_at) if self.model_graded_at else ""

    @property
    def oldest_queued_for(self) -> str:
        """How long the oldest queued answer has waited: "under a minute", else timesince."""
        if self.oldest_queued_at is None:
            return ""
        if (timezone.now() - self.oldest_queued_at).total_seconds() < 60:
            return "under a minute"
        return timesince(self.oldest_queued_at)


@dataclass
class ServerStatus:
    """The model server's own view of itself, for staff."""

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

    @property
    def on_this_machine(self) -> bool:
        """Whether the endpoint is this machine's loopback, where `make grader` serves."""
        return urlsplit(self.endpoint).hostname in {"127.0.0.1", "localhost", "::1"}


def public_status(config: GraderConfig | None, *, cache: HealthCache) -> PublicStatus:
    """The grader's state from the stored health answer (never asking the server) and our
    queue from the database. `config` None means the grader settings are malformed."""
    counts = dict(
        Submission.objects.filter(
            grade_status__in=[
                Submission.GradeStatus.QUEUED,
                Submission.GradeStatus.GRADING,
                Submission.GradeStatus.OFFLINE,
            ]
        )
        .values_list("grade_status")
        .annotate(n=Count("pk"))
    )
    oldest_queued_at = (
        Submission.objects.filter(grade_status=Submission.GradeStatus.QUEUED)
        .order_by("status_changed_at")
        .values_list("status_changed_at", flat=True)
        .first()
    )
    state, checked_at = "offline", None
    if config is None:
        state = "down"
    elif config.configured:
        last = last_health(config, cache=cache)
        if last is None:
            state = "unknown"
        else:
            state = "up" if last.up else "down"
            checked_at = datetime.fromtimestamp(last.checked_at, tz=UTC)
    status = PublicStatus(
        state=state,
        checked_at=checked_at,
        queued=counts.get(Submission.GradeStatus.QUEUED, 0),
        grading=counts.get(Submission.GradeStatus.GRADING, 0),
        offline=counts.get(Submission.GradeStatus.OFFLINE, 0),
        oldest_queued_at=oldest_queued_at,
        shared_cache=shared_between_processes(cache),
        worker=worker_state(),
    )
    if state == "unknown":
        status = replace(status, **_graded_lately())
    return status


def shared_between_processes(cache: HealthCache) -> bool:
    """Whether what one process stores in `cache` is seen by the others: not for Django's
    local-memory or dummy caches, nor for the in-process TTLCache."""
    backend = caches["default"] if cache is default_cache else cache
    return not isinstance(backend, LocMemCache | DummyCache | TTLCache)


def worker_heartbeat(*, round_s: float, lease_s: float) -> None:
    """Store "a worker ran now" (the worker calls it each round, every `round_s` seconds; a
    task it runs longer than `lease_s` is taken to be lost)."""
    beat = {"at": time.time(), "round_s": round_s, "lease_s": lease_s}
    default_cache.set(WORKER_SEEN_KEY, beat, timeout=None)


def worker_state(*, now: float | None = None) -> str:
    """How the task worker is, from evidence: "ok", "idle" (nothing shows it alive or dead: no
    task waits, and no shared cache carries its heartbeat), "not seen" (a shared cache no
    worker has written to) or "not seen for N s".

    Evidence: the heartbeat in a shared cache (WORKER_SEEN_KEY), and the task table: a task due
    for longer than a few of the worker's rounds while none runs is one no worker claimed, N
    counted from the newest of the last claim, the time it fell due and the heartbeat. Raises
    DatabaseError when the task table cannot be read."""
    from django.tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult, get_date_max

    now = time.time() if now is None else now
    shared = shared_between_processes(default_cache)
    beat = None
    if shared:
        try:
            beat = default_cache.get(WORKER_SEEN_KEY)
        except Exception:  # a cache that is down carries no heartbeat (/healthz says it is down)
            beat = None
    beat = beat if isinstance(beat, dict) else {}
    seen = beat.get("at")
    stale_s = 3 * beat.get("round_s", WORKER_ROUND_S) + 5  # a few missed rounds, not one slow one
    if seen is not None and now - seen <= stale_s:
        return "ok"
    tasks = DBTaskResult.objects
    # A task running within its lease shows a worker at work, unless that worker's heartbeat
    # has stopped: one killed mid-task leaves its task "running" until another reclaims it.
    lease_start = datetime.fromtimestamp(now - beat.get("lease_s", WORKER_LEASE_S), tz=UTC)
    if (
        seen is None
        and tasks.filter(status=TaskResultStatus.RUNNING, started_at__gte=lease_start).exists()
    ):
        return "ok"
    # The task that has waited longest: queued to run at once (due when enqueued), or a retry
    # held back to its `run_after`, which may fall due long after it was enqueued.
    ready, never = tasks.ready(), get_date_max()
    dues = [
        ready.filter(run_after=never)
        .order_by("enqueued_at")
        .values_list("enqueued_at", flat=True)
        .first(),
        ready.exclude(run_after=never)
        .order_by("run_after")
        .values_list("run_after", flat=True)
        .first(),
    ]
    dues = [d.timestamp() for d in dues if d is not None]
    if dues:
        due = min(dues)
        if now - due <= stale_s:
            return "ok" if seen is not None else "idle"
        last_claim = (
            tasks.exclude(started_at=None)
            .order_by("-started_at")
            .values_list("started_at", flat=True)
            .first()
        )
        evidence = [
            due,
            *([last_claim.timestamp()] if last_claim else []),
            *([seen] if seen else []),
        ]
        return f"not seen for {now - max(evidence):.0f} s"
    if seen is not None:
        return f"not seen for {now - seen:.0f} s"
    return "not seen" if shared else "idle"


def _graded_lately() -> dict:
    """Who graded the newest graded answer and when, and when the model last graded: what the
    database says of the grader when no health answer is at hand (read only)."""
    newest = (
        Submission.objects.filter(
            grade_status__in=[Submission.GradeStatus.DONE, Submission.GradeStatus.OFFLINE]
        )
        .order_by("-status_changed_at")
        .values_list("pk", "status_changed_at")
        .first()
    )
    # Newest by primary key: there is no index on the grade's time, and ids grow with it.
    model_graded_at = (
        Grade.objects.filter(grader="llm")
        .order_by("-pk")
        .values_list("created_at", flat=True)
        .first()
    )
    if newest is None:
        return {"model_graded_at": model_graded_at}
    pk, graded_at = newest
    by_model = Grade.objects.filter(submission_id=pk, grader="llm").exists()
    return {
        "newest_graded_at": graded_at,
        "newest_graded_by": "model" if by_model else "offline",
        "model_graded_at": model_graded_at,
    }


def server_status(config: GraderConfig, *, cache: HealthCache) -> ServerStatus:
    """Ask the model server now what it serves and how busy it is (staff only: it waits).

    The model list goes through the health check, so a staff visit also refreshes the answer
    the public part and the grading task read. The details are skipped when that check got no
    answer at all, so a silent server costs a visit one timeout, not two.
    """
    status = ServerStatus(
        endpoint=config.endpoint, model=config.model, configured=config.configured
    )
    if not config.configured:
        status.reason = "No GRADER_BASE_URL is set: candidates self-check every answer."
        return status
    health = check_health(config, cache=cache)
    status.reachable, status.reason = health.up, health.reason
    if health.unreachable:
        # The server just failed to answer at all (refused, or silent past the health
        # check's limit): asking it for details would only add their own timeout to the visit.
        return status
    client = client_for(config).with_options(timeout=DETAILS_TIMEOUT_S, max_retries=0)
    root = server_root(config)
    try:
        status.served_models = [str(m.id) for m in client.models.list().data]
        version = client.get(f"{root}/version", cast_to=object)
        if isinstance(version, dict):
            status.version = str(version.get("version", ""))
        _read_metrics(status, parse_metrics(client.get(f"{root}/metrics", cast_to=str)))
    except (openai.APIError, ValueError, TypeError, AttributeError) as exc:
        # The health answer above already says whether grading works; details are optional.
        status.reason = status.reason or f"details unavailable ({type(exc).__name__})"
    return status


def _read_metrics(status: ServerStatus, m: dict[str, float]) -> None:
    status.waiting = m.get("vllm:num_requests_waiting")
    status.running = m.get("vllm:num_requests_running")
    usage = m.get("vllm:kv_cache_usage_perc", m.get("vllm:gpu_cache_usage_perc"))
    status.kv_cache_usage = usage
    queries, hits = prefix_cache_counters(m)
    if queries:
        status.prefix_cache_hit_rate = hits / queries


def grading_latencies(*, days: int = 1, limit: int = 1000) -> list[dict]:
    """p50/p90/p99 grading latency (ms) per grader over the last `days`, newest `limit` each."""
    since = timezone.now() - timedelta(days=days)
    rows = []
    for grader in ("llm", "rubric"):
        values = list(
            Grade.objects.filter(grader=grader, created_at__gte=since)
            .order_by("-created_at")
            .values_list("latency_ms", flat=True)[:limit]
        )
        rows.append(
            {
                "grader": grader,
                "count": len(values),
                **{f"p{q}": percentile(values, q) for q in (50, 90, 99)},
            }
        )
    return rows
