"""The task worker: django-tasks-db's worker loop, kept alive through database outages.

`python -m config.worker` (what `make run` starts; run any number of them, on any machines
that share the database). The stock `db_worker` exits on the first database error; this one
logs it, waits (1 s, doubling to 30 s) and goes on, so a database that comes back needs no
human. Every RECLAIM_EVERY_S (and at start) it also asks the model server how it is and
stores the answer for /grader/. Before each start, and every RECLAIM_EVERY_S, it reclaims
task rows left RUNNING by a worker that is gone, and queues their tasks again (grading is
safe to run twice):
- a worker on this machine whose process no longer exists, at once;
- any worker, once its row has been running longer than TASK_LEASE_S (another machine's
  worker cannot be asked whether it is alive).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from datetime import timedelta

import django

log = logging.getLogger("config.worker")

RECLAIM_EVERY_S = float(os.environ.get("WORKER_RECLAIM_EVERY_S", "30"))
SWEEP_EVERY_S = float(os.environ.get("WORKER_SWEEP_EVERY_S", "60"))
TASK_LEASE_S = float(os.environ.get("TASK_LEASE_S", "900"))
BACKOFF_MAX_S = float(os.environ.get("WORKER_BACKOFF_MAX_S", "30"))


def worker_id() -> str:
    """host:pid, so that a worker on the same machine can tell whether this one still runs."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _gone(claimed_by: str, host: str) -> bool:
    name, _, pid = claimed_by.rpartition(":")
    if name != host or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, someone else's
        return False
    return False


def tasks_reclaim(*, lease_s: float = TASK_LEASE_S, stopped: str = "") -> int:
    """Mark task rows whose worker is gone (or is `stopped`, a worker id that has given up its
    task) as failed and enqueue each task again; returns how many. A row another reclaimer got
    to first is left to it."""
    from django.tasks import TaskResultStatus
    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    host = socket.gethostname()
    expired = timezone.now() - timedelta(seconds=lease_s)
    reclaimed = 0
    for row in DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING):
        last = row.worker_ids[-1] if row.worker_ids else ""
        expired_lease = row.started_at is not None and row.started_at < expired
        if not (last == stopped or _gone(last, host) or expired_lease):
            continue
        claimed = DBTaskResult.objects.filter(
            pk=row.pk, status=TaskResultStatus.RUNNING, worker_ids=row.worker_ids
        ).update(
            status=TaskResultStatus.FAILED,
            finished_at=timezone.now(),
            exception_class_path="config.worker.WorkerLost",
            traceback=f"worker {last} stopped while running this task",
        )
        if not claimed:
            continue
        log.warning("reclaimed task %s (%s) from worker %s", row.pk, row.task_path, last)
        row.task.enqueue(*row.args_kwargs["args"], **row.args_kwargs["kwargs"])
        reclaimed += 1
    return reclaimed


def housekeeping() -> None:
    """What nobody's request would do: queue again a submission whose grading task was lost
    (a queue write that failed), and end a mock interview past its time that nobody is
    looking at (its answers are submitted as they stood and graded). Every worker runs it;
    both steps are safe to run at once in several processes."""
    from mocks.services import mock_sweep
    from practice.services import grading_requeue_stale

    requeued = grading_requeue_stale(older_than_s=300)
    ended = mock_sweep()
    if requeued or ended:
        log.info(
            "housekeeping: %d submission(s) re-queued, %d mock session(s) ended", requeued, ended
        )


def grader_check() -> None:
    """Ask the model server whether it serves our model and store the answer in the cache
    the web processes read (/grader/, and the grading task's routing). Without it only a
    grading asks, so a server that died after its last grade stayed "up" on the page, and one
    down when the app started stayed "not checked yet", until someone submitted an answer."""
    from django.conf import settings
    from django.core.cache import cache

    from grading import GraderConfig, check_health

    try:
        config = GraderConfig.from_settings(settings.GRADER)
    except ValueError:
        return  # the grading task says so on every grade, and /grader/ to staff
    if config.configured:
        check_health(config, cache=cache)


def heartbeat() -> None:
    """Store "a worker ran now" for /healthz and /grader/ (practice.grader_status reads it); a
    cache that is down only loses a beat."""
    from practice.grader_status import worker_heartbeat

    try:
        worker_heartbeat(round_s=RECLAIM_EVERY_S, lease_s=TASK_LEASE_S)
    except Exception as exc:
        log.warning("could not store the worker's heartbeat (%s)", type(exc).__name__)


def periodic(last_sweep: float) -> float:
    """One round of the reclaim thread: reclaim lost tasks, check the model server, and sweep
    once SWEEP_EVERY_S has passed since `last_sweep`. Returns when the last sweep ran."""
    heartbeat()
    tasks_reclaim()
    try:
        grader_check()
    except Exception as exc:  # a shared cache that is down: the next round tries again
        log.warning("could not store the model server's health (%s)", type(exc).__name__)
    if time.monotonic() - last_sweep >= SWEEP_EVERY_S:
        housekeeping()
        last_sweep = time.monotonic()
    return last_sweep


def configure_logging() -> None:
    """One line per record, stamped "worker", at INFO (after django.setup()). The settings'
    root handler would make basicConfig a no-op, and with DEBUG Django's own console handler
    on the "django" logger printed each "Task id=... state=..." a second time."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s worker %(message)s", force=True)
    django_logger = logging.getLogger("django")
    for handler in list(django_logger.handlers):
        if type(handler) is logging.StreamHandler:  # the root's handler prints these already
            django_logger.removeHandler(handler)


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.db import DatabaseError, close_old_connections, connections
    from django_tasks_db.management.commands.db_worker import Worker

    configure_logging()
    worker = Worker(
        queue_names=["*"],
        interval=float(os.environ.get("WORKER_INTERVAL_S", "0.5")),
        batch=False,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id=worker_id(),
        excluded_queue_names=[],
    )
    worker.configure_signals()  # first signal: finish the current task, then exit

    def reclaim_forever() -> None:
        last_sweep = time.monotonic()
        heartbeat()
        try:
            grader_check()  # at once: /grader/ knows how the model server is from the start
        except Exception as exc:
            log.warning("could not store the model server's health (%s)", type(exc).__name__)
        while True:
            time.sleep(RECLAIM_EVERY_S)
            try:
                last_sweep = periodic(last_sweep)
            except DatabaseError:
                log.warning("could not reclaim tasks or sweep: database unavailable")
            finally:
                close_old_connections()

    threading.Thread(target=reclaim_forever, daemon=True).start()
    backoff = 1.0
    while worker.running:
        started = time.monotonic()
        try:
            # Between runs this worker holds no task: a row still RUNNING under its id was cut
            # off by a database error, and runs again.
            tasks_reclaim(stopped=worker.worker_id)
            worker.run()
        except DatabaseError as exc:
            if time.monotonic() - started > 60:
                backoff = 1.0  # it ran a while: this is a new outage, not the same one
            log.warning("database error (%s); retrying in %.0f s", exc, backoff)
            connections.close_all()
            time.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX_S)
    return 0


if __name__ == "__main__":
    sys.exit(main())
