"""The replay's step pills are a row of chips: no list bullets beside them, on a phone or a
desktop (they showed a bullet before each pill at 360 and 1280 px)."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from questions.models import Question
from tests.conftest import save_screenshot, signed_in_context
from tests.conftest import watched_page as new_page
from tests.practice.test_layout_a11y_browser import DESKTOP, PHONE

pytestmark = pytest.mark.browser


def test_the_replays_step_pills_have_no_bullets(browser, live_server_url):
    candidate = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=candidate, revision=revision, mode="app")
    mock.session_end(session=session, reason="ended early")
    errors: list[str] = []
    for name, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
        context = signed_in_context(browser, live_server_url, candidate, viewport=viewport)
        page = new_page(context, errors)
        page.goto(f"{live_server_url}/mock/{session.pk}/replay/")
        pills = page.get_by_role("navigation", name="Steps").locator("li")
        expect(pills).to_have_count(5)
        markers = pills.evaluate_all("els => els.map(e => getComputedStyle(e).listStyleType)")
        assert markers == ["none"] * 5, name
        save_screenshot(page, f"mock-replay-steps-{name}")
        context.close()
    assert errors == []
