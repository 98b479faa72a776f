"""The mock report on a 360 px phone: each of its tables sits in the site's sideways-scroll
box (.scroll-x), which shades the edge with more beyond it and, while it overflows, is a named
keyboard stop; so a table wider than the phone shows that it scrolls instead of being cut. The
"By dimension" table is narrow enough not to need it: its scores are in view."""

import pytest
from playwright.sync_api import expect

from tests.conftest import signed_in_context, watched_page
from tests.mocks.test_mock_report import seeded  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser


def test_the_report_tables_scroll_in_a_labelled_box_on_a_phone(
    browser,
    live_server_url,
    seeded,  # noqa: F811
):
    errors: list[str] = []
    page = watched_page(signed_in_context(browser, live_server_url, seeded.attempt.user), errors)
    page.set_viewport_size({"width": 360, "height": 800})
    page.goto(f"{live_server_url}/mock/{seeded.pk}/report/")
    tables = page.locator("main table.data-table")
    assert tables.count() >= 3
    boxed = page.locator("main .scroll-x[data-scroll-label] > table.data-table")
    assert boxed.count() == tables.count()
    # The dimensions' table fits the phone whole: each column, the scores among them, in view
    # without a sideways scroll (where each score comes from is told under its dimension).
    dims = page.locator("section[aria-labelledby='dims-h'] .scroll-x")
    assert dims.evaluate("b => b.scrollWidth <= b.clientWidth")
    expect(dims).not_to_have_attribute("role", "region")
    heads = dims.locator("th[scope='col']")
    assert heads.all_inner_texts() == ["Dimension", "Score", "Interviewer"]
    for head in heads.all():
        box = head.bounding_box()
        assert box and box["x"] + box["width"] <= 360
    # The page itself does not scroll sideways.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert errors == []
