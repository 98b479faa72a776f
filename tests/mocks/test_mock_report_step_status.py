"""Right after a session ends its answers are still being graded: the report, and its
Markdown export, say so for a step submitted and not graded yet, and say "not submitted" for
a step the candidate never submitted, instead of "not graded" for both (which reads as if
grading had failed, or as if an answer had been lost)."""

import pytest
from django.urls import reverse

from mocks import services as mock
from practice import services as flow
from practice.models import Submission
from tests.mocks.conftest import client_for


@pytest.fixture
def ended(joined_session):
    session = joined_session
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    flow.draft_save(
        answer=answer, text="A gateway, a router, ten replicas.", fields={}, base_version=0
    )
    mock.session_end(session=session, reason="time")  # submits it; the worker has not graded
    assert Submission.objects.get().grade_status == Submission.GradeStatus.QUEUED
    return session


def test_the_report_says_a_step_is_being_graded_and_another_was_not_submitted(ended):
    html = client_for(ended.attempt.user).get(reverse("mock_report", args=[ended.pk]))
    page = html.content.decode()
    assert "Architecture: being graded" in page
    assert "Napkin math: not submitted" in page
    assert "not graded" not in page


def test_the_export_says_the_same(ended):
    md = client_for(ended.attempt.user).get(reverse("mock_report_md", args=[ended.pk]))
    text = md.content.decode()
    assert "## Architecture: being graded" in text
    assert "## Napkin math: not submitted" in text


def test_once_graded_the_step_no_longer_says_being_graded(ended):
    flow.submission_grade(submission_id=Submission.objects.get().pk)  # offline: the matcher
    page = client_for(ended.attempt.user).get(reverse("mock_report", args=[ended.pk]))
    assert "being graded" not in page.content.decode()
