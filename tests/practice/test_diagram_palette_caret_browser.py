"""The architecture step's palette after a reload: the diagram box's caret is at 0, above
`flowchart LR`, and "+ Metrics" put its line there, which broke the diagram (and autosaved
the broken text). A line goes after the header when the caret is on or above it, at the caret
when it is below; and a second press of the same button (a double-click) adds no copy."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

DIAGRAM = "flowchart LR\n    client[Clients] --> gw[API gateway]\n"
METRICS = "    metrics[(Metrics: Prometheus)]\n"


def _ready_with(page, text: str):
    page.wait_for_selector("html[data-ready]", state="attached")
    box = page.locator("#diagram-text")
    box.fill(text)
    return box


def test_a_component_goes_below_the_header_when_the_caret_is_above_it(open_step):
    page, _attempt = open_step("architecture", username="palette-caret")
    box = _ready_with(page, DIAGRAM)
    # Where a reload leaves the caret: at the start of the text, before the header.
    box.evaluate("el => el.setSelectionRange(0, 0)")
    page.get_by_role("button", name="+ Metrics").click()
    expect(box).to_have_value(DIAGRAM + METRICS)
    expect(page.locator("#diagram-picture svg text", has_text="Metrics: Prometheus")).to_have_count(
        1
    )
    expect(page.locator("#diagram-error")).to_have_text("")

    # On the header line itself, at its end: the same.
    box.evaluate("el => el.setSelectionRange(12, 12)")
    page.get_by_role("button", name="+ Router").click()
    expect(box).to_have_value(DIAGRAM + METRICS + "    router[Router: policy]\n")


def test_a_component_goes_at_the_caret_below_the_header(open_step):
    page, _attempt = open_step("architecture", username="palette-below")
    box = _ready_with(page, DIAGRAM)
    after_header = len("flowchart LR\n")
    box.evaluate(f"el => el.setSelectionRange({after_header}, {after_header})")
    page.get_by_role("button", name="+ Metrics").click()
    expect(box).to_have_value("flowchart LR\n" + METRICS + DIAGRAM[after_header:])


def test_a_double_click_adds_the_component_once(open_step):
    page, _attempt = open_step("architecture", username="palette-twice")
    box = _ready_with(page, DIAGRAM)
    box.press("End")
    page.get_by_role("button", name="+ Gateway").dblclick()
    expect(box).to_have_value(DIAGRAM + "    gateway[API gateway]\n")
    page.get_by_role("button", name="+ Gateway").click()
    expect(box).to_have_value(DIAGRAM + "    gateway[API gateway]\n")
