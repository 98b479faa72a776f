"""The interviewer's nudge and follow-up boxes, in a real browser: a question the server
refuses stays in its box as typed, with the reason beside it (only one that was sent leaves
an empty box), and a double click sends once and says it was sent."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks.log import Kind
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser


def test_a_refused_follow_up_keeps_its_text_and_a_double_click_sends_once(
    browser, live_server_url, settings
):
    settings.MOCK_POLL_SECONDS = 60  # no redraw of the live view during the test
    interviewer = User.objects.create(username="interviewer")
    session = chat_session(User.objects.create(username="candidate"), interviewer=interviewer)
    errors: list[str] = []
    page = watched_page(signed_in_context(browser, live_server_url, interviewer), errors)
    page.goto(f"{live_server_url}/mock/{session.pk}/interview/")

    ask, status = page.locator("#ask-text"), page.locator("#ask-status")
    ask.fill("How does the router pick a replica?")
    page.get_by_role("button", name="Ask the follow-up").click()
    expect(status).to_have_text("Sent.")
    expect(ask).to_have_value("")  # sent: the box is ready for the next one
    typed = "And what happens when that replica dies?"
    ask.fill(typed)
    page.get_by_role("button", name="Ask the follow-up").click()
    expect(status).to_contain_text("has not answered your last follow-up yet")
    expect(ask).to_have_value(typed)  # refused: nothing they typed is lost

    nudge = page.locator("#nudge-text")
    nudge.fill("Think about the shared system prompt.")
    page.get_by_role("button", name="Send the nudge").dblclick()
    expect(page.locator("#nudge-status")).to_have_text("Sent.")
    page.wait_for_timeout(500)  # a second request, if one went, has come back by now
    expect(page.locator("#nudge-status")).to_have_text("Sent.")
    assert session.events.filter(kind=Kind.NUDGE).count() == 1
    assert [e for e in errors if "status of 422" not in e] == []
