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
