"""The capacity planner's layout in a real Chromium: on a laptop the plan stands beside the
form, and no template source reaches the page."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.one_database]


def test_the_plan_stands_beside_the_form_and_no_template_comment_shows(
    page, live_server_url
) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server_url}/planner/capacity/")
    assert "{#" not in page.locator("main").inner_text()
    form = page.locator("form.pl-form").bounding_box()
    plan = page.locator("#plan-result").bounding_box()
    # The second column, level with the form: not a third row under it in the form's width.
    assert plan["x"] >= form["x"] + form["width"], (form, plan)
    assert plan["y"] < form["y"] + form["height"] / 2, (form, plan)
    assert page.js_errors == []


def test_every_derivation_value_is_in_view_beside_its_formula_on_a_laptop(
    page, live_server_url
) -> None:
    """At 1280 px the derivation fits its card: the formula column gives way (a formula wider
    than its share scrolls in its own row), never the value column, which the card's edge cut
    at "14.45 GFl"."""
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server_url}/planner/capacity/")
    wrap = page.locator("#plan-steps").locator("xpath=..")
    assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth"), wrap.evaluate(
        "w => [w.scrollWidth, w.clientWidth]"
    )
    right = wrap.evaluate("w => w.getBoundingClientRect().right")
    values = page.locator("#plan-steps td.pl-num output")
    edges = values.evaluate_all("os => os.map(o => o.getBoundingClientRect().right)")
    assert len(edges) == 39 and max(edges) <= right, (max(edges), right)
    # A formula that does not fit scrolls inside its own cell, not under the value.
    cells = page.locator("#plan-steps td.pl-math")
    assert cells.evaluate_all(
        "cs => cs.every(c => c.getBoundingClientRect().right <= c.nextElementSibling"
        ".getBoundingClientRect().left + 1)"
    )
    # ... and a keyboard reaches each one that does, by its step's name.
    wide = page.locator("#plan-steps .pl-step-math").evaluate_all(
        "bs => bs.filter(b => b.scrollWidth > b.clientWidth + 1)"
        ".map(b => [b.tabIndex, b.getAttribute('aria-label')])"
    )
    assert wide and all(tab == 0 and label.startswith("Formula: ") for tab, label in wide), wide
    assert page.js_errors == []
