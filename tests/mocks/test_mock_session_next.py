"""The candidate's session page points at what they must do next: the follow-up that waits
for an answer, on its step, while one does; else the first step not submitted in the
session."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from mocks import services as mock
from mocks.report import transcript
from questions.models import Question
from tests.mocks.conftest import client_for
from tests.mocks.test_mock_app_interviewer import EXPECTED_POINT, SEEDED_ARCHITECTURE, submit


@pytest.fixture
def app_session(content_loaded):
    user = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    return mock.mock_session_start(user=user, revision=revision, mode="app")


def step_link(session) -> tuple[str, str]:
    page = client_for(session.attempt.user).get(reverse("mock_session", args=[session.pk]))
    link = r'<a id="step-link"[^>]*href="([^"]+)"[^>]*>([^<]+)</a>'
    match = re.search(link, page.content.decode())
    return match.group(1), match.group(2)


def step_page(session, step_key: str) -> str:
    return reverse("attempt_step", kwargs={"attempt_id": session.attempt_id, "step": step_key})


def test_the_session_page_leads_to_the_app_follow_up_that_waits(app_session):
    session = app_session
    submit(session, "architecture", SEEDED_ARCHITECTURE)  # graded: the app asks
    mock.session_tick(session)
    assert step_link(session) == (
        step_page(session, "architecture"),
        "Answer the follow-up on Architecture",
    )
    page = client_for(session.attempt.user).get(reverse("mock_session", args=[session.pk]))
    assert "The app asked a follow-up on\n    Architecture" in page.content.decode()


def test_the_session_page_leads_to_the_first_step_not_submitted(app_session):
    session = app_session
    assert step_link(session) == (step_page(session, "clarify"), "Go to Clarify the requirements")
    submit(session, "clarify", "Peak 50 QPS, p95 TTFT under a second.")
    assert step_link(session) == (step_page(session, "estimate"), "Go to Napkin math")


def test_the_transcript_names_the_point_the_probe_aims_at_by_what_it_says(app_session):
    session = app_session
    submit(session, "architecture", SEEDED_ARCHITECTURE)
    mock.session_tick(session)
    asked = next(r for r in transcript(session) if r["kind"] == "follow_up_asked")
    assert EXPECTED_POINT not in asked["text"]
    assert asked["text"].startswith(
        "The app asked (Architecture) (aimed at: Turns on --enable-prefix-caching so the "
        "shared system prompt is prefilled once and reused, cutting TTFT): "
    )
