"""The worker asks the model server how it is every round of its housekeeping and stores the
answer where /grader/ reads it. Before, only a grading asked: after `make run` with a model
server that was down, or one that died after its last grade, the page said "not checked yet"
or a stale "up" until some candidate submitted an answer."""

import socket
import time

from django.core.cache import cache

from config import worker
from grading import GraderConfig, last_health
from grading.fake_server import FakeChatServer
from grading.health import _remember


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def no_db_work(monkeypatch) -> None:
    monkeypatch.setattr(worker, "tasks_reclaim", lambda **kwargs: 0)
    monkeypatch.setattr(worker, "housekeeping", lambda: None)


def test_a_round_stores_that_a_dead_model_server_is_down(settings, monkeypatch):
    no_db_work(monkeypatch)
    settings.GRADER = {"GRADER_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1"}
    config = GraderConfig.from_settings(settings.GRADER)
    _remember(config, cache, True, "")  # its last answer, from before it died
    worker.periodic(last_sweep=time.monotonic())
    health = last_health(config, cache=cache)
    assert health is not None and health.up is False
    assert "unreachable" in health.reason


def test_a_round_stores_that_a_model_server_is_up(settings, monkeypatch):
    no_db_work(monkeypatch)
    with FakeChatServer() as server:
        settings.GRADER = {"GRADER_BASE_URL": server.base_url}
        worker.periodic(last_sweep=time.monotonic())
        health = last_health(GraderConfig.from_settings(settings.GRADER), cache=cache)
    assert health is not None and health.up is True


def test_no_model_configured_or_malformed_settings_ask_nothing(settings, monkeypatch):
    no_db_work(monkeypatch)
    for grader in ({"GRADER_BASE_URL": ""}, {"GRADER_BASE_URL": "x", "GRADER_TIMEOUT_S": "?"}):
        settings.GRADER = grader
        worker.periodic(last_sweep=time.monotonic())  # no exception, nothing stored


def test_housekeeping_runs_once_its_interval_has_passed(settings, monkeypatch):
    ran = []
    monkeypatch.setattr(worker, "tasks_reclaim", lambda **kwargs: 0)
    monkeypatch.setattr(worker, "housekeeping", lambda: ran.append(1))
    settings.GRADER = {"GRADER_BASE_URL": ""}
    now = time.monotonic()
    assert worker.periodic(last_sweep=now) == now and not ran
    assert worker.periodic(last_sweep=now - worker.SWEEP_EVERY_S - 1) > now - 1 and ran
