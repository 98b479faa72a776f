"""Rendered Markdown wider than a phone: a display formula or a code block that overflows
its column becomes the site's sideways-scroll box (scroll.js), shaded at the edge with more
beyond it, over the colour behind it, and a named keyboard stop; one that fits stays plain."""

import pytest

from tests.conftest import scrolls_with_a_hint, watched_page

pytestmark = pytest.mark.browser


def _phone(browser, url: str, errors: list[str]):
    page = watched_page(browser.new_context(viewport={"width": 360, "height": 800}), errors)
    page.goto(url)
    page.wait_for_selector("html[data-ready]")
    return page


def test_a_formula_and_a_code_block_wider_than_a_phone_scroll_with_a_hint(browser, live_server_url):
    errors: list[str] = []
    page = _phone(browser, f"{live_server_url}/concepts/cold-starts/", errors)
    wide = page.locator('.prose math[display="block"].scroll-x')
    assert wide.count() >= 1
    box = wide.first
    assert box.get_attribute("role") == "region"
    assert box.get_attribute("aria-label") == "Formula (scrolls sideways)"
    # The covers are the page's own colour: the note sits on the page, not on a card.
    assert box.evaluate(
        "el => getComputedStyle(el).getPropertyValue('--scroll-bg').trim()"
        " === getComputedStyle(document.body).backgroundColor"
    )
    scrolls_with_a_hint(box)

    page = _phone(browser, f"{live_server_url}/concepts/concurrency-knee/", errors)
    # A formula or code block that fits is no box, no stop and no region.
    plain = page.locator('.prose :is(pre, math[display="block"]):not(.scroll-x)')
    assert plain.count() >= 1
    for fits in plain.all():
        assert fits.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
        assert fits.get_attribute("tabindex") is None and fits.get_attribute("role") is None
    code = page.locator(".prose pre.scroll-x").first
    assert code.get_attribute("aria-label") == "Code (scrolls sideways)"
    scrolls_with_a_hint(code)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert errors == []
