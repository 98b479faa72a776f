"""The load-test panel's figures on a phone: the table scrolls in a box that shows there is more
(a shade on the edge it continues past, no script needed), that a keyboard reaches and that a
screen reader names."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.conftest import save_screenshot, scrolled_sideways, signed_in_context, watched_page

pytestmark = pytest.mark.browser

PREDICTION = "At the peak ten replicas hold the p99 TTFT under 300 ms."


def test_the_runs_table_scrolls_in_a_named_focusable_box_with_a_hint(browser, live_server_url):
    from practice import services as flow
    from questions.models import Question

    user = User.objects.create_user("scroller", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    context = signed_in_context(browser, live_server_url, user)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/bottlenecks/")
    panel = page.locator("#simulator-panel")
    panel.locator("#sim-prediction").fill(PREDICTION)
    panel.get_by_role("button", name="Peak load").click()
    expect(panel.locator(".sim-result h3")).to_contain_text("Peak load")

    page.set_viewport_size({"width": 360, "height": 800})
    box = panel.get_by_role("region", name="The run's figures (scrollable)")
    expect(box).to_have_count(1)
    assert box.get_attribute("tabindex") == "0"
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")  # so the hint applies
    attachments = box.evaluate("el => getComputedStyle(el).backgroundAttachment")
    assert "local" in attachments and "scroll" in attachments, attachments
    box.focus()
    expect(box).to_be_focused()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    scrolled_sideways(box)
    box.page.wait_for_timeout(500)  # a smooth scroll ends before the box goes back
    box.evaluate("el => el.scrollTo({left: 0, behavior: 'instant'})")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    box.scroll_into_view_if_needed()
    save_screenshot(page, "simulator-result-scroll-hint-360")
    page.set_viewport_size({"width": 1280, "height": 800})
    save_screenshot(page, "simulator-result-scroll-hint-1280")
    assert errors == []
    context.close()
