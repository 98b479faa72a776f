"""The worksheet on a phone: a line's math wider than its row scrolls in a box that shows there
is more (a shade on the edge it continues past, no script needed) and that a keyboard reaches
and a screen reader names."""

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import save_screenshot, scrolls_with_a_hint

pytestmark = [pytest.mark.browser, pytest.mark.one_database]

LONG_SUM = "123456789+" * 40 + "1"


def test_a_long_lines_math_scrolls_in_a_named_focusable_box_with_a_hint(
    page, live_server_url
) -> None:
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server_url}/planner/")
    # fill fires the one input event the worksheet evaluates on: a second, sent once a loaded
    # machine let the first one's delay run out, swapped the box out mid-check.
    page.fill("#id_lines", "\n".join([LONG_SUM, "9" * 400, "2 GB / (4 GB/s) in ms"]))
    expect(page.locator("#ws-line-3 .pl-value")).to_have_text("= 500 ms")
    page.wait_for_function("document.documentElement.scrollWidth <= 360", timeout=5000)

    math = page.get_by_role("region", name="Line 1 as read (scrollable)")
    expect(math).to_have_count(1)
    # A keyboard reaches it from the form, past the Evaluate button.
    page.locator("#id_lines").focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Evaluate")).to_be_focused()
    page.keyboard.press("Tab")
    expect(math).to_be_focused()
    scrolls_with_a_hint(math)
    scrolls_with_a_hint(page.get_by_role("region", name="Line 2 as typed (scrollable)"))
    # A short line's box is still a box: nothing beyond it, so nothing is shaded past it.
    # A short line's box holds nothing beyond it: no stop for the keyboard, no region.
    short = page.locator("#ws-line-3 .pl-math")
    assert short.evaluate("el => el.scrollWidth <= el.clientWidth")
    assert short.get_attribute("tabindex") is None and short.get_attribute("role") is None
    # Wide enough for every line, none is a stop: a worksheet of many lines is not as many.
    page.set_viewport_size({"width": 1280, "height": 900})
    expect(page.get_by_role("region", name=re.compile("Line 3"))).to_have_count(0)
    page.locator("#ws-results").scroll_into_view_if_needed()
    save_screenshot(page, "worksheet-scroll-hint-360")
    page.set_viewport_size({"width": 1280, "height": 900})
    save_screenshot(page, "worksheet-scroll-hint-1280")
    assert page.js_errors == []
