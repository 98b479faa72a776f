"""The step's Submit refused while the interviewer's follow-up waits ("Answer the
interviewer's follow-up first") leaves the page once no follow-up is open any more: answered
in the panel above, or from another tab (the panel's poll shows it). That holds wherever the
refusal is told: beneath Submit, or, for a Submit that went before its draft saved, in the
"Not submitted." note beside the status that the autosave then replaced. A redraw of the panel
with the follow-up still open keeps it, and another refusal stays where it is."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from mocks.log import FollowUpPending
from practice import services as flow
from tests.conftest import signed_in_context, timers_held, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser

STEP_TEXT = "Clients reach a gateway, then a prefix-aware router."
REFUSED = "Failed to load resource: the server responded with a status of 4"


@pytest.fixture
def step_page(browser, live_server_url, settings):
    """open(session) -> the candidate's architecture step of `session`, open; the test fails
    on any script or console error but the refused Submit's own."""
    settings.MOCK_POLL_SECONDS = 0.3  # the panel polls fast in a test
    opened = []

    def open_page(session):
        context = signed_in_context(browser, live_server_url, session.attempt.user)
        errors: list[str] = []
        page = watched_page(context, errors)
        page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
        expect(page.locator("section#mock-panel")).to_be_visible()
        opened.append((context, errors))
        return page

    yield open_page
    for context, errors in opened:
        context.close()
        assert [e for e in errors if REFUSED not in e] == []


def _session():
    return chat_session(
        User.objects.create(username="candidate"),
        interviewer=User.objects.create(username="interviewer"),
    )


def _submit_refused(page, told: str):
    """The step's answer typed and submitted; the refusal `told` shows beneath it."""
    page.locator("#answer-text").fill(STEP_TEXT)
    page.get_by_role("button", name="Submit this step").click()
    refusal = page.locator("#submit-refused .message-error")
    expect(refusal).to_have_text(told)
    return refusal


def test_another_refusal_stays_when_the_panel_redraws(step_page, settings):
    settings.GRADING_RATE_PER_MINUTE = 0  # every Submit is past the rate limit
    session = _session()
    page = step_page(session)
    refusal = _submit_refused(
        page,
        "You are going faster than 0 submissions a minute. "
        "Wait a minute and try again; your answer is saved.",
    )

    mock.nudge_send(session=session, text="Start from the peak load.")
    expect(page.locator("section#mock-panel")).to_contain_text("Start from the peak load.")
    assert page.locator("section#mock-panel").get_attribute("data-follow-up-settled")
    page.wait_for_timeout(500)
    expect(refusal).to_be_visible()


STEP_SUBMIT = "**/steps/architecture/submit/"
STEP_DRAFT = "**/steps/architecture/draft/"


def _submit_refused_before_the_draft_saved(page, told: str):
    """The step's answer typed and submitted at once (Ctrl+Enter, the caret still in the box,
    before the autosave's pause): the server refuses the Submit with nothing saved and says
    why in the status; the autosave that follows replaces the status, and #submit-pending then
    carries the refusal. Returns that note's "Not submitted." line."""
    answer = page.locator("#answer-text")
    with timers_held(page):
        answer.fill(STEP_TEXT)
        with page.expect_response(STEP_SUBMIT) as refused:
            answer.press("Control+Enter")
    assert refused.value.status == 422
    assert "Not saved." in refused.value.text()  # told in the status: the draft did not hold it
    expect(page.locator("#save-status")).to_contain_text("Draft saved at")
    pending = page.locator("#submit-pending")
    expect(pending).to_contain_text(f"Not submitted. The server refused your last Submit: “{told}”")
    note = pending.get_by_text("Not submitted.")
    expect(note).to_be_visible()
    return note


def test_another_refusal_beside_the_draft_stays_when_the_panel_redraws(step_page):
    session = _session()
    page = step_page(session)
    answer = page.locator("#answer-text")
    with page.expect_response(STEP_DRAFT):
        answer.fill(STEP_TEXT)
    with timers_held(page):
        answer.fill("")  # emptied and submitted at once: nothing to submit, nothing saved
        with page.expect_response(STEP_SUBMIT) as refused:
            answer.press("Control+Enter")
    assert refused.value.status == 422
    expect(page.locator("#save-status")).to_contain_text("Draft saved at")
    reason = "There is nothing to submit yet: write your answer first."
    note = page.locator("#submit-pending").get_by_text("Not submitted.")
    expect(page.locator("#submit-pending")).to_contain_text(reason)

    mock.nudge_send(session=session, text="Start from the peak load.")
    expect(page.locator("section#mock-panel")).to_contain_text("Start from the peak load.")
    assert page.locator("section#mock-panel").get_attribute("data-follow-up-settled")
    page.wait_for_timeout(500)
    expect(note).to_be_visible()
    expect(page.locator("#submit-pending")).to_contain_text(reason)


# The refusal shows in one of two places, by when the Submit went: beneath Submit, or, when it
# went before its draft saved, in #submit-pending beside the saved draft. Both go the same way.
REFUSAL_PATHS = {
    "beneath-submit": (_submit_refused, lambda told: expect(told).to_have_count(0)),
    "beside-the-draft": (
        _submit_refused_before_the_draft_saved,
        lambda told: expect(told).to_be_hidden(),
    ),
}


@pytest.mark.parametrize("path", list(REFUSAL_PATHS))
def test_the_refusal_goes_once_the_follow_up_is_answered_in_the_panel(step_page, path):
    refuse, gone = REFUSAL_PATHS[path]
    session = _session()
    mock.follow_up_ask(session=session, text="Which percentile do you design for?")
    page = step_page(session)
    told = refuse(page, FollowUpPending.message)

    page.get_by_label("Your answer to the follow-up").fill("The p99 time to first token.")
    page.get_by_role("button", name="Submit the follow-up answer").click()
    expect(page.locator("section#mock-panel")).to_contain_text("You answered the follow-up.")
    gone(told)
    expect(page.locator("#submit-pending")).not_to_contain_text(FollowUpPending.message)
    expect(page.locator("#answer-text")).to_have_value(STEP_TEXT)  # what was written stays

    # Nothing waits now: the step goes in.
    page.get_by_role("button", name="Submit this step").click()
    expect(page.locator("#feedback")).to_be_visible()
    assert (
        session.attempt.answers.get(step_key="architecture", follow_up_id="").submissions.get().text
        == STEP_TEXT
    )


@pytest.mark.parametrize("path", list(REFUSAL_PATHS))
def test_the_refusal_goes_once_the_follow_up_is_answered_from_another_tab(step_page, path):
    refuse, gone = REFUSAL_PATHS[path]
    session = _session()
    event = mock.follow_up_ask(session=session, text="Which percentile do you design for?")
    page = step_page(session)
    told = refuse(page, FollowUpPending.message)

    # A redraw with the follow-up still open (a nudge came) leaves the refusal: it holds.
    mock.nudge_send(session=session, text="Start from the peak load.")
    expect(page.locator("section#mock-panel")).to_contain_text("Start from the peak load.")
    page.wait_for_timeout(500)
    expect(told).to_be_visible()

    # Answered in another tab: the panel's poll shows it, and the refusal goes.
    answer = mock.follow_up_answer(session=session, event=event)
    flow.step_submit(
        answer=answer, text="The p99 time to first token.", fields={}, base_version=answer.version
    )
    expect(page.locator("section#mock-panel")).to_contain_text("You answered the follow-up.")
    gone(told)
