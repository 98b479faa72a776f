"""The countdown on the candidate's step page stays true to the server's clock when the
browser does not run its timers for a while: a tab in the background (Chromium fires its
timers once a minute there) or a laptop asleep. Between polls that bring nothing new (a 204)
nothing re-renders the clock, so the page must count from when it was rendered, not the
number of timer ticks it happened to get.

Playwright's fake clock moves the time on without firing the timers in between, which is
what a throttled or sleeping tab sees."""

import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser


def _seconds(text: str) -> int:
    minutes, seconds = re.fullmatch(r"(\d+):(\d\d)", text.strip()).groups()
    return int(minutes) * 60 + int(seconds)


def test_the_countdown_counts_the_time_a_sleeping_tab_missed(browser, live_server_url, settings):
    # No poll within the test's few (fake) seconds: a poll that brought something new would
    # redraw the panel with the server's own time left, which the test's jump of the browser's
    # clock does not move (a redraw is not what is tested here; under load one came late).
    settings.MOCK_POLL_SECONDS = 3600
    candidate = User.objects.create(username="candidate")
    session = chat_session(candidate)
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, candidate)
    page = watched_page(context, errors)
    page.clock.install()
    page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
    page.clock.run_for(1000)  # the panel's first load
    countdown = page.locator("#mock-panel .mock-countdown").first
    expect(countdown).to_be_visible()
    assert _seconds(countdown.inner_text()) > 44 * 60

    # Ten minutes pass with no timer fired (the tab asleep), then the page wakes for a second.
    now = page.evaluate("Date.now()") / 1000
    page.clock.set_system_time(datetime.fromtimestamp(now + 600, UTC))
    page.clock.run_for(1000)

    left = _seconds(countdown.inner_text())
    context.close()  # no poll outlives the test's server
    assert 34 * 60 <= left <= 35 * 60, f"the clock shows {left // 60}:{left % 60:02d} left"
    assert errors == []
