"""htmx settles a swap by copying a few attributes of the element it replaces onto the new
one. A style the browser or a script set through the CSSOM (a textarea dragged taller, an
extension's marking) is allowed by the site's CSP; copied as a style attribute it is an
inline style the CSP refuses, logged on the console at every swap."""

import pytest

from tests.conftest import watched_page

pytestmark = pytest.mark.browser


def test_a_swap_copies_no_style_attribute(open_step):
    opened, _ = open_step("architecture")
    errors: list[str] = []
    page = watched_page(opened.context, errors)  # the same step, its console watched
    page.goto(opened.url)
    page.locator("#save-status").evaluate("el => { el.style.outline = '1px solid red'; }")
    with page.expect_response("**/draft/"):
        page.locator("#answer-text").fill("A gateway, then a router.")
    page.wait_for_timeout(300)
    assert [e for e in errors if "style" in e] == []
