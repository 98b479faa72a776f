"""A note is the instructor's words, in any direction: it cannot reorder the page's own words
after it. A note holding a right-to-left override (kept as stored: older notes were not
cleaned) once showed "Due today, Mon Dec 7." mirrored on the candidate's pages."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.contrib.auth.models import User

from drills import services
from drills.models import Assignment
from tests.conftest import save_screenshot, signed_in_context, watched_page
from tests.drills.factories import fix_drills_clock

pytestmark = pytest.mark.browser

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)  # a Monday

# The left edges of "Due" and of "today" in the first `selector` on the page, read from a
# Range over each word of its text: left to right, "Due" is left of "today".
WORD_EDGES = """selector => {
  const node = [...document.querySelector(selector).childNodes]
    .find(n => n.nodeType === Node.TEXT_NODE && n.data.includes("Due today"));
  const start = node.data.indexOf("Due today");
  const edge = (from, to) => {
    const range = document.createRange();
    range.setStart(node, start + from);
    range.setEnd(node, start + to);
    return range.getBoundingClientRect().left;
  };
  return [edge(0, 3), edge(4, 9)];
}"""


@pytest.fixture
def fixed_clock(monkeypatch):
    """The drills' clock fixed at NOW; the live server runs in this process and reads it."""
    fix_drills_clock(monkeypatch, NOW)


@pytest.mark.parametrize("width", [360, 1280])
def test_the_words_after_a_note_with_an_override_read_left_to_right(
    browser, live_server_url, fixed_clock, instructor, width
):
    learner = User.objects.create_user("learner")
    assignment = Assignment.objects.create(
        instructor=instructor,
        candidate=learner,
        kind="ttft",
        note="\u202eread the prefill note",
        created_at=NOW,
        due_on=date(2026, 12, 7),
    )
    errors: list[str] = []
    context = signed_in_context(
        browser, live_server_url, learner, viewport={"width": width, "height": 800}
    )
    page = watched_page(context, errors)
    for path in ("/", "/drills/"):
        page.goto(f"{live_server_url}{path}")
        page.wait_for_selector("html[data-ready]", state="attached")
        due, today = page.evaluate(WORD_EDGES, ".assignment .due")
        assert due < today, f"{path} at {width} px: “Due today” is mirrored"
    save_screenshot(page, f"assignment-note-bidi-drills-{width}")

    services.assignment_start(assignment=assignment)
    page.goto(f"{live_server_url}/drills/")
    page.get_by_role("link", name="Continue the 5 drills").click()
    page.wait_for_selector('[data-testid="assigned"]')
    due, today = page.evaluate(WORD_EDGES, '[data-testid="assigned"] .due')
    assert due < today, f"the set page at {width} px: “Due today” is mirrored"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    save_screenshot(page, f"assignment-note-bidi-set-{width}")
    assert not errors
