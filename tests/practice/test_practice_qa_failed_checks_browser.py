"""A napkin-math Check, the worksheet's working-out or the diagram's preview whose request
fails (the connection drops, the server errs, the paste is too large to send) said nothing:
Check did nothing at all, and the worksheet and the preview kept showing results for text
no longer in the box. Each now says, where its result would be, that it failed and why."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def _step(open_step, step: str):
    page, _attempt = open_step(step, username=f"fails-{step}")
    page.wait_for_selector("html[data-ready]", state="attached")
    return page


def test_a_failed_check_or_worksheet_request_says_so_where_its_result_goes(open_step):
    page = _step(open_step, "estimate")
    box = page.locator("#q-tpot_floor")
    result = page.locator("#check-tpot_floor")
    # The connection drops.
    page.route("**/check/", lambda route: route.abort())
    box.fill("15.2 GB / (0.7 * 1008 GB/s) in ms")
    box.press("Enter")
    result.get_by_role("alert").wait_for()
    assert "connection" in result.inner_text().lower()
    page.unroute("**/check/")
    # The server errs.
    page.route("**/check/", lambda route: route.fulfill(status=500, body="boom"))
    page.locator("#check-form-tpot_floor button, .quantity-input button").first.click()
    result.get_by_text("500").wait_for()
    page.unroute("**/check/")
    # Working the checks again replaces the message with the verdict.
    box.press("Enter")
    result.get_by_text("Correct").wait_for()
    assert "500" not in result.inner_text()

    # The worksheet: its earlier lines must not stand for the new text.
    page.locator("#worksheet").fill("W2 = 15.2 GB")
    page.locator("#worksheet-lines").get_by_text("15.2 GB").first.wait_for()
    page.route("**/worksheet/", lambda route: route.fulfill(status=400, body=""))
    page.locator("#worksheet").fill("W3 = 30 GB")
    lines = page.locator("#worksheet-lines")
    lines.get_by_role("alert").wait_for()
    assert "too large" in lines.inner_text().lower()
    assert "W2" not in lines.inner_text()


def test_a_failed_diagram_preview_says_so(open_step):
    page = _step(open_step, "architecture")
    page.route("**/diagram/preview/", lambda route: route.abort())
    page.locator("#diagram-text").fill("flowchart LR\n  a --> b")
    page.locator("#diagram-error").get_by_text("connection", exact=False).wait_for()
