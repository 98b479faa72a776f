"""Where the load-test panel sits on the bottlenecks step: below the step's heading, its
prompt and the answer box, set apart from them, at a phone's width and a desktop's."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.conftest import save_screenshot, signed_in_context, watched_page

pytestmark = pytest.mark.browser


def test_the_panel_comes_after_the_question_and_the_answer_box(browser, live_server_url):
    from practice import services as flow
    from questions.models import Question

    user = User.objects.create_user("placed", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    context = signed_in_context(browser, live_server_url, user)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/bottlenecks/")
    panel = page.locator("#simulator-panel")
    expect(panel.locator("#sim-form")).to_be_visible()

    for width in (360, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        top = panel.bounding_box()["y"]
        for above in ("#step-heading", ".prompt", "#answer-text", "#submit-button"):
            box = page.locator(above).bounding_box()
            assert box["y"] + box["height"] <= top, f"{above} at {width} px"
        # Spaced from the Submit row above it, not touching it.
        actions = page.locator("#submit-button").bounding_box()
        assert top - (actions["y"] + actions["height"]) >= 16, f"gap at {width} px"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        save_screenshot(page, f"simulator-panel-placement-{width}")
    assert errors == []
    context.close()
