"""A Submit that fails (a server error, a lost connection) is told beside the Submit button
with a Submit again that the keyboard reaches, on a 360 px phone too; and the step reads as
not submitted until a Submit goes through, whatever the autosave says meanwhile.

The server cannot be made to fail on demand, so the browser is handed the failure for the
submit address alone (the autosave beside it still reaches the server)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import timers_held

pytestmark = pytest.mark.browser
SUBMIT = "**/steps/architecture/submit/"
DRAFT = "**/steps/architecture/draft/"
TEXT = "A gateway, a prefix-aware router and ten replicas."


def _server_error(route):
    route.fulfill(status=500, body="boom")


@pytest.mark.parametrize(
    "answer, told",
    [
        (_server_error, "The server had an error (500)."),
        (lambda route: route.fulfill(status=503, body=""), "unavailable right now (503)."),
        (lambda route: route.abort(), "Connection lost."),
    ],
    ids=["server-error", "unavailable", "connection-lost"],
)
def test_a_failed_submit_offers_submit_again_in_place_on_a_phone(step_page, answer, told):
    page, attempt = step_page
    page.set_viewport_size({"width": 360, "height": 740})
    page.locator("#answer-text").fill(TEXT)
    page.route(SUBMIT, answer)
    submit = page.get_by_role("button", name="Submit this step")
    submit.click()

    status = page.locator("#save-status")
    expect(status).to_contain_text("Not submitted.")
    expect(status).to_contain_text(told)
    again = status.get_by_role("button", name="Submit again")
    # From the Submit button, the next Tab is the retry, and it fits the phone's width.
    submit.focus()
    page.keyboard.press("Tab")
    expect(again).to_be_focused()
    box = again.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 360
    assert page.evaluate("document.documentElement.scrollWidth") <= 360

    page.unroute(SUBMIT)
    page.keyboard.press("Enter")
    expect(page.locator("#feedback")).to_be_visible()
    assert attempt.answers.get(step_key="architecture").submissions.get().text == TEXT


def test_a_failed_submit_still_reads_not_submitted_after_the_draft_saves(step_page):
    page, attempt = step_page
    page.locator("#answer-text").fill(TEXT)
    page.route(SUBMIT, _server_error)
    page.get_by_role("button", name="Submit this step").click()
    expect(page.locator("#save-status")).to_contain_text("Not submitted.")
    page.unroute(SUBMIT)

    # An edit after it autosaves: the status line now says the draft is saved...
    more = TEXT + " Autoscaling on queue depth."
    with page.expect_response(DRAFT) as saved:
        page.locator("#answer-text").fill(more)
    assert saved.value.status == 200
    actions = page.locator(".form-actions")
    expect(page.locator("#save-status")).to_contain_text("Draft saved at")
    # ...and the step still reads as not submitted, with the way to submit it.
    expect(actions.get_by_text("Not submitted.")).to_be_visible()
    expect(actions).to_contain_text("Your last Submit did not go through.")
    again = actions.get_by_role("button", name="Submit again")
    expect(again).to_be_visible()
    assert attempt.answers.get(step_key="architecture").submissions.count() == 0

    again.click()
    expect(page.locator("#feedback")).to_be_visible()
    expect(actions.get_by_text("Not submitted.")).to_be_hidden()
    expect(actions.get_by_role("button", name="Submit again")).to_have_count(0)
    assert attempt.answers.get(step_key="architecture").submissions.get().text == more


def test_a_submit_that_went_through_leaves_no_not_submitted_note(step_page):
    page, _ = step_page
    page.locator("#answer-text").fill(TEXT)
    page.get_by_role("button", name="Submit this step").click()
    expect(page.locator("#feedback")).to_be_visible()
    with page.expect_response(DRAFT):
        page.locator("#answer-text").fill(TEXT + " Edited after submitting.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved at")
    expect(page.locator(".form-actions").get_by_text("Not submitted.")).to_be_hidden()


def test_a_submit_refused_with_its_reason_in_the_status_keeps_it_after_the_draft_saves(step_page):
    page, attempt = step_page
    answer = page.locator("#answer-text")
    with page.expect_response(DRAFT):
        answer.fill(TEXT)
    # Emptied and submitted at once (Ctrl+Enter, the caret still in the box): the server
    # refuses the Submit before saving anything, and says why in the status line...
    with timers_held(page):
        answer.fill("")
        with page.expect_response(SUBMIT) as refused:
            answer.press("Control+Enter")
    assert refused.value.status == 422
    reason = "There is nothing to submit yet: write your answer first."
    assert reason in refused.value.text()
    # ...which the autosave of the emptied box then replaces.
    expect(page.locator("#save-status")).to_contain_text("Draft saved at")
    actions = page.locator(".form-actions")
    expect(actions).to_contain_text(
        f"Not submitted. The server refused your last Submit: “{reason}”"
    )

    # An edit does not make the step submitted: the note stays until a Submit goes through.
    with page.expect_response(DRAFT):
        answer.fill(TEXT)
    expect(actions).to_contain_text("The server refused your last Submit")
    actions.get_by_role("button", name="Submit again").click()
    expect(page.locator("#feedback")).to_be_visible()
    expect(actions.get_by_text("Not submitted.")).to_be_hidden()
    assert attempt.answers.get(step_key="architecture").submissions.get().text == TEXT


def test_a_submit_that_fails_as_the_autosave_lands_is_told_in_red(step_page):
    page, _ = step_page
    with page.expect_response(DRAFT):
        page.locator("#answer-text").fill(TEXT)
    # The Submit waits behind an autosave (they take turns), and fails the moment it is sent
    # (no connection), right after the status the autosave swapped in.
    page.evaluate(
        """() => {
            const open = XMLHttpRequest.prototype.open;
            const send = XMLHttpRequest.prototype.send;
            XMLHttpRequest.prototype.open = function (method, url, ...rest) {
                this.failsAtOnce = url.endsWith("/submit/");
                return open.call(this, method, url, ...rest);
            };
            XMLHttpRequest.prototype.send = function (body) {
                if (!this.failsAtOnce) return send.call(this, body);
                setTimeout(() => this.onerror(), 0);
            };
            const autosave = document.getElementById("autosave");
            htmx.ajax("POST", autosave.getAttribute("hx-post"), { source: autosave });
            document.getElementById("submit-button").click();
        }"""
    )
    status = page.locator("#save-status")
    expect(status).to_contain_text("Not submitted. Connection lost.")
    expect(status).to_have_class(re.compile(r"\bis-error\b"))
