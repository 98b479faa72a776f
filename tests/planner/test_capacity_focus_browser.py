"""The capacity planner after a plan the candidate asked for: the answer is brought into view
and focused, and a field at fault is marked beside itself, with or without htmx."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.one_database]

LAPTOP = {"width": 1280, "height": 900}
# An input the planner refuses is answered 422 (htmx swaps it in); Chromium logs that status
# as a console error, which is the page working, not a script failing.
REFUSED = "Failed to load resource: the server responded with a status of 422"

IN_VIEW = """e => { const r = e.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0; }"""


def _script_errors(page) -> list[str]:
    return [error for error in page.js_errors if not error.startswith(REFUSED)]


def _planned(page) -> None:
    page.wait_for_selector("html[data-ready]", state="attached")


def test_enter_on_a_refused_context_focuses_the_field_beside_its_message(
    page, live_server_url
) -> None:
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server_url}/planner/capacity/")
    page.fill("#id_context", "1000000")
    page.locator("#id_qps").press("Enter")
    context = page.locator("#id_context")
    expect(context).to_be_focused()
    expect(context).to_have_attribute("aria-invalid", "true")
    message = page.locator("#" + context.get_attribute("aria-describedby"))
    expect(message).to_contain_text("so 1,000,000 cannot be planned.")
    assert message.evaluate(IN_VIEW)
    assert context.evaluate(IN_VIEW)
    assert _script_errors(page) == []


def test_plan_at_the_bottom_of_the_form_focuses_the_plan_it_made(page, live_server_url) -> None:
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server_url}/planner/capacity/")
    page.fill("#id_context", "1000000")
    page.locator("#id_context").press("Enter")
    expect(page.locator("#id_context")).to_have_attribute("aria-invalid", "true")
    page.fill("#id_context", "8192")
    page.fill("#id_qps", "100")
    page.get_by_role("button", name="Plan").click()
    heading = page.locator("#plan-heading")
    expect(heading).to_be_focused()
    assert heading.evaluate(IN_VIEW)
    assert page.locator("#plan-n-gpu").inner_text() == "19"
    # The field is no longer at fault, and says so.
    context = page.locator("#id_context")
    assert context.get_attribute("aria-invalid") is None
    assert context.get_attribute("aria-describedby") is None
    assert page.locator("#id_context_errors").is_hidden()
    assert _script_errors(page) == []


def test_a_plan_made_on_leaving_a_field_marks_it_and_leaves_focus_where_it_went(
    page, live_server_url
) -> None:
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server_url}/planner/capacity/")
    page.fill("#id_context", "1000000")
    page.locator("#id_context").press("Tab")
    context = page.locator("#id_context")
    expect(context).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#id_context_errors")).to_contain_text("cannot be planned")
    _planned(page)
    expect(page.locator("#id_mem_util")).to_be_focused()
    assert _script_errors(page) == []


def test_without_javascript_the_new_page_opens_at_the_plan(browser, live_server_url) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 360, "height": 740})
    page = context.new_page()
    page.goto(f"{live_server_url}/planner/capacity/")
    page.fill("#id_context", "1000000")
    page.get_by_role("button", name="Plan").click()
    page.wait_for_url("**/planner/capacity/?*#plan-result")
    assert page.locator("#plan-errors").evaluate(IN_VIEW)
    field = page.locator("#id_context")
    assert field.get_attribute("aria-invalid") == "true"
    message = page.locator("#" + field.get_attribute("aria-describedby"))
    assert "cannot be planned" in message.inner_text()
    context.close()
