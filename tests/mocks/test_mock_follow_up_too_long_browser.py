"""A follow-up answer past the length limit is refused by its autosave and by its Submit with
the same words: the panel says them once, beneath Submit, not again in the draft's status."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser

REFUSED = "Failed to load resource: the server responded with a status of 4"


def test_a_too_long_follow_up_answer_is_refused_once(browser, live_server_url, settings):
    settings.MOCK_POLL_SECONDS = 0.3
    settings.ANSWER_MAX_CHARS = 200
    session = chat_session(
        User.objects.create(username="candidate"),
        interviewer=User.objects.create(username="interviewer"),
    )
    mock.follow_up_ask(session=session, text="Which percentile do you design for?")
    context = signed_in_context(browser, live_server_url, session.attempt.user)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
    panel = page.locator("section#mock-panel")
    box = page.get_by_label("Your answer to the follow-up")
    with page.expect_response("**/draft/") as draft:
        box.fill("p99 " * 100)
    assert draft.value.status == 422
    told = draft.value.text()
    assert "limit" in told
    expect(panel).to_contain_text(told)

    with page.expect_response("**/submit/") as submit:
        page.get_by_role("button", name="Submit the follow-up answer").click()
    assert submit.value.status == 422
    expect(panel.get_by_role("alert")).to_contain_text(told)
    page.wait_for_timeout(700)  # a poll or two redraws the panel
    assert panel.inner_text().count(told) == 1
    context.close()
    assert [e for e in errors if REFUSED not in e] == []
