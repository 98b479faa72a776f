"""The live parts of a mock interview's pages poll the server. When the person signs out in
another tab (or their session expires) mid-mock, a poll lands on the log-in page: that page
is not swapped into theirs (a second header, a second <main>), the live part and what they
typed in it stay, and the page says they are signed out, with a way to sign in again in a
new tab (static/js/requests.js). Once they have, the next poll goes through and the notice
goes."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import expect

from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser


def _sign_out_elsewhere(context, base) -> None:
    """Log out in another tab of the same browser."""
    other = context.new_page()
    other.goto(f"{base}/")
    other.get_by_role("button", name="Log out").click()
    other.wait_for_url(f"{base}/")
    other.close()


def _stop_polling(page) -> None:
    """Leave the page and give a poll already sent time to be answered: a signed-out poll's
    answer renders the log-in page in the live server's thread, and a test client's request
    running then in the next test would count that page's context as its own."""
    page.goto("about:blank")
    page.wait_for_timeout(1000)


def _script_errors(errors: list[str]) -> list[str]:
    """The page's errors but htmx's own log of each failed poll, which is what happened."""
    return [e for e in errors if not e.startswith("Response Status Error Code 200 from /mock/")]


def _sign_in_again(context, base, user) -> None:
    """As signing in in another tab does: a new session cookie for this browser."""
    client = Client()
    client.force_login(user)
    cookie = {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base}
    context.add_cookies([cookie])


def test_signing_out_in_another_tab_mid_mock(browser, live_server_url, settings):
    settings.MOCK_POLL_SECONDS = 0.3
    candidate = User.objects.create(username="candidate")
    session = chat_session(candidate)
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, candidate)
    step = watched_page(context, errors)
    step.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
    panel = step.locator("#mock-panel")
    expect(panel).to_contain_text("Left in the session")

    _sign_out_elsewhere(context, live_server_url)

    notice = step.locator("#request-problem")
    expect(notice).to_contain_text("Your session has expired.")
    expect(notice.get_by_role("link", name="Sign in again in a new tab")).to_be_visible()
    expect(panel).to_contain_text("Left in the session")  # the live part stays as it was
    expect(step.locator("main")).to_have_count(1)
    expect(step.locator("#id_password")).to_have_count(0)

    _sign_in_again(context, live_server_url, candidate)
    expect(notice).to_have_count(0)  # the next poll went through
    expect(panel).to_contain_text("Left in the session")
    _stop_polling(step)
    context.close()
    assert _script_errors(errors) == []


def test_the_interviewers_typed_feedback_outlives_a_sign_out(browser, live_server_url, settings):
    settings.MOCK_POLL_SECONDS = 0.3
    interviewer = User.objects.create(username="interviewer")
    session = chat_session(User.objects.create(username="candidate"), interviewer=interviewer)
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, interviewer)
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/mock/{session.pk}/interview/")
    feedback = page.locator("#feedback-clarify")
    feedback.fill("Pinned the SLO first; ask about the peak sooner.")

    _sign_out_elsewhere(context, live_server_url)

    expect(page.locator("#request-problem")).to_contain_text("Your session has expired.")
    expect(feedback).to_have_value("Pinned the SLO first; ask about the peak sooner.")
    _stop_polling(page)
    context.close()
    assert _script_errors(errors) == []
