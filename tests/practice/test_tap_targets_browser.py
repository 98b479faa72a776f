"""Tap targets of the step page at least 24 × 24 CSS px on a 360 px phone (WCAG 2.5.8): the
SLO card's peak/mean radios, the "The Mermaid text" disclosure under a diagram, the concept
links under a missed rubric point. The feedback parts are the templates' own markup, put in
the page's feedback place, so they are measured with the page's stylesheet."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

pytestmark = pytest.mark.browser

MISSED_POINT = """<section id="feedback" class="card feedback"><ul class="rubric-points">
<li class="rubric-point point-miss"><span class="verdict-tag">miss</span><div>
<p class="point-says">Sizes the KV cache per request.</p>
<p class="point-concepts">Read: <a class="chip" href="/concepts/kv-cache/">KV cache</a><a
class="chip" href="/concepts/batching/">Continuous batching</a></p></div></li></ul>
{figure}</section>"""


def sizes(page, selector: str) -> list[tuple[float, float]]:
    return page.eval_on_selector_all(
        selector,
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })",
    )


@pytest.mark.parametrize("width", [360, 1280])
def test_small_targets_are_at_least_24_px(open_step, width):
    page, _ = open_step("clarify")
    page.set_viewport_size({"width": width, "height": 740})
    figure = render_to_string(
        "interview/_diagram.html#figure",
        {"figure_picture": {"svg": "", "text": "flowchart LR\n  a --> b"}, "figure_label": "X"},
    )
    page.eval_on_selector(
        "#submit-result",
        "(el, html) => { el.innerHTML = html; }",
        MISSED_POINT.format(figure=figure),
    )
    targets = {
        "radio": "fieldset.qps-kind input[type=radio]",
        "summary": ".diagram-source summary",
        "concept link": ".point-concepts .chip",
    }
    for name, selector in targets.items():
        found = sizes(page, selector)
        assert found, name
        for w, h in found:
            assert w >= 24 and h >= 24, f"{name} is {w:.1f} x {h:.1f} px at {width} px"
    # The radios' labels stay one line beside the legend's words, and nothing runs off a phone.
    labels = sizes(page, "fieldset.qps-kind label")
    assert all(h < 40 for _, h in labels), labels
    assert page.evaluate("document.documentElement.scrollWidth") <= width
