"""One clock a question at a time: while a mock interview of a question runs, its question
page links the session (with the time left), and "Start a mock interview" leads back to it
instead of starting a second clock. An ended one's attempt links its report."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from mocks import services as mock
from mocks.models import MockSession
from questions.models import Question
from tests.mocks.conftest import client_for

SLUG = "chat-api-50qps"


def _start(client, mode="app"):
    return client.post(reverse("mock_start", args=[SLUG]), {"mode": mode})


def test_start_while_one_runs_leads_to_the_running_one(people):
    client = client_for(people["candidate"])
    first = _start(client)
    session = MockSession.objects.get()
    assert first.url == reverse("mock_session", kwargs={"session_id": session.pk})

    again = _start(client, mode="human")
    assert again.status_code == 302
    assert again.url == reverse("mock_session", kwargs={"session_id": session.pk})
    assert MockSession.objects.count() == 1
    page = client.get(again.url).content.decode()
    assert "still running" in page

    mock.session_end(session=session, reason="candidate")
    _start(client)
    assert MockSession.objects.count() == 2  # ended: a new one starts


def test_another_question_or_another_candidate_starts_its_own(people):
    _start(client_for(people["candidate"]))
    _start(client_for(people["stranger"]))
    assert MockSession.objects.count() == 2


def test_the_question_page_links_the_running_session_and_an_ended_ones_report(people):
    client = client_for(people["candidate"])
    _start(client)
    session = MockSession.objects.get()
    page = client.get(reverse("question", args=[SLUG])).content.decode()
    session_url = reverse("mock_session", kwargs={"session_id": session.pk})
    attempts = page[page.index("Your attempts:") :]
    link = attempts[attempts.index(f'<a href="{session_url}"') :]
    link = link[: link.index("</a>")]
    assert "mock interview running" in link and "left" in link
    assert "(resume)" not in link
    assert "data-mock-running" in page

    mock.session_end(session=session, reason="candidate")
    page = client.get(reverse("question", args=[SLUG])).content.decode()
    report_url = reverse("mock_report", kwargs={"session_id": session.pk})
    assert f'<a href="{report_url}"' in page
    assert "mock interview, ended (report)" in page
    assert "data-mock-running" not in page


def test_a_running_session_whose_time_ran_out_is_ended_not_resumed(people):
    from datetime import timedelta

    from django.utils import timezone

    revision = Question.objects.get(slug=SLUG).current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
    MockSession.objects.filter(pk=session.pk).update(started_at=timezone.now() - timedelta(hours=2))
    client = client_for(people["candidate"])
    # Its time is up though nothing has ended it yet: the page does not call it running.
    page = client.get(reverse("question", args=[SLUG])).content.decode()
    assert "mock interview, time up" in page
    assert "running" not in page[page.index("Your attempts:") :].split("</p>")[0]
    assert "data-mock-running" not in page
    _start(client)
    session.refresh_from_db()
    assert session.ended_at is not None
    assert MockSession.objects.count() == 2


def test_the_question_page_reads_its_mock_links_in_one_query_for_the_list(people):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(people["candidate"])
    revision = Question.objects.get(slug=SLUG).current_revision

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("question", args=[SLUG])).status_code == 200
        return len(captured)

    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
    mock.session_end(session=session, reason="candidate")
    queries()  # the first request reads what later ones find cached
    one = queries()
    for _ in range(3):
        session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
        mock.session_end(session=session, reason="candidate")
    assert queries() == one


@pytest.mark.django_db(transaction=True)
def test_two_starts_at_once_start_one_clock(monkeypatch, core_content):
    """Two tabs press Start at the same moment: each looks for a running session before
    either writes one, unless the candidate is locked for the look and the write. On SQLite
    the write transaction itself serialises them (IMMEDIATE); the row lock is what holds on
    PostgreSQL, where CI runs this test too."""

    from practice import services as flow
    from tests.conftest import _store, at_once

    _store(core_content)
    candidate = User.objects.create(username="candidate")
    real_start = flow.attempt_start

    def slow_start(**kwargs):
        # Between looking for a running session and making one: room for the other tab.
        time.sleep(0.3)
        return real_start(**kwargs)

    monkeypatch.setattr(flow, "attempt_start", slow_start)

    def press_start():
        return _start(client_for(candidate)).url

    landed = at_once(press_start, press_start)
    session = MockSession.objects.get()
    assert landed == [reverse("mock_session", kwargs={"session_id": session.pk})] * 2
