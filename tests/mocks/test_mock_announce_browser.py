"""A screen reader hears each nudge and follow-up once, in full, as it arrives: the candidate's
panel is redrawn whole by its polls, so what is said is said in one live region outside it
that the page keeps, never in the panel's own list. What came with the page is not said
again, and a poll or a redraw that brings nothing new says nothing."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser

# Records each line added to the announcing region, as a screen reader would hear it.
RECORD = """() => {
  window.said = [];
  const region = document.getElementById("mock-announce");
  new MutationObserver((mutations) => {
    for (const m of mutations) for (const n of m.addedNodes) window.said.push(n.textContent);
  }).observe(region, {childList: true, subtree: true, characterData: true});
}"""

# The panel redrawn with every event again (as a first load draws it), nothing new among them.
REDRAW = """() => { const panel = document.getElementById("mock-panel");
  const url = panel.getAttribute("hx-get").replace(/after=\\d+/, "after=-1");
  htmx.ajax("GET", url, { target: "#mock-panel", swap: "outerHTML" }); }"""


def test_a_nudge_and_a_follow_up_are_said_once_in_a_region_outside_the_panel(
    browser, live_server_url, settings
):
    settings.MOCK_POLL_SECONDS = 0.3
    candidate, interviewer = (User.objects.create(username=n) for n in ("cand", "intv"))
    session = chat_session(candidate, interviewer=interviewer)
    mock.nudge_send(session=session, text="Start from the peak load.")  # before the page opens
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, session.attempt.user)
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
    panel = page.locator("section#mock-panel")
    expect(panel).to_contain_text("Start from the peak load.")

    region = page.locator("#mock-announce")
    expect(region).to_have_attribute("aria-live", "polite")
    expect(region).to_have_text("")  # the nudge that came with the page is at its top
    assert region.evaluate("el => !el.closest('#mock-panel')")
    box = region.bounding_box()
    assert box and box["width"] <= 1 and box["height"] <= 1  # said, not shown
    page.evaluate(RECORD)

    nudge = mock.nudge_send(session=session, text="Think about the shared system prompt.")
    expect(region).to_have_text("Your interviewer says: Think about the shared system prompt.")
    # The panel's own list is no live region: what it shows is said once, by the region.
    assert panel.locator("[aria-live]").count() == 0

    # Polls with nothing new (204s), then a redraw that brings every event again.
    page.wait_for_timeout(1_000)
    told = page.locator(f"#mock-message-{nudge.seq}").element_handle()
    page.evaluate(REDRAW)
    page.wait_for_function("el => !el.isConnected", arg=told)
    expect(panel.locator(f"#mock-message-{nudge.seq}")).to_be_visible()
    page.wait_for_timeout(500)
    assert page.evaluate("window.said") == [
        "Your interviewer says: Think about the shared system prompt."
    ]

    mock.follow_up_ask(session=session, text="Which percentile do you design for?")
    expect(region).to_have_text(
        "Your interviewer asks (Architecture): Which percentile do you design for?"
    )
    page.wait_for_timeout(1_000)
    assert page.evaluate("window.said") == [
        "Your interviewer says: Think about the shared system prompt.",
        "Your interviewer asks (Architecture): Which percentile do you design for?",
    ]
    context.close()
    assert errors == []


def test_the_end_of_the_session_is_said_when_it_comes(browser, live_server_url, settings):
    settings.MOCK_POLL_SECONDS = 0.3
    candidate, interviewer = (User.objects.create(username=n) for n in ("cand", "intv"))
    session = chat_session(candidate, interviewer=interviewer)
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, session.attempt.user)
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
    expect(page.locator("section#mock-panel .mock-clock")).to_be_visible()
    page.evaluate(RECORD)

    mock.session_end(session=session, reason="interviewer")
    region = page.locator("#mock-announce")
    expect(region).to_contain_text("The session has ended")
    page.wait_for_timeout(1_000)
    said = page.evaluate("window.said")
    assert len(said) == 1 and said[0].startswith("The session has ended"), said
    context.close()
    assert errors == []
