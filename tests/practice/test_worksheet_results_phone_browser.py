"""The napkin-math worksheet on a 360 px phone: a line's result ("flops_lm = 18.28 TFLOP/req")
ran past the right edge of its row, where nothing scrolled, so its end could not be read. A
result wraps inside its row; a worked-out formula wider than the row scrolls in its own box,
which is a keyboard stop with a name while it holds more than it shows."""

from __future__ import annotations

import pytest

from tests.conftest import save_screenshot

pytestmark = pytest.mark.browser

WORKSHEET = "\n".join(
    [
        "flops_per_request_long_name = 2 * 7.6e9 * 1400 * 1 FLOP / request",
        "kv_pool = vram * mem_util - W - reserve - W_awq - W_awq - W_awq - reserve",
        "tpot_long_name = W / (eta * bw) in ms",
    ]
)

# Per row: how far its result and its formula reach past the row's inner right edge, and
# whether a formula wider than its box can be reached by the keyboard.
MEASURE = """() => Array.from(document.querySelectorAll('#worksheet-lines .ws-line')).map(row => {
  const edge = row.getBoundingClientRect().right - parseFloat(getComputedStyle(row).paddingRight);
  const value = row.querySelector('.ws-value');
  const math = row.querySelector('.ws-math');
  return {
    text: row.innerText,
    row_over: row.scrollWidth - row.clientWidth,
    value_over: value ? value.getBoundingClientRect().right - edge : 0,
    value_clipped: value ? value.scrollWidth - value.clientWidth : 0,
    math_over: math ? math.getBoundingClientRect().right - edge : 0,
    math_scrolls: math ? math.scrollWidth > math.clientWidth + 1 : false,
    math_stop: math ? math.tabIndex === 0 && !!math.getAttribute('aria-label') : false,
  };
})"""


def test_long_worksheet_results_wrap_inside_their_rows_on_a_phone(open_step):
    page, _attempt = open_step("estimate", username="phone-results")
    page.set_viewport_size({"width": 360, "height": 800})
    page.wait_for_selector("html[data-ready]", state="attached")
    page.locator("#worksheet").fill(WORKSHEET)
    page.locator("#worksheet-lines .ws-value", has_text="tpot_long_name").wait_for()
    rows = page.evaluate(MEASURE)
    assert len(rows) == 3, rows
    for row in rows:
        assert row["row_over"] <= 1, row
        assert row["value_over"] <= 1, row
        assert row["value_clipped"] <= 1, row
        assert row["math_over"] <= 1, row
        if row["math_scrolls"]:
            assert row["math_stop"], row
    assert any(row["math_scrolls"] for row in rows), "no formula is wider than a phone"
    save_screenshot(page, "worksheet-results-360")
