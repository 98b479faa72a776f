"""The candidate's session page while it waits for a person, in a real browser: it polls, so
the invite card turns into who joined (not a used link still offered to send), and a
keyboard user keeps their place on its buttons across the polls."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from mocks.models import MockSession
from tests.conftest import signed_in_context, watched_page

pytestmark = pytest.mark.browser


@pytest.fixture
def waiting(browser, live_server_url, settings):
    settings.MOCK_POLL_SECONDS = 0.3  # the page polls fast in a test
    candidate = User.objects.create(username="candidate")
    errors: list[str] = []
    page = watched_page(signed_in_context(browser, live_server_url, candidate), errors)
    page.goto(f"{live_server_url}/questions/chat-api-50qps/")
    page.get_by_label("with a person, who joins by a link you send").check()
    page.get_by_role("button", name="Start a mock interview").click()
    page.wait_for_url("**/mock/*/")
    yield page, MockSession.objects.get()
    assert errors == []


def test_the_invite_card_says_who_joined_without_a_reload(waiting):
    page, session = waiting
    expect(page.locator("#invite-link")).to_be_visible()
    interviewer = User.objects.create(username="interviewer")
    mock.invite_accept(session_id=session.pk, token=mock.invite_token(session), user=interviewer)
    expect(page.locator("#clock-card")).to_contain_text("Time left in the session")
    card = page.locator("section[aria-labelledby=invite-h]")
    expect(card).to_contain_text("interviewer joined as your interviewer")
    expect(page.locator("#invite-link")).to_have_count(0)
    expect(page.get_by_role("button", name="Revoke this link")).to_have_count(0)


def test_a_keyboard_user_keeps_focus_on_the_waiting_page_across_polls(waiting):
    page, _ = waiting
    button = page.get_by_role("button", name="Start without your interviewer")
    button.focus()
    page.wait_for_timeout(1500)  # several polls, each swapping the cards
    expect(button).to_be_focused()
    page.keyboard.press("Tab")
    end = page.get_by_role("link", name="End the session now")
    page.wait_for_timeout(1000)
    expect(end).to_be_focused()
