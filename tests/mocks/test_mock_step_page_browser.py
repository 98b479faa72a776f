"""The candidate's step page in a mock interview, as its live panel changes it: a follow-up's
autosave that fails says that the draft was not saved (not that an answer was not sent), and
when the time runs out the progress bar counts the answers the end submitted, with the rest
of what the panel then says."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from mocks.models import MockSession
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser


@pytest.fixture
def candidate_page(browser, live_server_url, settings):
    """page_for(session) -> the candidate's architecture step of `session`, open; the test
    fails on any script or console error but those `expected` names."""
    settings.MOCK_POLL_SECONDS = 0.3  # the panel polls fast in a test
    opened = []

    def page_for(session, expected: tuple[str, ...] = ()):
        context = signed_in_context(browser, live_server_url, session.attempt.user)
        errors: list[str] = []
        page = watched_page(context, errors)
        page.set_default_timeout(15_000)
        page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
        opened.append((context, errors, expected))
        return page

    yield page_for
    for context, errors, expected in opened:
        context.close()
        assert [e for e in errors if not any(x in e for x in expected)] == []


def test_a_follow_up_draft_not_saved_says_so_and_keeps_the_text(candidate_page):
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    session = chat_session(candidate, interviewer=interviewer)
    event = mock.follow_up_ask(session=session, text="How does the router choose a replica?")
    page = candidate_page(session, expected=("status of 500", "Error Code 500"))
    page.route("**/follow-ups/*/draft/", lambda route: route.fulfill(status=500, body="boom"))

    page.get_by_label("Your answer to the follow-up").fill("By a hash of the prompt prefix.")

    status = page.locator(f"#fu-status-{event.seq}")
    expect(status).to_have_text(
        "Draft not saved. The server had an error (500). Your answer is kept in its box. "
        "It saves on your next edit."
    )
    expect(page.get_by_label("Your answer to the follow-up")).to_have_value(
        "By a hash of the prompt prefix."
    )


def test_the_progress_bar_counts_what_the_end_submitted_when_time_runs_out(candidate_page):
    session = chat_session(User.objects.create(username="candidate"))
    page = candidate_page(session)
    expect(page.locator("#mock-panel")).to_contain_text("Left in the session")
    page.locator("#answer-text").fill("Clients reach a gateway, then a prefix-aware router.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    expect(page.locator("#progress")).to_contain_text("0 of 5 steps submitted")

    MockSession.objects.filter(pk=session.pk).update(
        started_at=session.started_at - timedelta(minutes=session.total_minutes)
    )

    expect(page.locator("#mock-panel")).to_contain_text("The session has ended")
    expect(page.locator("#progress")).to_contain_text("1 of 5 steps submitted")
    expect(page.locator("#progress li.done")).to_have_count(1)
