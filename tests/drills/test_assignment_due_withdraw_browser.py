"""An assignment's due date and its withdrawal on a 360 px phone, by keyboard: the date field
follows the note, the due date and "Overdue" read on both sides, and Withdraw opens its
confirmation before anything is withdrawn; nothing widens the page."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from drills import services
from drills.models import Assignment
from tests.conftest import save_screenshot, signed_in_context, watched_page
from tests.drills.factories import fix_drills_clock

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 740}
NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)  # a Monday


@pytest.fixture
def fixed_clock(monkeypatch):
    """The drills' clock fixed at NOW; the live server runs in this process and reads it."""
    fix_drills_clock(monkeypatch, NOW)


def focused(page) -> str:
    """What the focused element is: its id, else its words."""
    return page.evaluate("document.activeElement.id || document.activeElement.textContent")


def fits(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_due_date_set_by_keyboard_reads_on_both_sides_on_a_phone(
    browser, live_server_url, fixed_clock, instructor
):
    learner = User.objects.create_user("learner")
    Assignment.objects.create(  # given a week ago, due two days ago
        instructor=instructor,
        candidate=learner,
        kind="n_inst",
        created_at=NOW - timedelta(days=7),
        due_on=date(2026, 12, 5),
    )
    errors: list[str] = []
    page = watched_page(
        signed_in_context(browser, live_server_url, instructor, viewport=PHONE), errors
    )
    page.goto(f"{live_server_url}/drills/instructor/candidates/{learner.pk}/")
    page.wait_for_selector("html[data-ready]", state="attached")
    page.locator("#assign-what").select_option("drill:ttft")
    page.locator("#assign-note").focus()
    page.keyboard.press("Tab")
    assert focused(page) == "assign-due"
    page.locator("#assign-due").fill("2026-12-10")
    # Chromium's date field takes Tab through its month, day and year first.
    for _ in range(4):
        page.keyboard.press("Tab")
        if focused(page) == "Assign":
            break
    assert focused(page) == "Assign"
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text(
        "Assigned 5 drills: TTFT from prefill to learner (due Thu Dec 10)."
    )
    given = page.get_by_test_id("given")
    expect(given).to_contain_text("Not started. Due Thu Dec 10")
    expect(given.locator(".given-overdue")).to_contain_text("Overdue: it was due Sat Dec 5")
    fits(page)
    save_screenshot(page, "assignment-due-instructor-phone")

    page = watched_page(
        signed_in_context(browser, live_server_url, learner, viewport=PHONE), errors
    )
    page.goto(f"{live_server_url}/drills/")
    page.wait_for_selector("html[data-ready]", state="attached")
    assigned = page.get_by_test_id("assignments")
    expect(assigned.locator(".due").first).to_have_text("Due Thu Dec 10.")
    expect(assigned.locator(".due-overdue")).to_have_text("Overdue: it was due Sat Dec 5.")
    fits(page)
    save_screenshot(page, "assignment-due-candidate-phone")
    assert errors == []


def test_withdraw_opens_a_confirmation_then_withdraws_by_keyboard_on_a_phone(
    browser, live_server_url, fixed_clock, instructor
):
    learner = User.objects.create_user("learner")
    assignment = services.assignment_create(
        instructor=instructor, candidate=learner, kind="ttft", note="Prefill, then TTFT"
    )
    errors: list[str] = []
    page = watched_page(
        signed_in_context(browser, live_server_url, instructor, viewport=PHONE), errors
    )
    page.goto(f"{live_server_url}/drills/instructor/candidates/{learner.pk}/")
    page.wait_for_selector("html[data-ready]", state="attached")
    confirm = page.get_by_role("button", name="Yes, withdraw 5 drills: TTFT from prefill")
    expect(confirm).to_be_hidden()  # the first press only opens the confirmation
    page.get_by_role("button", name="Assign").focus()
    page.keyboard.press("Tab")
    assert focused(page).startswith("Withdraw")
    page.keyboard.press("Enter")
    expect(confirm).to_be_visible()
    assignment.refresh_from_db()
    assert assignment.withdrawn_at is None
    fits(page)
    box = confirm.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    save_screenshot(page, "assignment-withdraw-confirm-phone")
    page.keyboard.press("Tab")
    assert focused(page).startswith("Yes, withdraw")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text(
        "Withdrew 5 drills: TTFT from prefill from learner"
    )
    expect(page.get_by_test_id("given")).to_contain_text("Withdrawn Dec 7")
    expect(page.locator("summary", has_text="Withdraw")).to_have_count(0)
    assignment.refresh_from_db()
    assert assignment.withdrawn_at == NOW
    fits(page)

    page = watched_page(
        signed_in_context(browser, live_server_url, learner, viewport=PHONE), errors
    )
    page.goto(f"{live_server_url}/drills/")
    page.wait_for_selector("html[data-ready]", state="attached")
    expect(page.get_by_text("assigned you")).to_have_count(0)
    assert errors == []
