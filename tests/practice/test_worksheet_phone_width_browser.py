"""A long worksheet line on a 360 px phone: its rendered maths scrolls inside its own box, and
the page does not scroll sideways (the lines' grid track grew to the widest line, 520 px)."""

import pytest

pytestmark = pytest.mark.browser

LONG = "t = " + " + ".join(f"15.2 GB / (0.7 * {1000 + i} GB/s)" for i in range(8)) + " in ms"


def test_a_long_worksheet_line_scrolls_in_its_own_box_on_a_phone(open_step):
    page, _attempt = open_step("estimate", username="phone-worksheet")
    page.set_viewport_size({"width": 360, "height": 800})
    page.wait_for_selector("html[data-ready]", state="attached")
    page.locator("#worksheet").fill(LONG)
    page.locator("#worksheet-lines .ws-math").first.wait_for()
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], widths
