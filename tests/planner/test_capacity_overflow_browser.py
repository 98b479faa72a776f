"""The capacity planner when a number box holds a number past a double's range (1e400, ten
thousand digits), which the browser reads as no number at all (badInput): the box is told the
server's range message, not "Enter a number", and an optional box, blank before, is told too
rather than left looking as if the old plan used it."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from planner.forms import CapacityForm

pytestmark = [pytest.mark.browser, pytest.mark.one_database]

LAPTOP = {"width": 1280, "height": 900}
MAX_QPS = "less than or equal to 1,000,000,000"


def _type(page, selector: str, text: str) -> None:
    box = page.locator(selector)
    box.fill("")
    box.focus()
    if len(text) > 100:  # as pasted: ten thousand keystrokes take minutes
        page.keyboard.insert_text(text)
    else:
        page.keyboard.type(text)


def _planned(page, live_server_url) -> None:
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server_url}{reverse('planner:capacity')}")
    expect(page.locator("#plan-n-gpu")).to_be_visible()


@pytest.mark.parametrize("typed", ["1e400", "9" * 10_000])
def test_a_required_box_given_a_number_too_large_says_the_range(page, live_server_url, typed):
    _planned(page, live_server_url)
    _type(page, "#id_qps", typed)
    page.keyboard.press("Tab")
    qps = page.locator("#id_qps")
    expect(qps).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#id_qps_errors")).to_contain_text(MAX_QPS)
    expect(page.locator("#plan-n-gpu")).to_be_hidden()
    expect(page.locator("#id_mean_qps")).to_be_focused()  # the Tab still moved on


def test_a_required_box_given_letters_still_says_enter_a_number(page, live_server_url):
    _planned(page, live_server_url)
    _type(page, "#id_qps", "1e")
    page.keyboard.press("Tab")
    expect(page.locator("#id_qps_errors")).to_contain_text("Enter a number, in the digits 0–9.")


@pytest.mark.parametrize(
    ("name", "typed"),
    [("knee_tok_s", "1e400"), ("usd_per_gpu_hour", "1e999999"), ("context", "1e400")],
)
def test_a_box_given_a_number_too_large_says_what_the_server_says(
    page, live_server_url, name, typed
):
    says = CapacityForm.base_fields[name].error_messages["max_value"]
    _planned(page, live_server_url)
    _type(page, f"#id_{name}", typed)
    page.keyboard.press("Tab")
    box = page.locator(f"#id_{name}")
    expect(box).to_have_attribute("aria-invalid", "true")
    expect(page.locator(f"#id_{name}_errors")).to_have_text(says)
    # The plan made before is put away behind what to fix, as for any refused input.
    expect(page.locator("#plan-n-gpu")).to_be_hidden()
    expect(page.locator("#plan-errors")).to_contain_text("Check these inputs:")

    # Fixed, the box plans again and its message goes.
    box.fill("")
    box.press("Tab")
    if CapacityForm.base_fields[name].required:
        box.fill("8192")
        box.press("Tab")
    expect(page.locator("#plan-n-gpu")).to_be_visible()
    expect(page.locator(f"#id_{name}_errors")).to_be_hidden()


def test_enter_in_an_optional_box_too_large_tells_it_beside_the_box(page, live_server_url):
    _planned(page, live_server_url)
    _type(page, "#id_knee_tok_s", "1e400")
    page.keyboard.press("Enter")
    box = page.locator("#id_knee_tok_s")
    expect(box).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#id_knee_tok_s_errors")).to_contain_text(MAX_QPS)
    expect(page.locator("#plan-n-gpu")).to_be_hidden()
