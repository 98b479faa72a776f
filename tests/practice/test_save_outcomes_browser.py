"""Every outcome of an autosave is told truthfully next to the answer, and the text survives.

Conflicts, oversized answers, an expired session and a dropped connection are produced for
real against the live server; a 500 and a proxy's 429 are answers the server can give but the
test cannot provoke on demand, so the browser is handed them for the draft URL alone.
"""

from __future__ import annotations

import pytest
from django.contrib.sessions.models import Session
from django.core.cache import cache
from playwright.sync_api import expect

from tests.practice.conftest import BROWSER_PASSWORD, BROWSER_USERNAME

pytestmark = pytest.mark.browser
SAVED = "Draft saved"


def _type(page, text: str) -> None:
    page.locator("#answer-text").fill(text)
    page.locator("#answer-text").dispatch_event("input")


def _status(page):
    return page.locator("#save-status")


def _browser_copy(page) -> str:
    copies = page.evaluate(
        "Object.keys(localStorage).map(k => JSON.parse(localStorage.getItem(k)).data.text)"
    )
    return "".join(c or "" for c in copies)


def _saved(page, text: str) -> None:
    _type(page, text)
    expect(_status(page)).to_contain_text("Draft saved")


def test_a_conflict_from_another_tab_is_shown_and_the_text_kept(step_page):
    from practice import services as flow

    page, attempt = step_page
    _saved(page, "A gateway, a router and ten replicas.")
    answer = attempt.answers.get(step_key="architecture")
    flow.draft_save(answer=answer, text="Written in another tab.", fields={}, base_version=1)
    _type(page, "A gateway, a router and eleven replicas.")
    page.wait_for_selector("#save-status.is-conflict")
    assert "Not saved" in _status(page).inner_text()
    assert page.locator("#answer-text").input_value() == "A gateway, a router and eleven replicas."
    assert "eleven replicas" in _browser_copy(page)
    # The newer text is shown inside the status (a <details> inside a <p> would be pushed out
    # of it by the HTML parser and linger after the next save).
    _status(page).get_by_text("See the newer text").click()
    expect(_status(page).locator(".other-draft")).to_have_text("Written in another tab.")
    assert page.locator(".other-draft").count() == 1


def test_an_answer_over_the_limit_is_refused_with_the_limit(step_page):
    page, _ = step_page
    long = "word " * 4_100  # 20,500 characters
    _type(page, long)
    page.wait_for_selector("#save-status.is-error")
    assert "the limit is 20,000" in _status(page).inner_text()
    assert page.locator("#answer-text").input_value() == long


def test_a_body_too_large_to_accept_is_told_as_such(step_page):
    page, _ = step_page
    huge = "x" * 3_000_000  # past Django's DATA_UPLOAD_MAX_MEMORY_SIZE: a 400
    _type(page, huge)
    expect(_status(page)).to_contain_text("too large to send")
    assert "Not saved" in _status(page).inner_text()
    assert len(page.locator("#answer-text").input_value()) == 3_000_000


@pytest.mark.parametrize(
    "code,expected",
    [(500, "server had an error (500)"), (503, "unavailable right now (503)")],
)
def test_a_server_error_is_not_called_saved(step_page, code, expected):
    page, attempt = step_page
    _saved(page, "Before the outage.")
    page.route("**/steps/architecture/draft/", lambda route: route.fulfill(status=code, body=""))
    _type(page, "During the outage.")
    expect(_status(page)).to_contain_text(expected)
    assert SAVED not in _status(page).inner_text()
    assert page.locator("#answer-text").input_value() == "During the outage."
    assert "During the outage." in _browser_copy(page)


def test_a_dropped_connection_is_told_and_the_text_kept(step_page):
    page, _ = step_page
    _saved(page, "Online.")
    page.context.set_offline(True)
    _type(page, "Offline now.")
    expect(_status(page)).to_contain_text("Connection lost")
    assert "Offline now." in _browser_copy(page)
    page.context.set_offline(False)


def test_an_expired_session_offers_sign_in_and_then_saves(step_page, live_server_url):
    page, attempt = step_page
    _saved(page, "Before the session ends.")
    Session.objects.all().delete()
    cache.clear()
    _type(page, "Typed after the session ended.")
    expect(_status(page)).to_contain_text("session has expired")
    # The log-in page was not swapped into the form; the text is where it was.
    assert page.locator("#answer-text").input_value() == "Typed after the session ended."
    assert page.locator("#answer-form input[name=username]").count() == 0
    with page.context.expect_page() as new_tab:
        page.get_by_role("link", name="Sign in again in a new tab").click()
    login = new_tab.value
    login.get_by_label("Username").fill(BROWSER_USERNAME)
    login.get_by_label("Password").fill(BROWSER_PASSWORD)
    login.get_by_role("button", name="Log in").click()
    login.wait_for_load_state()
    page.bring_to_front()
    page.get_by_role("button", name="Save now").click()
    expect(_status(page)).to_contain_text("Draft saved")
    answer = attempt.answers.get(step_key="architecture")
    assert answer.text == "Typed after the session ended."
