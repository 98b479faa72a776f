"""The review path in a real browser: a flagged submission waits in the queue; the instructor
labels it without seeing either grader, with a word to the candidate, then sees both beside
their own verdicts; the candidate's grade becomes the instructor's, with the notice and the
word; the calibration page counts it and offers the labelled set the question ships with."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from accounts.instructors import instructor_grant
from practice.scoring import GRADE_LABELS
from review.services import grade_dispute
from tests.conftest import save_screenshot, signed_in_context, watched_page

from .conftest import make_submission
from .test_review_flow import ALL_MISS, ANSWER

pytestmark = pytest.mark.browser
DISPUTE = "The matcher missed that I covered the gateway's rate limits in my second paragraph."


def signed_in_page(browser, live_server_url, user):
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, user)
    return context, watched_page(context, errors), errors


def flagged(*, review_reason: str, grades: dict):
    """A candidate, an instructor, and the candidate's ANSWER flagged for review."""
    candidate = User.objects.create_user("reviewee")
    teacher = User.objects.create_user("teacher")
    instructor_grant(teacher)
    submission = make_submission(
        user=candidate, text=ANSWER, review_reason=review_reason, grades=grades
    )
    return candidate, teacher, submission


def test_a_flagged_submission_is_reviewed_blind_and_the_verdict_reaches_the_candidate(
    browser, live_server_url
):
    candidate, teacher, submission = flagged(
        review_reason="the model scored 73% and the offline rubric grader 9%: a gap of 64%",
        grades={
            "llm": (0.73, {**ALL_MISS, "arch-gateway": "hit", "arch-autoscale-queue": "hit"}),
            "rubric": (0.09, {**ALL_MISS, "arch-gateway": "hit"}),
        },
    )
    attempt = submission.answer.attempt

    context, page, errors = signed_in_page(browser, live_server_url, teacher)
    page.goto(f"{live_server_url}/review/chat-api-50qps/queue/")
    expect(page.locator(".review-queue")).to_contain_text("disagree by more than 0.4")
    page.get_by_role("link", name=f"Label submission {submission.pk}").click()

    # Blind: the answer and the rubric, nothing of what either grader said.
    expect(page.locator(".review-answer")).to_contain_text("vllm:num_requests_waiting")
    body = page.locator("main").inner_text()
    assert "73%" not in body and "Model grader" not in body and "Matcher" not in body
    for point_id in ALL_MISS:
        verdict = {"arch-gateway": "hit", "arch-autoscale-queue": "partial"}.get(point_id, "miss")
        page.locator(f'input[name="point-{point_id}"][value="{verdict}"]').check()
    page.get_by_label("A word to the candidate").fill(
        "The queue-depth signal is right; say which metric the autoscaler reads."
    )
    page.get_by_role("button", name="Save my verdicts").click()

    # Now both graders, beside the instructor's verdicts.
    table = page.locator(".graders-compared")
    expect(table).to_contain_text("Model grader")
    expect(table).to_contain_text("Matcher, advisory")
    expect(table).to_contain_text("Instructor")
    expect(page.locator(".messages")).to_contain_text("Your verdicts are saved.")
    expect(page.locator("main")).to_contain_text("Your verdict is now the candidate's grade")
    save_screenshot(page, "review-side-by-side")

    # The candidate's feedback: the instructor's grade (gateway 1 + queue partial 2 x 0.5 of
    # 11 weight = 18%), said to be an instructor's review.
    cand_context, cand_page, cand_errors = signed_in_page(browser, live_server_url, candidate)
    cand_page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/architecture/")
    feedback = cand_page.locator("#feedback")
    expect(feedback.locator(".reviewed-notice")).to_contain_text("Reviewed by an instructor")
    expect(feedback.locator(".review-comment")).to_contain_text("say which metric the autoscaler")
    expect(feedback.locator(".score")).to_have_text("18%")
    expect(feedback.locator(".score-line")).to_contain_text(GRADE_LABELS["instructor"])

    # The calibration page counts the labelled answer, and measured the offline grader on it.
    page.goto(f"{live_server_url}/review/chat-api-50qps/calibration/architecture/")
    expect(page.locator(".labels-count")).to_contain_text("1 labelled answer for this step, 1 from")
    expect(page.locator("#run-rubric .run-n")).to_have_text("1")
    # A new install is offered the labelled set that ships with the question.
    page.get_by_role("button", name="Load the shipped labelled set").click()
    expect(page.locator(".messages")).to_contain_text("Loaded the shipped labelled set")
    shipped = int(page.locator("#run-rubric .run-n").inner_text())
    assert shipped >= 13  # the 12 or more shipped answers for the step, and the reviewed one
    expect(page.locator(".labels-count")).to_contain_text(f"{shipped} labelled answers")
    assert errors == [] and cand_errors == []
    cand_context.close()
    context.close()


def test_on_a_phone_the_queue_shows_each_label_link_without_scrolling_sideways(
    browser, live_server_url
):
    _candidate, teacher, submission = flagged(
        review_reason="the model's reply could not be used (invalid JSON); the self-check counts",
        grades={"rubric": (0.09, {**ALL_MISS, "arch-gateway": "hit"})},
    )
    context, page, errors = signed_in_page(browser, live_server_url, teacher)
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server_url}/review/chat-api-50qps/queue/")
    link = page.get_by_role("link", name=f"Label submission {submission.pk}")
    box = link.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360, box
    save_screenshot(page, "review-queue-phone")
    assert errors == []
    context.close()


def test_on_a_laptop_a_long_dispute_leaves_the_label_button_on_one_line(browser, live_server_url):
    # It stood "Label / submission 8" two lines high in a narrow first column.
    candidate = User.objects.create_user("reviewee")
    teacher = User.objects.create_user("teacher")
    instructor_grant(teacher)
    submission = make_submission(
        user=candidate, text=ANSWER, grades={"rubric": (0.09, {**ALL_MISS, "arch-gateway": "hit"})}
    )
    grade_dispute(user=candidate, submission=submission, reason=" ".join([DISPUTE] * 4))
    context, page, errors = signed_in_page(browser, live_server_url, teacher)
    page.goto(f"{live_server_url}/review/chat-api-50qps/queue/")
    link = page.get_by_role("link", name=f"Label submission {submission.pk}")
    line = link.evaluate("a => parseFloat(getComputedStyle(a).lineHeight)")
    box = link.bounding_box()
    assert box is not None and box["height"] < 2 * line, (box, line)
    assert errors == []
    context.close()
