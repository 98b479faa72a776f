"""An instructor removes, from the keyboard on a 360 px phone, a wrong idea the model found
that the answer does not hold: the idea leaves the grade and the candidate's feedback."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from accounts.instructors import instructor_grant
from review.services import review_store
from tests.conftest import save_screenshot, signed_in_context, watched_page
from tests.practice.test_layout_a11y_browser import _axe_serious

from .test_review_flow import ALL_MISS
from .test_wrong_idea_removal import GPU_UTIL, GPU_UTIL_IDEA, ROUND_ROBIN_IDEA, model_graded

pytestmark = pytest.mark.browser
PHONE = {"width": 360, "height": 740}

# Whether the page is wider than its viewport (a sideways scroll).
SCROLLS_SIDEWAYS = "() => document.documentElement.scrollWidth > window.innerWidth"


def test_an_instructor_removes_a_wrong_idea_from_the_keyboard_on_a_phone(browser, live_server_url):
    candidate = User.objects.create_user("reviewee")
    teacher = User.objects.create_user("teacher")
    instructor_grant(teacher)
    submission = model_graded(candidate)
    review_store(submission=submission, reviewer=teacher, labels=ALL_MISS, blind=True)

    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, teacher, bypass_csp=True)
    page = watched_page(context, errors)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server_url}/review/submissions/{submission.pk}/")
    kept = page.locator(".kept-wrong-ideas")
    expect(kept.locator("li")).to_have_count(2)
    save_screenshot(page, "review-wrong-ideas-desktop")

    page.set_viewport_size(PHONE)
    assert not page.evaluate(SCROLLS_SIDEWAYS)
    remove = page.get_by_role("button", name=f"Remove from the grade: {GPU_UTIL_IDEA}")
    box = remove.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    save_screenshot(page, "review-wrong-ideas-phone")
    assert _axe_serious(page) == []

    # From the last grader's audit link in the table, Tab reaches the button: no pointer.
    page.locator(".graders-compared thead a").last.focus()
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.ariaLabel || ''").endswith(GPU_UTIL_IDEA):
            break
    expect(remove).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.locator(".messages")).to_contain_text(
        f"Removed from the grade: “{GPU_UTIL_IDEA.rstrip('.')}”."
    )
    expect(kept.locator("li")).to_have_count(1)
    expect(kept).to_contain_text(ROUND_ROBIN_IDEA)
    expect(kept).not_to_contain_text(GPU_UTIL_IDEA)
    assert not page.evaluate(SCROLLS_SIDEWAYS)
    save_screenshot(page, "review-wrong-idea-removed-phone")
    assert submission.grades.get(grader="instructor").misconceptions[0]["id"] != GPU_UTIL["id"]

    # The candidate's feedback no longer states it.
    cand_context = signed_in_context(browser, live_server_url, candidate)
    cand_page = watched_page(cand_context, errors)
    cand_page.goto(f"{live_server_url}/attempts/{submission.answer.attempt_id}/steps/architecture/")
    feedback = cand_page.locator("#feedback")
    expect(feedback).to_contain_text(ROUND_ROBIN_IDEA)
    expect(feedback).not_to_contain_text(GPU_UTIL_IDEA)
    assert errors == []
    cand_context.close()
    context.close()
