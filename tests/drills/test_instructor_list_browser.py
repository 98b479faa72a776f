"""The instructor's list of candidates with a 150-character username, in a real browser: the
name wraps in its column at 1280 px, and at 360 px the table scrolls inside its own shaded
box, a named keyboard stop, while the page itself does not scroll sideways."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from accounts.instructors import instructor_grant
from tests.conftest import signed_in_context

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 360])
def test_a_long_username_keeps_the_candidates_page_in_the_window(browser, live_server_url, width):
    instructor = User.objects.create_user("teacher", password="a-long-Passphrase-42")
    instructor_grant(instructor)
    User.objects.create_user("a" * 150, password="a-long-Passphrase-42")
    context = signed_in_context(
        browser, live_server_url, instructor, viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    page.goto(f"{live_server_url}/drills/instructor/")
    page.wait_for_selector("html[data-ready]", state="attached")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    table = page.get_by_role("table", name="Candidates")
    assert table.count() == 1
    box = page.locator(".scroll-x[data-scroll-label]", has=table)
    assert box.count() == 1
    if width == 360:  # the box scrolls the table: a named stop for the keyboard
        assert page.get_by_role("region", name="Candidates (scrollable)").count() == 1
        assert box.evaluate("b => b.scrollWidth > b.clientWidth")
    context.close()
