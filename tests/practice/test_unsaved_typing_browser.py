"""Leaving or reloading a step page right after typing keeps what was typed.

Drafts save a moment after typing stops. Text typed in that moment is sent as the page is
left, and the page that comes next (a reload, Back then Forward) shows it, with a version its
next autosave is taken at. When saves are failing, leaving asks first; once a save lands, it
does not.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
ARCHITECTURE = "**/steps/architecture/draft/"


def _type(page, text: str) -> None:
    """Type as a person does: key by key, so the page counts as used (a browser asks before
    leaving only a page the person has interacted with)."""
    box = page.locator("#answer-text")
    box.click()
    box.press_sequentially(text, delay=10)


def _stored(attempt) -> str:
    return attempt.answers.get(step_key="architecture").text


def test_a_reload_right_after_typing_keeps_the_text(step_page):
    page, attempt = step_page
    _type(page, "A gateway and ten replicas.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    _type(page, " Plus a router.")
    page.reload()
    box = page.locator("#answer-text")
    expect(box).to_have_value("A gateway and ten replicas. Plus a router.")
    # Drawn after the save sent on leaving landed, or before it and saved again (taken once).
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    assert page.locator(".restore").count() == 0
    # The page is at the server's version: typing on saves, not refused as another tab's.
    with page.expect_response(lambda r: "Two%20regions" in (r.request.post_data or "")) as saved:
        _type(page, " Two regions.")
    assert saved.value.status == 200
    assert _stored(attempt) == "A gateway and ten replicas. Plus a router. Two regions."


def test_back_right_after_typing_keeps_the_text(step_page):
    page, attempt = step_page
    _type(page, "Typed, then Back at once.")
    page.go_back()
    page.go_forward()
    expect(page.locator("#answer-text")).to_have_value("Typed, then Back at once.")
    # The page can show the text (the browser's own copy) before the save sent on leaving
    # has landed: the stored text is polled.
    for _ in range(50):
        if _stored(attempt) == "Typed, then Back at once.":
            break
        page.wait_for_timeout(100)
    assert _stored(attempt) == "Typed, then Back at once."


def test_leaving_asks_while_saves_fail_and_not_once_one_lands(step_page):
    page, attempt = step_page
    page.route(ARCHITECTURE, lambda route: route.fulfill(status=503, body=""))
    _type(page, "Typed while the server is down.")
    expect(page.locator("#save-status")).to_contain_text("unavailable right now")
    page.once("dialog", lambda dialog: dialog.dismiss())  # stay on the page
    with page.expect_event("dialog", timeout=5_000) as asked:
        page.evaluate("location.reload()")
    assert asked.value.type == "beforeunload"
    expect(page.locator("#answer-text")).to_have_value("Typed while the server is down.")

    page.unroute(ARCHITECTURE)
    _type(page, " Back up.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved at")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.dismiss()))
    page.reload()
    assert dialogs == []
    expect(page.locator("#answer-text")).to_have_value("Typed while the server is down. Back up.")


def test_a_copy_sent_on_leaving_that_the_draft_moved_past_is_offered_as_possibly_older(step_page):
    # The copy's save landed, then the draft moved on elsewhere: "never received" would be
    # false, and restoring the copy replaces the newer draft.
    page, attempt = step_page
    _type(page, "Saved first.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    key = page.locator("#answer-form").get_attribute("data-draft-key")
    page.evaluate(
        """([key, version]) => localStorage.setItem(key, JSON.stringify({tab: "gone",
        at: Date.now(), sent: true,
        data: {text: "An older copy.", base_version: String(version - 1)}}))""",
        [key, attempt.answers.get(step_key="architecture").version],
    )
    page.reload()
    offer = page.locator(".restore")
    expect(offer).to_contain_text("sent as you left the page")
    expect(offer).to_contain_text("may be newer")
    expect(offer).to_contain_text("compare them")
    expect(offer).not_to_contain_text("never received")
    expect(page.locator("#answer-text")).to_have_value("Saved first.")
