"""The label-and-value rows (.brief-table: a question's brief, the grader's status) on a 360 px
phone: a short value keeps its width beside a long label, which wraps at its spaces instead
("never", not "nev" over "er"); a long value wraps within its share of the row."""

import pytest

from tests.conftest import watched_page

pytestmark = pytest.mark.browser

ROWS = """
<dl class="brief-table" id="rows">
  <div><dt>Last graded by the model on this server</dt><dd id="short">never</dd></div>
  <div><dt>Model</dt><dd id="name">Qwen2.5-7B-Instruct</dd></div>
  <div><dt>State</dt><dd id="long">down: candidates self-check for now, and the model grades
    their answers once it is back</dd></div>
</dl>
"""


def _lines(page, selector: str) -> int:
    """The lines the element's text is laid out on (a row's cells stretch to its height)."""
    return page.locator(selector).evaluate(
        """el => {
          const range = document.createRange();
          range.selectNodeContents(el);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        }"""
    )


def test_a_short_value_beside_a_long_label_is_not_broken_on_a_phone(browser, live_server_url):
    errors: list[str] = []
    page = watched_page(browser.new_context(viewport={"width": 360, "height": 800}), errors)
    page.goto(f"{live_server_url}/grader/")
    page.wait_for_selector("html[data-ready]")
    # The page's own rows depend on the grader's state: these are the shapes that matter,
    # laid out by the site's stylesheet in the page's card.
    page.locator("main .card").first.evaluate(
        "(card, rows) => card.insertAdjacentHTML('beforeend', rows)", ROWS
    )
    assert _lines(page, "#short") == 1
    assert _lines(page, "#name") == 1
    assert _lines(page, "#long") > 1  # it wraps, within the row
    assert _lines(page, "#rows dt >> nth=0") > 1  # the long label wraps at its spaces
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert errors == []
