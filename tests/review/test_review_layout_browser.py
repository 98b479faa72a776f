"""The review pages' layout in a real browser: a candidate's long unbroken word leaves the
queue and the submission page their width, and on a 360 px phone the compared verdicts and the
calibration figures show every column without a sideways scroll, axe-clean."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from accounts.instructors import instructor_grant
from review.models import GradeDispute
from review.services import review_store
from tests.conftest import save_screenshot, signed_in_context, watched_page
from tests.practice.test_layout_a11y_browser import _axe_serious

from .conftest import make_submission
from .test_review_flow import ALL_MISS, ANSWER

pytestmark = pytest.mark.browser
PHONE = {"width": 360, "height": 740}
# A pasted link: one word of 400 characters, no place to break it.
LONG_URL = "https://example.com/" + "a" * 380

# The cells of the page's tables whose right edge lies past the viewport.
CUT_OFF = """(selector) => Array.from(document.querySelectorAll(selector))
    .map(c => [c.innerText.trim().slice(0, 40), c.getBoundingClientRect().right])
    .filter(([, right]) => right > window.innerWidth + 0.5)"""

# Each cell's column name and the label drawn before it ("none" where none is drawn).
LABELS = "tds => tds.map(td => [td.dataset.label, getComputedStyle(td, '::before').content])"


def signed_in_page(browser, live_server_url, user):
    """A page signed in as `user` whose context lets the test inject axe-core past the CSP."""
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, user, bypass_csp=True)
    return context, watched_page(context, errors), errors


def _people():
    candidate = User.objects.create_user("reviewee")
    teacher = User.objects.create_user("teacher")
    instructor_grant(teacher)
    return candidate, teacher


def test_a_long_unbroken_dispute_reason_leaves_the_pages_their_width(browser, live_server_url):
    candidate, teacher = _people()
    submission = make_submission(
        user=candidate, text=ANSWER, grades={"rubric": (0.09, {**ALL_MISS, "arch-gateway": "hit"})}
    )
    GradeDispute.objects.create(
        submission=submission, user=candidate, reason=f"The gateway is in my link: {LONG_URL}"
    )
    context, page, errors = signed_in_page(browser, live_server_url, teacher)
    widths = {}
    for size in (1280, 360):
        page.set_viewport_size({"width": size, "height": 800})
        for path in ("/review/chat-api-50qps/queue/", f"/review/submissions/{submission.pk}/"):
            page.goto(live_server_url + path)
            widths[(size, path)] = page.evaluate("document.documentElement.scrollWidth")
            save_screenshot(page, f"review-long-dispute-{size}-{path.split('/')[-2]}")
    assert all(w <= size for (size, _), w in widths.items()), widths
    # The queue's table holds the reason in its own width, not a scroll box 4000 px wide.
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(live_server_url + "/review/chat-api-50qps/queue/")
    table = page.locator(".review-queue")
    assert table.evaluate("t => t.scrollWidth <= t.clientWidth + 1"), table.evaluate(
        "t => [t.scrollWidth, t.clientWidth]"
    )
    assert errors == []
    context.close()


def test_on_a_phone_the_compared_verdicts_show_every_graders_column(browser, live_server_url):
    candidate, teacher = _people()
    submission = make_submission(
        user=candidate,
        text=ANSWER,
        review_reason="the model scored 73% and the offline rubric grader 9%: a gap of 64%",
        grades={
            "llm": (0.73, {**ALL_MISS, "arch-gateway": "hit", "arch-autoscale-queue": "hit"}),
            "rubric": (0.09, {**ALL_MISS, "arch-gateway": "hit"}),
            "self": (0.5, {**ALL_MISS, "arch-replicas": "partial"}),
        },
    )
    review_store(submission=submission, reviewer=teacher, labels=ALL_MISS)
    context, page, errors = signed_in_page(browser, live_server_url, teacher)
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server_url}/review/submissions/{submission.pk}/")
    save_screenshot(page, "review-compared-phone")
    table = page.locator(".graders-compared")
    assert page.evaluate(CUT_OFF, ".graders-compared td, .graders-compared tbody th") == []
    assert table.evaluate("t => t.scrollWidth <= t.clientWidth + 1")
    # Each verdict is named by its column where the row stacks.
    labels = table.locator("tbody tr").first.locator("td").evaluate_all(LABELS)
    assert [label for label, _ in labels] == [
        "Instructor: teacher",
        "Model grader",
        "Candidate's self-check",
        "Matcher, advisory",
    ]
    assert all(shown not in ("none", "normal") for _, shown in labels), labels
    # Each grader's heading, with its score and the link to its audit, stays in sight.
    audit = page.get_by_role("link", name="Model grader")
    box = audit.bounding_box()
    assert box is not None and box["width"] > 1 and 0 <= box["x"] <= box["x"] + box["width"] <= 360
    # Still a table to a screen reader, with its column headings.
    assert page.get_by_role("columnheader", name="Model grader").count() == 1
    assert page.get_by_role("rowheader").count() == len(ALL_MISS)
    assert _axe_serious(page) == []
    page.set_viewport_size({"width": 1280, "height": 900})
    page.reload()
    save_screenshot(page, "review-compared-laptop")
    assert page.evaluate(CUT_OFF, ".graders-compared td") == []
    # Where the columns fit, their headings name the cells: no label repeats them.
    labels = table.locator("tbody tr").first.locator("td").evaluate_all(LABELS)
    assert all(shown in ("none", "normal") for _, shown in labels), labels
    assert errors == []
    context.close()


def test_on_a_phone_the_calibration_figures_show_every_column(browser, live_server_url):
    candidate, teacher = _people()
    submission = make_submission(
        user=candidate,
        text=ANSWER,
        review_reason="a gap",
        grades={
            "rubric": (0.09, {**ALL_MISS, "arch-gateway": "hit"}),
            "self": (0.5, {**ALL_MISS, "arch-gateway": "hit"}),
        },
    )
    review_store(
        submission=submission, reviewer=teacher, labels={**ALL_MISS, "arch-gateway": "hit"}
    )
    context, page, errors = signed_in_page(browser, live_server_url, teacher)
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server_url}/review/chat-api-50qps/calibration/architecture/")
    page.get_by_role("button", name="Load the shipped labelled set").click()
    save_screenshot(page, "review-calibration-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    cells = "#run-rubric .data-table > tbody > tr > td, .self-check-points > tbody > tr > td"
    assert page.locator(cells).count() > 0
    assert page.evaluate(CUT_OFF, cells) == []
    assert page.evaluate(CUT_OFF, "#run-rubric .confusion td, .self-check-steps td") == []
    row = page.locator("#run-rubric .data-table > tbody > tr").first
    labels = row.locator(":scope > td").evaluate_all(LABELS)
    assert [label.split(" (")[0] for label, _ in labels] == ["n", "Agreement", "kappa", "Confusion"]
    assert all(shown not in ("none", "normal") for _, shown in labels), labels
    assert _axe_serious(page) == []
    page.set_viewport_size({"width": 1280, "height": 900})
    page.reload()
    save_screenshot(page, "review-calibration-laptop")
    assert errors == []
    context.close()
