"""A Submit on its way, on a slow network, says so: its button is disabled (a second tap sends
nothing) and the status line reads "Submitting…" until the answer comes, on a 360 px phone.

The network is slowed for the submit address alone: the browser holds its request until the
test lets it go on to the server."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
SUBMIT = "**/steps/architecture/submit/"
DRAFT = "**/steps/architecture/draft/"
TEXT = "A gateway, a prefix-aware router and ten replicas."


def test_a_slow_submit_disables_its_button_and_says_it_is_submitting(step_page):
    page, attempt = step_page
    page.set_viewport_size({"width": 360, "height": 740})
    with page.expect_response(DRAFT):
        page.locator("#answer-text").fill(TEXT)
    status = page.locator("#save-status")
    expect(status).to_contain_text("Draft saved")

    held = []
    page.route(SUBMIT, lambda route: held.append(route))
    submit = page.get_by_role("button", name="Submit this step")
    submit.click()
    expect(status).to_have_text("Submitting…")
    expect(submit).to_be_disabled()
    assert len(held) == 1
    # No note that the last Submit failed while this one is on its way.
    expect(page.locator(".form-actions").get_by_text("Not submitted.")).to_be_hidden()
    # A second tap on the disabled button sends nothing.
    submit.click(force=True)
    page.wait_for_timeout(300)
    assert len(held) == 1

    with page.expect_response(SUBMIT):
        held[0].continue_()
    expect(page.locator("#feedback")).to_be_visible()
    expect(status).to_contain_text("Submitted at")
    expect(submit).to_be_enabled()
    assert attempt.answers.get(step_key="architecture").submissions.count() == 1


def test_a_slow_submit_that_fails_puts_the_failure_in_place_of_submitting(step_page):
    page, attempt = step_page
    page.locator("#answer-text").fill(TEXT)
    held = []
    page.route(SUBMIT, lambda route: held.append(route))
    submit = page.get_by_role("button", name="Submit this step")
    submit.click()
    status = page.locator("#save-status")
    expect(status).to_have_text("Submitting…")
    expect(submit).to_be_disabled()

    held[0].abort()
    expect(status).to_contain_text("Not submitted.")
    expect(status).to_contain_text("Connection lost.")
    expect(status).not_to_contain_text("Submitting")
    expect(submit).to_be_enabled()
    assert attempt.answers.get(step_key="architecture").submissions.count() == 0
