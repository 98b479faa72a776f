"""On a phone the candidate's panel sits far above the answer box they type in: a nudge or a
follow-up that arrives while the panel is out of view is told at the foot of the screen, in a
live region, with a button that leads to it; the notice goes once the panel is in view. A
nudge says whose words it is."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 360, "height": 740}, "has_touch": True, "is_mobile": True}


def test_a_nudge_and_a_follow_up_out_of_view_are_told_at_the_foot_of_the_screen(
    browser, live_server_url, settings
):
    settings.MOCK_POLL_SECONDS = 0.3
    candidate, interviewer = (User.objects.create(username=n) for n in ("cand", "intv"))
    session = chat_session(candidate, interviewer=interviewer)
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, session.attempt.user, **PHONE)
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
    panel = page.locator("section#mock-panel")
    expect(panel).to_contain_text("Left in the session")
    cue = page.locator(".mock-cue").filter(has_text="show it")
    expect(cue).to_have_count(0)  # nothing new yet

    page.locator("#answer-text").fill("An API gateway, then a prefix-aware router.")
    page.locator("#answer-text").scroll_into_view_if_needed()
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    expect(panel).not_to_be_in_viewport()

    nudge = mock.nudge_send(session=session, text="Think about the shared system prompt.")
    show = page.get_by_role("button", name="Your interviewer sent you a note — show it")
    expect(show).to_be_in_viewport()
    # Heard once: the announcing region says the note; the notice is for the eye.
    expect(page.locator("#mock-announce")).to_contain_text("shared system prompt")
    heard = page.evaluate(
        """() => Array.from(document.querySelectorAll("[aria-live], [role=status], [role=alert]"))
            .map((el) => el.textContent).filter((t) => /shared system prompt|show it/.test(t))"""
    )
    assert heard == ["Your interviewer says: Think about the shared system prompt."], heard
    expect(panel.locator(f"#mock-message-{nudge.seq}")).to_contain_text(
        "Your interviewer says: Think about the shared system prompt."
    )
    # A poll redraws the panel before the button is pressed: it still leads to the nudge.
    told = page.locator(f"#mock-message-{nudge.seq}").element_handle()
    page.evaluate(
        """() => { const panel = document.getElementById("mock-panel");
        const url = panel.getAttribute("hx-get").replace(/after=\\d+/, "after=-1");
        htmx.ajax("GET", url, { target: "#mock-panel", swap: "outerHTML" }); }"""
    )
    page.wait_for_function("el => !el.isConnected", arg=told)
    show.focus()
    page.keyboard.press("Enter")
    expect(page.locator(f"#mock-message-{nudge.seq}")).to_be_focused()
    expect(panel).to_be_in_viewport()
    expect(show).to_have_count(0)

    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    mock.follow_up_ask(session=session, text="Which percentile do you design for?")
    show = page.get_by_role("button", name="Your interviewer asked a follow-up — show it")
    expect(show).to_be_in_viewport()
    show.click()
    expect(page.get_by_label("Your answer to the follow-up")).to_be_focused()
    expect(show).to_have_count(0)

    # Scrolled back up instead, the panel in view takes the notice away.
    page.locator("#answer-text").focus()
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    expect(panel).not_to_be_in_viewport()
    mock.nudge_send(session=session, text="Two minutes on this step.")
    show = page.get_by_role("button", name="Your interviewer sent you a note — show it")
    expect(show).to_be_in_viewport()
    page.evaluate("window.scrollTo(0, 0)")
    expect(show).to_have_count(0)
    context.close()
    assert errors == []
