"""Answering the app's follow-up by keyboard: the Submit button goes away with the question
when the panel redraws, and the keyboard (and screen reader) user must not be thrown back to
the top of the page; their place is the confirmation in the panel, and Tab goes on from
there."""

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from mocks.log import Kind
from questions.models import Question
from tests.conftest import signed_in_context, watched_page
from tests.mocks.test_mock_app_interviewer import SEEDED_ARCHITECTURE, submit

pytestmark = pytest.mark.browser


def test_the_keyboard_stays_in_the_panel_after_answering_the_follow_up(browser, live_server_url):
    candidate = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=candidate, revision=revision, mode="app")
    submit(session, "architecture", SEEDED_ARCHITECTURE)  # graded: the app asks
    assert session.events.filter(kind=Kind.FOLLOW_UP_ASKED).exists()
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, candidate)
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")

    box = page.get_by_label("Your answer to the follow-up")
    box.focus()
    page.keyboard.type("Prefix caching: the shared system prompt is prefilled once per replica.")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Submit the follow-up answer")).to_be_focused()
    page.keyboard.press("Enter")

    panel = page.locator("#mock-panel")
    expect(panel).to_contain_text("You answered the follow-up")
    expect(panel.locator(":focus")).to_have_text(re.compile(r"You answered the follow-up"))
    context.close()
    assert errors == []
