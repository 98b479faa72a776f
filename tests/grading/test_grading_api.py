"""The public API around the graders: configuration, health check, in-flight cap, modes."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings

from grading import (
    GraderConfig,
    TTLCache,
    grade,
    grader_inflight,
    model_is_up,
)
from grading.fake_server import FakeChatServer, ScriptedReply, grade_content, response_ids
from grading.health import health_cache_key, last_health, mark_model_down, probe_model
from grading.inflight import GateTimeout, InflightGate

# --- configuration ----------------------------------------------------------------------------


def test_config_from_empty_settings_has_the_documented_defaults():
    config = GraderConfig.from_settings({name: "" for name in settings.GRADER})
    assert config.base_url == "" and not config.configured
    assert config.model == "Qwen/Qwen2.5-7B-Instruct"
    assert config.api_key == ""
    assert config.max_inflight == 8
    assert config.timeout_s > 0 and config.max_retries >= 0


def test_config_reads_every_setting():
    values = {
        "GRADER_BASE_URL": " http://127.0.0.1:8001/v1/ ",
        "GRADER_MODEL": "Qwen/Qwen2.5-7B-Instruct-AWQ",
        "GRADER_API_KEY": "k",
        "GRADER_TIMEOUT_S": "12.5",
        "GRADER_MAX_INFLIGHT": "3",
        "GRADER_MAX_RETRIES": "0",
        "GRADER_HEALTH_TTL_S": "5",
        "GRADER_MAX_TOKENS": "900",
    }
    assert set(values) == set(settings.GRADER)  # settings reads exactly these
    config = GraderConfig.from_settings(values)
    assert config.endpoint == "http://127.0.0.1:8001/v1"
    assert config.model == "Qwen/Qwen2.5-7B-Instruct-AWQ" and config.api_key == "k"
    assert (config.timeout_s, config.max_inflight, config.max_retries) == (12.5, 3, 0)
    assert (config.health_ttl_s, config.max_output_tokens) == (5.0, 900)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GRADER_TIMEOUT_S", "soon"),
        ("GRADER_MAX_INFLIGHT", "0"),
        ("GRADER_MAX_RETRIES", "-1"),
        ("GRADER_MAX_RETRIES", "50"),  # retries are capped, the client's own too
    ],
)
def test_a_malformed_number_is_refused_naming_the_setting(name, value):
    with pytest.raises(ValueError, match=name):
        GraderConfig.from_settings({name: value})


def test_an_unknown_mode_is_refused(fixture_question):
    with pytest.raises(ValueError, match="mode"):
        grade(fixture_question["steps"]["architecture"], "x", mode="fast")  # type: ignore[arg-type]


# --- health check ------------------------------------------------------------------------------


class RecordingCache:
    """A cache with Django's get/set signature that records what the health check stores."""

    def __init__(self) -> None:
        self.values: dict[str, object] = {}
        self.timeouts: dict[str, float | None] = {}

    def get(self, key, default=None):
        return self.values.get(key, default)

    def set(self, key, value, timeout=None):
        self.values[key] = value
        self.timeouts[key] = timeout


def test_health_check_uses_an_injected_cache(fake_server):
    config = GraderConfig(base_url=fake_server.base_url, health_ttl_s=7)
    cache = RecordingCache()
    assert model_is_up(config, cache=cache)
    assert model_is_up(config, cache=cache)
    assert fake_server.get_paths.count("/v1/models") == 1
    [stored] = cache.values.values()
    assert stored["up"] is True and stored["reason"] == ""


def test_health_check_expires_after_its_ttl(fake_server):
    config = GraderConfig(base_url=fake_server.base_url, health_ttl_s=60)
    cache = TTLCache()
    assert model_is_up(config, cache=cache)
    fake_server.model_list_status = 503
    assert model_is_up(config, cache=cache)  # still the cached answer
    # The stored answer is aged past the TTL rather than slept past it, so no stall of a
    # loaded machine expires it before the check above.
    key = health_cache_key(config)
    cache.set(key, {**cache.get(key), "checked_at": time.time() - 61})
    assert not model_is_up(config, cache=cache)


def test_health_check_says_why_the_model_is_down(fake_server):
    assert probe_model(GraderConfig(base_url="")) == (False, "no GRADER_BASE_URL configured")
    up, reason = probe_model(GraderConfig(base_url=fake_server.base_url, model="other/model"))
    assert not up and "not served" in reason and fake_server.model in reason
    fake_server.model_list_status = 500
    up, reason = probe_model(GraderConfig(base_url=fake_server.base_url))
    assert not up and "HTTP 500" in reason


def test_the_last_health_answer_is_read_without_asking_the_server(fake_server):
    config = GraderConfig(base_url=fake_server.base_url)
    cache = TTLCache()
    assert last_health(config, cache=cache) is None  # never checked: unknown, not "down"
    fake_server.model_list_status = 503
    assert not model_is_up(config, cache=cache)
    asked = list(fake_server.get_paths)
    last = last_health(config, cache=cache)
    assert last is not None and not last.up and "HTTP 503" in last.reason
    assert fake_server.get_paths == asked


def test_a_failed_grading_call_is_remembered_with_its_reason(fake_server):
    config = GraderConfig(base_url=fake_server.base_url)
    cache = TTLCache()
    mark_model_down(config, "model timed out after 60s", cache=cache)
    assert not model_is_up(config, cache=cache)
    assert last_health(config, cache=cache).reason == "model timed out after 60s"
    assert fake_server.get_paths == []


def test_without_an_endpoint_the_model_is_never_up():
    assert not model_is_up(GraderConfig(base_url=""))


# --- in-flight cap -------------------------------------------------------------------------------


def test_the_gate_never_admits_more_than_its_limit():
    gate = InflightGate(3)
    barrier = threading.Barrier(10)

    def hold():
        barrier.wait()
        with gate.slot(timeout=5):
            time.sleep(0.05)

    with ThreadPoolExecutor(10) as pool:
        list(pool.map(lambda _: hold(), range(10)))
    assert gate.max_seen == 3 and gate.current == 0


def test_the_gate_times_out_when_no_slot_frees():
    gate = InflightGate(1)
    with gate.slot(), pytest.raises(GateTimeout):
        with gate.slot(timeout=0.05):
            pass
    assert gate.current == 0


def test_every_model_request_passes_the_endpoint_gate(fixture_question):
    step = fixture_question["steps"]["architecture"]

    def slow_grade(request):
        return ScriptedReply(
            content=grade_content(
                [
                    {"id": i, "evidence": "", "verdict": "miss", "comment": ""}
                    for i in response_ids(request)
                ]
            ),
            delay_s=0.1,
        )

    with FakeChatServer(slow_grade) as server:
        config = GraderConfig(base_url=server.base_url, max_inflight=2, max_retries=0)
        with ThreadPoolExecutor(8) as pool:
            results = list(
                pool.map(lambda _: grade(step, "x", mode="llm", config=config), range(8))
            )
        stats = grader_inflight(config)
        assert all(r.grader == "llm" for r in results)
        assert server.max_concurrent <= 2
        assert stats.max_seen == 2 and stats.limit == 2 and stats.current == 0


def test_a_full_gate_falls_back_instead_of_waiting_forever(fixture_question):
    step = fixture_question["steps"]["architecture"]
    with FakeChatServer(lambda request: ScriptedReply(content="{}", delay_s=1.0)) as server:
        config = GraderConfig(
            base_url=server.base_url, max_inflight=1, max_retries=0, queue_timeout_s=0.1
        )
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(grade, step, "x", mode="llm", config=config)
            deadline = time.monotonic() + 10
            while grader_inflight(config).current < 1:  # the first grading holds the one slot
                assert time.monotonic() < deadline, "the first grading never took the slot"
                time.sleep(0.01)
            second = grade(step, "x", mode="llm", config=config)
            first.result()
    assert second.fallback_reason.startswith("grader busy")


def test_a_page_that_is_not_json_marks_the_model_down(fixture_question):
    # A proxy's error page answered with 200 where the model should be: the next gradings go
    # offline at once instead of each waiting on it, and /grader/ says why.
    step = fixture_question["steps"]["architecture"]
    page = "<html><body>502 Bad Gateway</body></html>"
    with FakeChatServer(lambda request: ScriptedReply(raw_body=page)) as server:
        config = GraderConfig(base_url=server.base_url, max_retries=0)
        cache = TTLCache()
        result = grade(step, "x", mode="llm", config=config, cache=cache)
        assert "not JSON" in result.fallback_reason
        last = last_health(config, cache=cache)
        assert last is not None and not last.up and "not JSON" in last.reason
