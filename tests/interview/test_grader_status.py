"""/grader/: the configured endpoint, reachability, served models, live queue, our queue."""

import pytest

from interview.grader_status import parse_metrics, percentile
from interview.grading.testing import FakeChatServer
from interview.models import Grade, Question


@pytest.mark.django_db
def test_without_a_model_the_page_says_grading_is_offline(client, monkeypatch):
    monkeypatch.delenv("GRADER_BASE_URL", raising=False)
    html = client.get("/grader/").content.decode()
    assert "not configured" in html
    assert "every answer is graded offline" in html


@pytest.mark.django_db
def test_a_reachable_server_shows_models_version_and_live_queue(client, monkeypatch):
    with FakeChatServer() as server:
        server.prefix_cache.queries, server.prefix_cache.hits = 400, 300
        base_url = server.base_url
        monkeypatch.setenv("GRADER_BASE_URL", base_url)
        html = client.get("/grader/").content.decode()
    assert base_url in html
    assert "Qwen/Qwen2.5-7B-Instruct" in html
    assert "verdict-correct" in html  # reachable: yes
    assert "75%" in html  # prefix-cache hit rate from /metrics
    assert {"/v1/models", "/version", "/metrics"} <= set(server.get_paths)


@pytest.mark.django_db
def test_an_unreachable_server_is_reported_not_raised(client, monkeypatch):
    monkeypatch.setenv("GRADER_BASE_URL", "http://127.0.0.1:9/v1")
    response = client.get("/grader/")
    assert response.status_code == 200
    assert "unreachable" in response.content.decode()


@pytest.mark.django_db
def test_a_malformed_setting_is_shown_as_an_error(client, monkeypatch):
    monkeypatch.setenv("GRADER_MAX_INFLIGHT", "lots")
    response = client.get("/grader/")
    assert response.status_code == 200
    assert "GRADER_MAX_INFLIGHT" in response.content.decode()


def test_parse_metrics_sums_label_sets_and_skips_comments():
    text = (
        "# HELP vllm:num_requests_waiting waiting\n"
        'vllm:num_requests_waiting{model_name="a"} 2.0\n'
        'vllm:num_requests_waiting{model_name="b"} 3.0\n'
        "vllm:kv_cache_usage_perc 0.25\n"
        "garbage line\n"
    )
    metrics = parse_metrics(text)
    assert metrics["vllm:num_requests_waiting"] == 5.0
    assert metrics["vllm:kv_cache_usage_perc"] == 0.25


def test_percentiles_by_nearest_rank():
    values = list(range(1, 101))
    assert percentile(values, 50) == 50
    assert percentile(values, 99) == 99
    assert percentile([], 50) is None


@pytest.mark.django_db
def test_latency_percentiles_come_from_stored_grades(client, content_loaded, django_user_model):
    from interview import flow

    user = django_user_model.objects.create_user("lat", password="lat-Passphrase-1")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    sub = flow.step_submit(
        answer=answer, text="A prefix-aware router.", fields={}, base_version=0
    ).submission
    Grade.objects.create(submission=sub, grader="rubric", score=0.5, latency_ms=3.0)
    html = client.get("/grader/").content.decode()
    assert "3 ms" in html
