"""A session with a person starts its clock when the interviewer joins, or when the candidate
chooses to start alone; until then it waits: no time runs, nothing warns or ends it, and no
answer is written off the clock. The app as interviewer starts at once."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from mocks import report as mock_report
from mocks import services as mock
from mocks.log import Kind
from mocks.models import MockSession
from practice import services as flow
from questions.models import Question
from tests.mocks.conftest import client_for


@pytest.fixture
def waiting(people):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    return mock.mock_session_start(user=people["candidate"], revision=revision, mode="human")


def test_a_session_with_a_person_waits_for_the_interviewer(people, waiting):
    assert waiting.started_at is None
    later = timezone.now() + timedelta(hours=3)  # far past the 45 minutes
    clock = mock.session_tick(waiting, now=later)
    assert clock.total_left_s == 45 * 60 and not clock.started
    assert mock.mock_sweep(now=later) == 0
    waiting.refresh_from_db()
    assert waiting.ended_at is None
    assert not waiting.events.filter(kind__in=[Kind.TIME_WARNING, Kind.ENDED]).exists()

    client = client_for(people["candidate"])
    page = client.get(reverse("mock_session", kwargs={"session_id": waiting.pk})).content.decode()
    assert "Waiting for your interviewer" in page
    assert "data-seconds-left" not in page  # no countdown while the time does not run
    assert "Start without your interviewer" in page
    panel = reverse("mock_panel", kwargs={"session_id": waiting.pk}) + "?step=clarify"
    html = client.get(panel).content.decode()
    assert "has not started" in html and "data-seconds-left" not in html

    # Nothing is written off the clock.
    answer = flow.answer_open(attempt=waiting.attempt, step_key="clarify")
    with pytest.raises(flow.FlowError, match="not started"):
        flow.draft_save(answer=answer, text="Peak 50 QPS.", fields={}, base_version=0)


def test_the_clock_starts_when_the_interviewer_joins(people, waiting):
    joined = timezone.now()
    mock.invite_accept(
        session_id=waiting.pk,
        token=mock.invite_token(waiting),
        user=people["interviewer"],
        now=joined,
    )
    waiting.refresh_from_db()
    assert waiting.started_at == joined
    clock = mock.session_clock(waiting, now=joined + timedelta(minutes=1))
    assert clock.started and clock.total_left_s == 44 * 60
    assert clock.used_by_step["clarify"] == 60  # the wait before the join is not counted
    page = client_for(people["candidate"]).get(
        reverse("mock_session", kwargs={"session_id": waiting.pk})
    )
    assert "data-seconds-left" in page.content.decode()


def test_the_candidate_may_start_alone(people, waiting):
    client = client_for(people["candidate"])
    start = reverse("mock_start_alone", kwargs={"session_id": waiting.pk})
    assert client_for(people["interviewer"]).post(start).status_code == 404
    response = client.post(start)
    assert response.status_code == 302
    waiting.refresh_from_db()
    assert waiting.started_at is not None
    assert waiting.events.filter(kind=Kind.STARTED).count() == 1
    page = client.get(reverse("mock_session", kwargs={"session_id": waiting.pk})).content.decode()
    assert "data-seconds-left" in page and "Start without your interviewer" not in page
    assert client.post(start).status_code == 302  # a second press changes nothing
    assert waiting.events.filter(kind=Kind.STARTED).count() == 1
    transcript = [t["text"] for t in mock_report.transcript(waiting)]
    assert any("started without" in t for t in transcript)
    # The interviewer may still join later; the clock keeps running from the start.
    started = waiting.started_at
    mock.invite_accept(
        session_id=waiting.pk, token=mock.invite_token(waiting), user=people["interviewer"]
    )
    waiting.refresh_from_db()
    assert waiting.started_at == started


def test_a_session_that_never_started_can_be_ended_and_reported(people, waiting):
    mock.session_end(session=waiting, reason="ended early")
    client = client_for(people["candidate"])
    report = client.get(reverse("mock_report", kwargs={"session_id": waiting.pk}))
    assert report.status_code == 200
    md = client.get(reverse("mock_report_md", kwargs={"session_id": waiting.pk}))
    assert "| Whole session | 0:00 | 45:00 |" in md.content.decode()


def test_the_app_as_interviewer_starts_at_once(people):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
    assert session.started_at is not None
    assert MockSession.objects.get(pk=session.pk).started_at == session.started_at
