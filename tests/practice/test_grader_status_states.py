"""/grader/ in each state the model server can be in, as staff and as a candidate.

Staff are told how to start the grader and what picks it up; candidates are told in plain
words whether the model grades their answers, without operator commands or settings.
"""

import socket
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from grading import GraderConfig, mark_model_down
from grading.fake_server import FakeChatServer


@pytest.fixture
def staff_client(db):
    staff = Client()
    staff.force_login(User.objects.create_user("ops", password="ops-Passphrase-1", is_staff=True))
    return staff


@pytest.fixture
def candidate_client(db):
    candidate = Client()
    candidate.force_login(User.objects.create_user("cand", password="cand-Passphrase-1"))
    return candidate


@pytest.fixture
def no_model(settings):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": ""}


@pytest.fixture
def silent_server(settings):
    """A local socket that accepts connections (the kernel completes each handshake) and never
    replies. Yields a function counting the connections made so far."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    # The health check's limit is min(3 s, GRADER_TIMEOUT_S): short, so the test is quick.
    settings.GRADER = {
        **settings.GRADER,
        "GRADER_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "GRADER_TIMEOUT_S": "0.3",
    }
    held: list[socket.socket] = []

    def connections() -> int:
        # Every handshake the kernel completed waits in the backlog (closed ones too) until
        # accepted: draining it counts them all, with no thread racing the client.
        listener.setblocking(False)
        while True:
            try:
                held.append(listener.accept()[0])
            except BlockingIOError:
                return len(held)

    yield connections
    for conn in held:
        conn.close()
    listener.close()


def section(html: str, start: str, end: str) -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


# --- how to start the grader --------------------------------------------------------------------


@pytest.mark.django_db
def test_staff_without_a_configured_model_are_told_to_run_make_grader(staff_client, no_model):
    html = staff_client.get("/grader/").content.decode()
    staff = html.split("Details (staff only)", 1)[1]
    assert "<code>make grader</code>" in staff
    # `make run` looks for it only when it starts: restart it, or set GRADER_BASE_URL.
    assert "restart <code>make run</code>" in staff
    assert "<code>GRADER_BASE_URL</code>" in staff


@pytest.mark.django_db
def test_staff_with_an_unreachable_model_are_told_to_start_it(staff_client, settings):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": "http://127.0.0.1:9/v1"}
    html = staff_client.get("/grader/").content.decode()
    staff = html.split("Details (staff only)", 1)[1]
    assert "<code>make grader</code>" in staff
    # GRADER_BASE_URL is set, so the running app picks the server up with no restart.
    assert "no restart" in staff


@pytest.mark.django_db
def test_staff_with_a_model_up_get_no_start_advice(staff_client, settings):
    with FakeChatServer() as server:
        settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": server.base_url}
        html = staff_client.get("/grader/").content.decode()
    assert "make grader" not in html


@pytest.mark.django_db
@pytest.mark.parametrize("base_url", ["", "http://127.0.0.1:9/v1"])
def test_candidates_are_told_plainly_they_self_check_for_now(
    candidate_client, client, settings, base_url
):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": base_url}
    if base_url:
        mark_model_down(
            GraderConfig(base_url=base_url), "unreachable (APIConnectionError)", cache=cache
        )
    for visitor in (candidate_client, client):
        html = visitor.get("/grader/").content.decode()
        assert "Your answers are self-checked against the rubric for now" in html
        assert "make grader" not in html and "GRADER_BASE_URL" not in html


# --- a server that accepts and never replies ------------------------------------------------------


@pytest.mark.django_db
def test_staff_visit_skips_the_details_when_the_health_check_timed_out(staff_client, silent_server):
    html = staff_client.get("/grader/").content.decode()
    assert "unreachable (APITimeoutError)" in html
    # One connection: the health check's. The details would have opened a second and waited
    # their own 2 s on a server that just failed to answer.
    assert silent_server() == 1


# --- without a shared cache ---------------------------------------------------------------------


@pytest.mark.django_db
def test_candidates_without_a_shared_cache_see_no_operator_jargon(
    candidate_client, client, settings
):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": "http://127.0.0.1:9/v1"}
    for visitor in (candidate_client, client):
        html = visitor.get("/grader/").content.decode()
        state = section(html, "<dt>State</dt>", "</dd>")
        assert "web process" not in state and "live check" not in state, state
        assert "not known yet" in state, state  # nothing graded yet: nothing to go by
        assert "REDIS_URL" not in html and "processes" not in html


@pytest.mark.django_db
def test_staff_get_the_shared_cache_advice_in_their_section(staff_client, settings):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": "http://127.0.0.1:9/v1"}
    html = staff_client.get("/grader/").content.decode()
    public, staff = html.split("Details (staff only)", 1)
    assert "REDIS_URL" not in public
    assert "<code>REDIS_URL</code>" in staff


# --- nothing configured ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_staff_without_a_configured_model_see_not_configured_not_a_fault(staff_client, no_model):
    html = staff_client.get("/grader/").content.decode()
    reachable = section(html, "<dt>Reachable</dt>", "</dd>")
    assert "verdict-wrong" not in reachable and reachable.endswith(">not configured"), reachable
    model = section(html, "<dt>Model</dt>", "</dd>")
    assert model.endswith(">none configured"), model


# --- how long ago -------------------------------------------------------------------------------


def test_under_a_minute_ago_reads_just_now():
    from practice.grader_status import ago

    now = timezone.now()
    assert ago(now - timedelta(seconds=59), now=now) == "just now"
    assert ago(now + timedelta(seconds=2), now=now) == "just now"  # a clock a little ahead
    assert ago(now - timedelta(minutes=2), now=now) == "2\xa0minutes ago"


@pytest.mark.django_db
def test_a_health_answer_stored_seconds_ago_was_checked_just_now(client, settings):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": "http://127.0.0.1:9/v1"}
    mark_model_down(GraderConfig(base_url="http://127.0.0.1:9/v1"), "unreachable", cache=cache)
    html = client.get("/grader/").content.decode()
    checked = section(html, "<dt>Last checked</dt>", "</dd>")
    assert ">just now</time>" in checked, checked


def test_an_answer_queued_seconds_ago_has_waited_under_a_minute():
    from practice.grader_status import PublicStatus

    def status(queued_at):
        return PublicStatus("up", None, 1, 0, 0, oldest_queued_at=queued_at)

    now = timezone.now()
    assert status(now - timedelta(seconds=20)).oldest_queued_for == "under a minute"
    assert status(now - timedelta(hours=2, seconds=5)).oldest_queued_for == "2\xa0hours"


def test_make_grader_is_offered_for_an_endpoint_on_this_machine_only():
    """`make grader` serves on this machine's loopback: for a model server elsewhere the
    advice names the endpoint to start, not a command that would not start it."""
    from practice.grader_status import ServerStatus

    def status(url: str) -> ServerStatus:
        return ServerStatus(endpoint=url, model="m", configured=True)

    assert status("http://127.0.0.1:8001/v1").on_this_machine
    assert status("http://localhost:8001/v1").on_this_machine
    assert status("http://[::1]:8001/v1").on_this_machine
    assert not status("http://gpu-box.internal:8000/v1").on_this_machine
    assert not status("https://api.example.com/v1").on_this_machine
