"""The drills' two small forms in a real browser: a refused replay seed brings focus back to
the seed box, and the Check button keeps the site's gap below the answer box."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from drills import services
from tests.conftest import save_screenshot, signed_in_context, watched_page

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 900}


def test_a_refused_replay_seed_puts_focus_back_in_the_seed_box(browser, live_server_url):
    """Focus landed on the page's body, so the candidate had to find the box again to
    correct what they typed."""
    user = User.objects.create_user("bad-seeds", password="a-long-Passphrase-42")
    context = signed_in_context(browser, live_server_url, user)
    errors: list[str] = []
    page = watched_page(context, errors)
    for seed in ("abc", "1e400", "-5", "9" * 10_000):
        page.goto(f"{live_server_url}/drills/")
        page.get_by_text("Replay a drill by its seed").click()
        page.locator("#replay-seed").fill(seed)
        page.locator("#replay-seed").press("Enter")
        expect(page.locator("#replay-error")).to_contain_text("A seed is a whole number")
        expect(page.locator("#replay-seed")).to_be_focused()
        expect(page.locator("#replay-seed")).to_have_value(seed[:100])
    # The refused form's page is a 422, which Chromium logs; nothing else may be.
    assert [e for e in errors if "status of 422" not in e] == []
    context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["360", "1280"])
def test_the_check_button_has_the_sites_form_gap_below_the_answer_box(
    browser, live_server_url, viewport
):
    """The button touched the box's bottom edge (and its focus ring at 360 px); the site's
    forms keep a field's margin (site.css .field) above their buttons."""
    user = User.objects.create_user("gaps", password="a-long-Passphrase-42")
    drill_set = services.drill_set_start(user=user, kind="n_inst")
    context = signed_in_context(browser, live_server_url, user, viewport=viewport)
    page = watched_page(context, [])
    page.goto(f"{live_server_url}/drills/sets/{drill_set.pk}/")
    box = page.locator("#answer-1").bounding_box()
    button = page.locator("#drill-1").get_by_role("button", name="Check").bounding_box()
    rem = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert button["y"] - (box["y"] + box["height"]) >= rem
    save_screenshot(page, f"drills-check-gap-{viewport['width']}")
    context.close()
