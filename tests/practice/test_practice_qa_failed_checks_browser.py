"""A napkin-math Check, the worksheet's working-out or the diagram's preview whose request
fails (the connection drops, the server errs, the paste is too large to send) said nothing:
Check did nothing at all, and the worksheet and the preview kept showing results for text
no longer in the box. Each now says, where its result would be, that it failed and why."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice import services as flow
from tests.conftest import signed_in_context

pytestmark = pytest.mark.browser


def _step(browser, live_server_url, step: str):
    from questions.models import Question

    user = User.objects.create_user(f"fails-{step}", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    context = signed_in_context(browser, live_server_url, user)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/{step}/")
    page.wait_for_selector("html[data-ready]", state="attached")
    return context, page


def test_a_failed_check_or_worksheet_request_says_so_where_its_result_goes(
    browser, live_server_url
):
    context, page = _step(browser, live_server_url, "estimate")
    try:
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
    finally:
        context.close()


def test_a_failed_diagram_preview_says_so(browser, live_server_url):
    context, page = _step(browser, live_server_url, "architecture")
    try:
        page.route("**/diagram/preview/", lambda route: route.abort())
        page.locator("#diagram-text").fill("flowchart LR\n  a --> b")
        page.locator("#diagram-error").get_by_text("connection", exact=False).wait_for()
    finally:
        context.close()
