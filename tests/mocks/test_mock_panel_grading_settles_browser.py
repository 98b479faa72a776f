"""On the step page, after the end, the panel's line on the step's grading follows it: "being
graded" gives way to the self-check's link once the worker has read the answer (no model),
and what else the ended panel holds stays as it is."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from practice import services as flow
from practice.models import Submission
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser


def test_the_ended_panel_says_when_the_grading_settles(browser, live_server_url, settings):
    settings.MOCK_POLL_SECONDS = 0.3
    session = chat_session(
        User.objects.create(username="candidate"),
        interviewer=User.objects.create(username="interviewer"),
    )
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    flow.draft_save(answer=answer, text="A gateway, a router.", fields={}, base_version=0)
    mock.session_end(session=session, reason="time")  # submits it; no worker has graded it
    context = signed_in_context(browser, live_server_url, session.attempt.user)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
    message = page.locator("#mock-panel [data-ended-message]")
    expect(message).to_contain_text("This step's answer is being graded.")
    page.evaluate("document.getElementById('mock-panel').dataset.marked = 'kept'")

    flow.submission_grade(submission_id=Submission.objects.get(answer=answer).pk)  # the matcher
    expect(message).to_contain_text("No model graded this step's answer")
    expect(message.get_by_role("link", name="rate it in your self-check")).to_be_visible()
    expect(message).not_to_contain_text("being graded")
    # Only the line changed: the panel itself (and what scripts added to it) stayed.
    assert page.locator("#mock-panel").get_attribute("data-marked") == "kept"
    context.close()
    assert errors == []
