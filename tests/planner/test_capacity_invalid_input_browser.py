"""The capacity planner when a field holds what the browser cannot send (out of its range,
blank where it is needed, not a number): the field is marked with its message and the plan
made from the inputs before stops showing, until the inputs plan again."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.one_database]

LAPTOP = {"width": 1280, "height": 900}


def _enter(page, selector: str, text: str) -> None:
    """Type `text` into a number field as a person does: a number field takes no fill() of
    text that is not a number, but a keyboard still puts what it can there."""
    box = page.locator(selector)
    box.fill("")
    box.focus()
    page.keyboard.type(text)
    box.press("Tab")


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("-5", "greater than or equal to 1e-4"),
        ("", "This field is required."),
        ("99999999999999", "less than or equal to 1,000,000,000"),
        # Chromium drops a digit of another script from a number box: the box is left blank.
        ("٣", "This field is required."),
        ("1e", "Enter a number, in the digits 0–9."),
    ],
)
def test_a_value_the_form_refuses_marks_the_field_and_takes_the_old_plan_away(
    page, live_server_url, typed, says
) -> None:
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server_url}/planner/capacity/")
    _enter(page, "#id_qps", "1000")
    expect(page.locator("#plan-n-gpu")).to_have_text("181")

    _enter(page, "#id_qps", typed)
    qps = page.locator("#id_qps")
    expect(qps).to_have_attribute("aria-invalid", "true")
    message = page.locator("#" + qps.get_attribute("aria-describedby"))
    expect(message).to_be_visible()
    expect(message).to_contain_text(says)
    # The plan for 1000 QPS is not left standing as if it were the answer to this input.
    expect(page.locator("#plan-n-gpu")).to_be_hidden()
    notice = page.locator("#plan-errors")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Check these inputs:")  # as the server words it
    expect(notice).to_contain_text("Peak QPS")
    expect(page.locator("#plan-announce")).not_to_contain_text("Planned")
    # Focus moved on with the Tab, as it does after any other change.
    expect(page.locator("#id_mean_qps")).to_be_focused()

    _enter(page, "#id_qps", "1000")
    expect(page.locator("#plan-n-gpu")).to_have_text("181")
    expect(page.locator("#plan-n-gpu")).to_be_visible()
    assert qps.get_attribute("aria-invalid") is None
    expect(page.locator("#id_qps_errors")).to_be_hidden()
    expect(page.locator("#plan-errors")).to_have_count(0)


def test_plan_pressed_with_a_refused_value_focuses_that_field(page, live_server_url) -> None:
    # The browser's own check stops the submit and focuses the field; the change the fill
    # made has marked it and put the old plan away (capacity.js).
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server_url}/planner/capacity/")
    page.fill("#id_rho", "7")
    page.get_by_role("button", name="Plan").click()
    rho = page.locator("#id_rho")
    expect(rho).to_be_focused()
    expect(rho).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#id_rho_errors")).to_contain_text("less than or equal to 1")
    expect(page.locator("#plan-heading")).to_be_hidden()
