"""/grader/: anyone sees whether the model grades and our queue; staff see the server's details.

The public part must come from the stored health answer without asking the model server
(a hung server must not hold a web worker per visit), and must not name internal hosts.
"""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from grading import GraderConfig, mark_model_down
from grading.fake_server import FakeChatServer
from grading.stats import percentile
from practice import services as flow
from practice.models import Grade, Submission
from questions.models import Question


@pytest.fixture
def model_server(settings):
    with FakeChatServer() as server:
        settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": server.base_url}
        yield server


@pytest.fixture
def staff_client(db):
    """A signed-in staff member's client (separate from `client`, the anonymous visitor)."""
    staff = Client()
    staff.force_login(User.objects.create_user("ops", password="ops-Passphrase-1", is_staff=True))
    return staff


def submit(text: str = "A prefix-aware router."):
    user = User.objects.create_user(f"c{User.objects.count()}", password="c-Passphrase-1")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    return flow.step_submit(answer=answer, text=text, fields={}, base_version=0).submission


# --- the public part ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_without_a_model_the_page_says_grading_is_offline(client, settings):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": ""}
    html = client.get("/grader/").content.decode()
    assert "not configured: candidates self-check every answer" in html
    # Nothing will grade them later: the page does not promise it.
    assert "No model grader is configured here" in html
    assert "once it answers" not in html and "once it is back" not in html


@pytest.mark.django_db
def test_the_public_page_never_asks_the_model_server(client, model_server):
    model_server.latency_s = 30  # a hung server: any request from the view would hang too
    html = client.get("/grader/").content.decode()
    assert "not known yet: no answer has been graded here so far" in html
    assert model_server.get_paths == [] and model_server.requests == []


@pytest.mark.django_db
def test_without_a_shared_cache_the_page_shows_what_the_database_says(
    client, model_server, settings, content_loaded, django_capture_on_commit_callbacks
):
    # The test settings' cache is local memory, as under `make run` without REDIS_URL: the
    # worker's health answers live in the worker, and this process has none.
    assert settings.CACHES["default"]["BACKEND"].endswith("LocMemCache")
    with django_capture_on_commit_callbacks(execute=False):
        graded, waiting = submit("First answer."), submit("Second answer.")
    now = timezone.now()
    Submission.objects.filter(pk=graded.pk).update(
        grade_status=Submission.GradeStatus.DONE, status_changed_at=now - timedelta(minutes=5)
    )
    Grade.objects.create(submission=graded, grader="llm", score=0.5)
    Submission.objects.filter(pk=waiting.pk).update(status_changed_at=now - timedelta(hours=2))

    html = client.get("/grader/").content.decode()

    assert "not checked yet" not in html
    # Candidates get the database's word in plain terms; the cache advice is for staff.
    assert "probably up: the model graded the newest answer" in html
    assert "REDIS_URL" not in html
    assert "<dt>Newest graded answer</dt><dd>by the model, <time" in html
    assert ">5\xa0minutes ago</time>" in html
    assert "<dt>Last graded by the model</dt><dd><time" in html
    assert "<dt>Queued</dt><dd>1</dd>" in html
    assert ">2\xa0hours</time>" in html  # how long the oldest queued answer has waited
    assert model_server.requests == [] and model_server.get_paths == []


@pytest.mark.django_db
def test_an_answer_graded_offline_is_shown_as_such(
    client, model_server, content_loaded, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        sub = submit()
    Submission.objects.filter(pk=sub.pk).update(grade_status=Submission.GradeStatus.OFFLINE)
    Grade.objects.create(submission=sub, grader="rubric", score=0.0)
    html = client.get("/grader/").content.decode()
    assert "<dt>Newest graded answer</dt><dd>offline, not by the model, <time" in html
    assert "<dt>Last graded by the model</dt><dd>never</dd>" in html


@pytest.mark.django_db
def test_a_stored_health_answer_replaces_the_database_figures(client, model_server):
    mark_model_down(GraderConfig(base_url=model_server.base_url), "timed out", cache=cache)
    html = client.get("/grader/").content.decode()
    assert "down: candidates self-check for now" in html
    assert "Newest graded answer" not in html


@pytest.mark.django_db
def test_with_a_shared_cache_the_page_does_not_claim_it_is_missing(
    client, model_server, settings, tmp_path
):
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "cache"),
        },
    }
    html = client.get("/grader/").content.decode()
    assert "not checked yet" in html
    assert "not shared between processes" not in html


@pytest.mark.django_db
def test_the_public_page_shows_the_stored_health_answer_without_details(client, model_server):
    config = GraderConfig(base_url=model_server.base_url)
    mark_model_down(config, "model timed out after 60s", cache=cache)
    html = client.get("/grader/").content.decode()
    assert "down: candidates self-check for now" in html
    assert "Last checked" in html
    assert model_server.base_url not in html and "127.0.0.1" not in html
    assert "timed out" not in html  # the reason is for staff
    assert "Details (staff only)" not in html
    assert model_server.get_paths == []


@pytest.mark.django_db
def test_the_public_page_shows_our_queue(
    client, content_loaded, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        submit("First answer.")
        submit("Second answer.")
    html = client.get("/grader/").content.decode()
    assert "<dt>Queued</dt><dd>2</dd>" in html


@pytest.mark.django_db
def test_malformed_settings_show_as_down_to_the_public_and_the_error_to_staff(
    client, staff_client, settings
):
    settings.GRADER = {**settings.GRADER, "GRADER_MAX_INFLIGHT": "lots"}
    public = client.get("/grader/").content.decode()
    assert "down" in public and "GRADER_MAX_INFLIGHT" not in public
    staff = staff_client.get("/grader/")
    assert staff.status_code == 200
    assert "GRADER_MAX_INFLIGHT" in staff.content.decode()


# --- the staff details -------------------------------------------------------------------------


@pytest.mark.django_db
def test_staff_see_endpoint_models_version_and_live_queue(staff_client, model_server):
    model_server.prefix_cache.queries, model_server.prefix_cache.hits = 400, 300
    html = staff_client.get("/grader/").content.decode()
    assert model_server.base_url in html
    assert "Qwen/Qwen2.5-7B-Instruct" in html
    assert "0.32.0" in html  # /version
    assert "75%" in html  # prefix-cache hit rate from /metrics
    assert {"/v1/models", "/version", "/metrics"} <= set(model_server.get_paths)


@pytest.mark.django_db
def test_a_staff_visit_refreshes_the_answer_the_public_sees(client, staff_client, model_server):
    staff_client.get("/grader/")
    html = client.get("/grader/").content.decode()
    assert "verdict-correct" in html  # the public state says "up"
    assert model_server.base_url not in html


@pytest.mark.django_db
def test_a_staff_visit_to_a_server_that_just_died_says_down_in_both_parts(
    staff_client, model_server
):
    staff_client.get("/grader/")  # the server answers: the stored health answer says "up"
    model_server.model_list_status = 503  # then it stops answering
    html = staff_client.get("/grader/").content.decode()
    state = html.split("<dt>State</dt>", 1)[1].split("</dd>", 1)[0]
    assert "down: candidates self-check for now" in state, state
    reachable = html.split("<dt>Reachable</dt>", 1)[1].split("</dd>", 1)[0]
    assert reachable.endswith(">no"), reachable  # the details, from the same visit's check


@pytest.mark.django_db
def test_staff_see_request_counts_as_whole_numbers(staff_client, model_server):
    html = staff_client.get("/grader/").content.decode()
    waiting = html.split("<dt>Requests waiting</dt>", 1)[1].split("</dd>", 1)[0]
    assert waiting.endswith(">0"), waiting  # vLLM's gauges are floats: "0", not "0.0"


@pytest.mark.django_db
def test_an_unreachable_server_is_reported_to_staff_not_raised(staff_client, settings):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": "http://127.0.0.1:9/v1"}
    response = staff_client.get("/grader/")
    assert response.status_code == 200
    assert "unreachable" in response.content.decode()


@pytest.mark.django_db
def test_latency_percentiles_come_from_stored_grades(staff_client, content_loaded):
    sub = submit()
    Grade.objects.create(submission=sub, grader="rubric", score=0.5, latency_ms=3.0)
    html = staff_client.get("/grader/").content.decode()
    assert "3 ms" in html


# --- helpers ---------------------------------------------------------------------------------


def test_percentiles_by_nearest_rank():
    values = list(range(1, 101))
    assert percentile(values, 50) == 50
    assert percentile(values, 99) == 99
    assert percentile([], 50) is None


# --- the grading worker ---------------------------------------------------------------------


def unclaimed_task(age_s: float):
    """A grading task queued `age_s` ago that no worker has claimed."""
    from django.tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult, get_date_max

    row = DBTaskResult.objects.create(
        status=TaskResultStatus.READY,
        args_kwargs={"args": [1], "kwargs": {}},
        task_path="practice.services.grade_submission",
        backend_name="default",
        queue_name="grading",
        run_after=get_date_max(),
    )
    DBTaskResult.objects.filter(pk=row.pk).update(
        enqueued_at=timezone.now() - timedelta(seconds=age_s)
    )


def worker_row(html: str) -> str:
    return html.split('data-testid="worker-state">')[1].split("</dd>")[0]


@pytest.mark.django_db
def test_a_task_no_worker_claims_shows_the_worker_missing_and_staff_how_to_start_it(
    client, staff_client
):
    """A dead worker left the page saying "probably up" and a queue that waited, silently."""
    assert worker_row(client.get("/grader/").content.decode()) == "nothing has waited long for it"
    unclaimed_task(age_s=600)
    public = client.get("/grader/").content.decode()
    assert worker_row(public) == "not seen for 10\xa0minutes"
    assert 'class="verdict-wrong" data-testid="worker-state"' in public
    assert "they are graded once the grading worker runs again" in public
    assert 'data-testid="worker-advice"' not in public  # how to start it is for staff
    staff = staff_client.get("/grader/").content.decode()
    assert 'data-testid="worker-advice"' in staff and "python -m config.worker" in staff


@pytest.mark.django_db
def test_a_task_just_queued_is_no_evidence_against_the_worker(client):
    unclaimed_task(age_s=2)
    html = client.get("/grader/").content.decode()
    assert worker_row(html) == "nothing has waited long for it"
    assert "runs again" not in html
