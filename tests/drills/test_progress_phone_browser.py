"""The progress page's week-by-week charts on a phone (360 px): each opens on its newest
weeks, the row names stay in view while the weeks scroll, and the box says that it scrolls."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tests.conftest import save_screenshot, signed_in_context, watched_page
from tests.drills.factories import graded_submission

PHONE = {"width": 360, "height": 740}


@pytest.fixture
def candidate(content_loaded):
    user = User.objects.create_user("phone-progress", password="a-long-Passphrase-42")
    graded_submission(user=user, at=timezone.now() - timedelta(hours=1), step="clarify",
                      grades={"llm": 0.9})  # fmt: skip
    return user


def box_of(page, selector: str) -> dict:
    return page.locator(selector).first.evaluate(
        "el => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right}; }"
    )


@pytest.mark.browser
def test_a_phone_opens_the_chart_on_this_week_with_its_row_names_kept(
    browser, live_server_url, candidate
):
    context = signed_in_context(browser, live_server_url, candidate, viewport=PHONE)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/drills/progress/")
    chart = page.locator("#chart-steps")
    box = page.locator(".scroll-x", has=chart)

    # This week's verdict shows without a swipe, beside the overall column.
    # (Nothing here scrolls it into view: that would scroll the box too.)
    filled = chart.locator('g.pg-cell[data-count="1"]').first
    cell = filled.evaluate("el => el.getBoundingClientRect().toJSON()")
    assert 0 <= cell["left"] and cell["right"] <= PHONE["width"], cell
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    # The box says it scrolls: a shade on the edge with more beyond it, a keyboard stop.
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")
    layers = box.evaluate("el => getComputedStyle(el).backgroundAttachment")
    assert "local" in layers and "scroll" in layers, layers
    assert box.get_attribute("role") == "region"
    assert page.get_by_text("scroll sideways for older weeks").first.is_visible()

    # Scrolled to the oldest week, the row names are still where they were.
    name = page.locator("text.pg-label:visible").first
    before = name.evaluate("el => el.getBoundingClientRect().toJSON()")
    box.focus()
    page.keyboard.press("ArrowLeft")
    # Polled here: the page's CSP forbids the string page.wait_for_function would evaluate.
    for _ in range(50):
        if box.evaluate("el => el.scrollLeft") < 0:  # right to left: older weeks are negative
            break
        page.wait_for_timeout(100)
    else:
        raise AssertionError("the weeks did not scroll towards the older ones")
    page.wait_for_timeout(500)  # a smooth scroll ends before the jump to the oldest
    box.evaluate("el => el.scrollTo({left: -el.scrollWidth, behavior: 'instant'})")
    after = name.evaluate("el => el.getBoundingClientRect().toJSON()")
    assert after["left"] == before["left"] >= 0 and after["right"] <= PHONE["width"]
    assert name.text_content().startswith("Clarify the")
    oldest = chart.locator("g.pg-cell").first.evaluate("el => el.getBoundingClientRect().left")
    assert after["right"] <= oldest < PHONE["width"]
    save_screenshot(page, "progress-phone-oldest-weeks")
    assert errors == []
    context.close()
