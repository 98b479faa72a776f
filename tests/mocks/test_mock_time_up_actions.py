"""Past the session's time, before any poll or sweep has ended it, the interviewer's nudge or
follow-up is refused with the reason (the candidate could no longer answer it), and the
typed text is not logged into a session that is over."""

from datetime import timedelta

import pytest
from django.urls import reverse

from mocks import services as mock
from mocks.log import Kind
from mocks.models import MockSession
from tests.mocks.conftest import client_for


@pytest.fixture
def session(joined_session):
    return joined_session


@pytest.mark.parametrize("name", ["mock_nudge", "mock_ask"])
def test_a_nudge_or_follow_up_past_the_time_is_refused_with_the_reason(session, name):
    MockSession.objects.filter(pk=session.pk).update(
        started_at=session.started_at - timedelta(minutes=session.total_minutes + 1)
    )
    us = client_for(session.interviewer)
    url = reverse(name, kwargs={"session_id": session.pk})
    response = us.post(url, {"text": "One more thing?"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "Time is up" in response.content.decode()
    assert not session.events.filter(kind__in=[Kind.NUDGE, Kind.FOLLOW_UP_ASKED]).exists()


def test_a_follow_up_is_answered_once_a_second_post_is_refused(session):
    """Back, or a second tab, could post the answered follow-up again: a second submission
    and a second line in the transcript. The first answer stands; the second is told why."""
    event = mock.follow_up_ask(session=session, text="What breaks first at twice the load?")
    follow_up_id = event.payload["follow_up_id"]
    url = reverse(
        "mock_follow_up_submit", kwargs={"session_id": session.pk, "follow_up": follow_up_id}
    )
    them = client_for(session.attempt.user)
    first = them.post(url, {"text": "The KV pool fills first.", "step": event.step_key},
                      HTTP_HX_REQUEST="true")  # fmt: skip
    assert first.status_code == 200
    again = them.post(url, {"text": "Actually the queue.", "step": event.step_key},
                      HTTP_HX_REQUEST="true")  # fmt: skip
    assert again.status_code == 422 and "answered already" in again.content.decode()
    assert session.events.filter(kind=Kind.FOLLOW_UP_ANSWERED).count() == 1
