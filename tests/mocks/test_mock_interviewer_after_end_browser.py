"""The interviewer's open page once the session ends: the poll that finds it ended takes the
nudge, follow-up and end controls away (any send could only be refused now) and leaves a
pointer to the report, as a reload does; and a refusal beside a button is one box, not a
shaded fragment per line."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from mocks import services as mock
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session, client_for


def test_the_poll_that_finds_the_session_ended_swaps_the_controls_out(joined_session):
    mock.session_end(session=joined_session, reason="candidate")
    us = client_for(joined_session.interviewer)
    url = reverse("mock_interview_events", kwargs={"session_id": joined_session.pk})
    html = us.get(url + "?after=0&graded=0", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="mock-actions"' in html and 'hx-swap-oob="outerHTML"' in html
    report = reverse("mock_report", kwargs={"session_id": joined_session.pk})
    assert "read the report</a>" in html and report in html
    assert "Send the nudge" not in html and "End the session now" not in html


@pytest.mark.browser
def test_the_open_page_loses_its_controls_when_the_session_ends(
    browser, live_server_url, settings, content_loaded
):
    settings.MOCK_POLL_SECONDS = 0.3
    interviewer = User.objects.create(username="interviewer")
    session = chat_session(User.objects.create(username="candidate"), interviewer=interviewer)
    errors: list[str] = []
    page = watched_page(signed_in_context(browser, live_server_url, interviewer), errors)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server_url}/mock/{session.pk}/interview/")
    expect(page.locator("#nudge-text")).to_be_visible()

    mock.session_end(session=session, reason="candidate")
    actions = page.locator("#mock-actions")
    expect(actions).to_contain_text("The session has ended — read the report")
    expect(page.locator("#nudge-text")).to_have_count(0)
    expect(page.locator("#ask-text")).to_have_count(0)
    expect(page.locator("#end-link")).to_have_count(0)
    expect(actions.get_by_role("link", name="read the report")).to_have_attribute(
        "href", f"/mock/{session.pk}/report/"
    )
    assert errors == []


@pytest.mark.browser
def test_a_refusal_beside_its_button_is_one_box(browser, live_server_url, settings, content_loaded):
    settings.MOCK_POLL_SECONDS = 60  # no redraw of the live view during the test
    interviewer = User.objects.create(username="interviewer")
    session = chat_session(User.objects.create(username="candidate"), interviewer=interviewer)
    mock.follow_up_ask(session=session, text="What breaks first?")
    errors: list[str] = []
    page = watched_page(signed_in_context(browser, live_server_url, interviewer), errors)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server_url}/mock/{session.pk}/interview/")
    page.locator("#ask-text").fill("And the queue?")
    page.get_by_role("button", name="Ask the follow-up").click()
    refusal = page.locator("#ask-status .message-error")
    expect(refusal).to_contain_text("has not answered your last follow-up yet")
    # One box: an inline label split over lines has a client rect per line.
    assert refusal.evaluate("el => el.getClientRects().length") == 1
    assert [e for e in errors if "status of 422" not in e] == []
