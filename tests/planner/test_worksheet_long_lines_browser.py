"""The worksheet on a phone: a line far wider than the screen stays in its own row."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.one_database]


def test_a_line_of_400_digits_scrolls_in_its_own_box_on_a_phone(page, live_server_url) -> None:
    """One line of 400 nines, a 300-character comment and a 41-term sum: each wraps or scrolls
    inside its own row, the page keeps the phone's width, and the error is on screen."""
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server_url}/planner/")
    page.fill("#id_lines", "\n".join(["9" * 400, "# " + "c" * 300, "123456789+" * 40 + "1"]))
    message = page.locator("#ws-line-1 .pl-message")
    expect(message).to_have_text("The number at column 1 has more than 30 digits.")
    expect(page.locator("#ws-line-3 .pl-value")).to_be_visible()
    # Waited for rather than read once: on a loaded machine the results can be measured before
    # the page has laid out the swap. A page that stays wider fails here.
    page.wait_for_function("document.documentElement.scrollWidth <= 360", timeout=5000)
    box = message.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 360, box
    # The source line scrolls sideways in its box, its caret with it.
    source = page.locator("#ws-line-1 .pl-source")
    assert source.evaluate("s => s.scrollWidth > s.clientWidth")
    assert page.js_errors == []
