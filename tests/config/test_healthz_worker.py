"""/healthz says whether the task worker is alive, from evidence: its heartbeat in a shared
cache, and tasks due that nobody claims. A dead worker leaves it 200 (the site still serves),
with "worker": "not seen for N s"."""

import time
from datetime import timedelta

import pytest
from django.tasks import TaskResultStatus
from django.test import override_settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from config import worker
from practice.grader_status import WORKER_SEEN_KEY, worker_state


@pytest.fixture
def shared_cache(tmp_path):
    """A cache every process sees (a file-based one stands in for Redis)."""
    caches = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "cache"),
        }
    }
    with override_settings(CACHES=caches):
        yield


def waiting_task(*, age_s: float, status=TaskResultStatus.READY, started_s: float | None = None):
    row = DBTaskResult.objects.create(
        status=status,
        args_kwargs={"args": [1], "kwargs": {}},
        task_path="practice.services.grade_submission",
        backend_name="default",
        queue_name="grading",
        run_after=get_date_max(),
    )
    now = timezone.now()
    DBTaskResult.objects.filter(pk=row.pk).update(
        enqueued_at=now - timedelta(seconds=age_s),
        started_at=None if started_s is None else now - timedelta(seconds=started_s),
    )
    return row


@pytest.mark.django_db
def test_a_task_nobody_claims_shows_the_worker_not_seen_with_status_200(client):
    waiting_task(age_s=600)
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert body["worker"].startswith("not seen for ")
    seconds = int(body["worker"].removeprefix("not seen for ").removesuffix(" s"))
    assert 590 <= seconds <= 660


@pytest.mark.django_db
def test_the_last_claim_counts_as_the_worker_seen():
    waiting_task(age_s=500, status=TaskResultStatus.SUCCESSFUL, started_s=100)
    waiting_task(age_s=600)
    assert worker_state().startswith("not seen for 10")  # the claim 100 s ago, not 600


@pytest.mark.django_db
def test_a_task_just_queued_or_running_is_no_evidence_against_the_worker():
    waiting_task(age_s=1)
    assert worker_state() == "idle"
    waiting_task(age_s=600, status=TaskResultStatus.RUNNING, started_s=600)
    waiting_task(age_s=600)
    assert worker_state() == "ok"


@pytest.mark.django_db
def test_the_heartbeat_in_a_shared_cache_says_ok_then_not_seen(shared_cache, client):
    assert worker_state() == "not seen"  # a shared cache, and no worker wrote to it
    worker.heartbeat()
    assert client.get("/healthz").json()["worker"] == "ok"
    later = time.time() + 1000
    assert worker_state(now=later).startswith("not seen for 100")


@pytest.mark.django_db
def test_the_worker_beats_each_round(shared_cache, monkeypatch):
    from django.core.cache import cache

    monkeypatch.setattr(worker, "grader_check", lambda: None)
    monkeypatch.setattr(worker, "housekeeping", lambda: None)
    worker.periodic(time.monotonic())
    beat = cache.get(WORKER_SEEN_KEY)
    assert time.time() - beat["at"] < 5 and beat["round_s"] == worker.RECLAIM_EVERY_S


@pytest.mark.django_db
def test_a_task_left_running_by_a_worker_whose_heartbeat_stopped_is_no_sign_of_life(
    shared_cache,
):
    """A worker killed mid-task leaves its task "running": that read as "ok" for ever."""
    worker.heartbeat()
    waiting_task(age_s=60, status=TaskResultStatus.RUNNING, started_s=60)
    assert worker_state() == "ok"
    assert worker_state(now=time.time() + 1000).startswith("not seen for 100")


@pytest.mark.django_db
def test_without_a_heartbeat_a_task_running_past_its_lease_is_no_sign_of_life():
    waiting_task(age_s=2000, status=TaskResultStatus.RUNNING, started_s=2000)
    assert worker_state() == "idle"  # nothing else waits: no evidence either way
    waiting_task(age_s=600)
    assert worker_state().startswith("not seen for ")


@pytest.mark.django_db
def test_a_retry_enqueued_long_ago_does_not_hide_a_task_waiting_longer():
    """The oldest enqueued task was taken as the longest waiting, but a retry held back by
    its backoff falls due long after it was enqueued."""
    retry = waiting_task(age_s=7200)
    DBTaskResult.objects.filter(pk=retry.pk).update(run_after=timezone.now() - timedelta(seconds=5))
    waiting_task(age_s=1200)
    assert worker_state().startswith("not seen for 12")
