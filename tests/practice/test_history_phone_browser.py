"""The History page's attempts on a phone (360 px): the table scrolls inside the site's one
scroll box (.scroll-x), which shades the edge with more beyond it, as the simulator's does."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tests.conftest import save_screenshot, scrolls_with_a_hint, signed_in_context, watched_page
from tests.drills.factories import graded_submission

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 740}


def test_the_attempts_table_scrolls_with_a_hint_on_a_phone(browser, live_server_url):
    user = User.objects.create_user("phone-history", password="a-long-Passphrase-42")
    graded_submission(user=user, at=timezone.now() - timedelta(hours=1), step="clarify",
                      grades={"llm": 0.9})  # fmt: skip
    context = signed_in_context(browser, live_server_url, user, viewport=PHONE)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/history/")

    box = page.get_by_role("region", name="Attempts (scrollable)")
    table = box.locator("table.data-table")
    assert table.evaluate("el => el.scrollWidth <= el.clientWidth")  # the box scrolls, not it
    assert table.get_attribute("tabindex") is None  # one keyboard stop: the box
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    scrolls_with_a_hint(box)
    # The question that names the row reads in a few lines, not a word a line, and its
    # scorecard link sits below it rather than running on from the title.
    question = table.locator("tbody th[scope=row]").first
    assert question.evaluate("el => el.getBoundingClientRect().width") >= 170
    title = question.locator("a").first.bounding_box()
    links = question.locator(".attempt-links").bounding_box()
    assert links["y"] >= title["y"] + title["height"] - 1
    save_screenshot(page, "history-phone-attempts")
    assert errors == []
    context.close()
