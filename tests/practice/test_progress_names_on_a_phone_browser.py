"""The step pills on a 360 px phone show a number or ✓ for every step but the current one, and
each link still carries its step's name: a screen reader heard five links called
"✓ (submitted)" or "2", with nothing to tell Clarify from Architecture."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_each_step_link_keeps_its_name_on_a_phone(open_step):
    page, _attempt = open_step("architecture", username="phone-pills")
    page.set_viewport_size({"width": 360, "height": 800})
    progress = page.locator("#progress")
    clarify = progress.get_by_role("link", name=re.compile(r"^1\s+Clarify"))
    expect(clarify).to_have_count(1)
    # Out of sight on the phone, not out of the page's text: the pill is still narrow.
    label = clarify.locator(".progress-label")
    assert label.bounding_box()["width"] <= 1
    expect(progress.get_by_role("link", name=re.compile("Architecture"))).to_have_count(1)
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], widths
