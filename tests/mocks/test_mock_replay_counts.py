"""The replay's chips count what each step's scrubber steps through: the saved versions of the
step's own answer (and of its authored follow-ups). The drafts of a follow-up asked in the
session are logged under its step too, and are in neither."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from mocks import report as mock_report
from mocks import services as mock
from practice import services as flow
from tests.mocks.conftest import client_for


def save(session, step_key, text, follow_up_id=""):
    answer = flow.answer_open(attempt=session.attempt, step_key=step_key, follow_up_id=follow_up_id)
    return flow.draft_save(answer=answer, text=text, fields={}, base_version=answer.version)


@pytest.fixture
def replayed(joined_session):
    """Two saved versions of the clarify step, and three of the answer to a follow-up asked
    on it, saved between them."""
    session = joined_session
    save(session, "clarify", "Peak 50 QPS.")
    event = mock.follow_up_ask(session=session, text="Which percentile do you design for?")
    follow_up = event.payload["follow_up_id"]
    for text in ("p9", "p99", "p99 time to first token."):
        save(session, "clarify", text, follow_up)
    save(session, "clarify", "Peak 50 QPS, p99 time to first token under 1 s.")
    return session


def test_a_chip_counts_the_versions_its_scrubber_shows(replayed):
    client = client_for(replayed.attempt.user)
    page = client.get(reverse("mock_replay", kwargs={"session_id": replayed.pk}) + "?step=clarify")
    html = page.content.decode()
    assert page.status_code == 200
    assert re.search(r'aria-current="page">\s*Clarify the requirements \(2\)</a>', html), html
    assert "Version 2 of 2" in html and 'max="1"' in html
    assert "p99 time to first token.</pre>" not in html  # the follow-up's answer is not a version
    assert re.search(r">\s*Architecture \(0\)</a>", html)


def test_every_chip_agrees_with_its_step_s_scrubber(replayed):
    save(replayed, "architecture", "A gateway, then a router.")
    counts = {
        s["key"]: s["count"]
        for s in mock_report.replay_context(replayed, step_key="clarify", version=None)["steps"]
    }
    assert counts == {
        "clarify": 2,
        "estimate": 0,
        "architecture": 1,
        "bottlenecks": 0,
        "tradeoffs": 0,
    }
    for key, count in counts.items():
        scrubbed = mock_report.replay_context(replayed, step_key=key, version=None)["versions"]
        assert count == len(scrubbed), key
