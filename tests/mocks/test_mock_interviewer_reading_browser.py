"""The interviewer reads the reference answer (or the question the candidate sees) while the
candidate types: each autosave redraws the live view, and the sections the interviewer opened
stay open through it. When the candidate moves on to another step, the sections are that
step's, closed."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from practice import services as flow
from questions.models import Question
from tests.conftest import signed_in_context, watched_page

pytestmark = pytest.mark.browser


def _interviewer_page(browser, live_server_url, errors: list[str], **viewport):
    """A person's mock session of chat-api-50qps, its interviewer's live page open."""
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=candidate, revision=revision, mode="human")
    mock.invite_accept(session_id=session.pk, token=mock.invite_token(session), user=interviewer)
    extra = {"viewport": viewport} if viewport else {}
    context = signed_in_context(browser, live_server_url, interviewer, **extra)
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/mock/{session.pk}/interview/")
    return session, context, page


def test_what_the_interviewer_opened_stays_open_while_the_candidate_types(
    browser, live_server_url, settings
):
    settings.MOCK_POLL_SECONDS = 0.3
    errors: list[str] = []
    session, context, page = _interviewer_page(browser, live_server_url, errors)

    live = page.locator("#live")
    live.locator("summary", has_text="Reference answer").click()
    live.locator("summary", has_text="The question they see").click()
    expect(live.locator("details[open]")).to_have_count(2)

    answer = flow.answer_open(attempt=session.attempt, step_key="clarify")
    flow.draft_save(answer=answer, text="Peak is 50 QPS.", fields={}, base_version=0)
    expect(page.locator("#candidate-answer")).to_have_text("Peak is 50 QPS.")  # redrawn
    expect(live.locator("details[open]")).to_have_count(2)

    mock.step_open(session=session, step_key="architecture")
    expect(page.locator("#now-h")).to_have_text("The candidate is on: Architecture")
    expect(live.locator("details[open]")).to_have_count(0)
    live.locator("summary", has_text="Reference answer").click()
    expect(live.locator("details[open]")).to_contain_text("vLLM")  # architecture's reference
    context.close()
    assert errors == []


def test_every_action_of_the_interviewer_stays_within_reach_mid_page(
    browser, live_server_url, settings
):
    """The actions column (nudge, follow-up, the way to end) stays on screen while the
    interviewer reads down the page, and scrolls on its own if it grows taller than the
    window, rather than holding its lower half out of reach until the page's very bottom."""
    settings.MOCK_POLL_SECONDS = 60
    _, context, page = _interviewer_page(browser, live_server_url, [], width=1280, height=800)
    page.evaluate("window.scrollTo(0, 1200)")  # reading the rubric, mid-page
    box = page.evaluate(
        "(() => { const r = document.querySelector('.mock-actions').getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, height: innerHeight}; })()"
    )
    context.close()
    assert box["top"] >= 0 and box["bottom"] <= box["height"], box


def test_on_a_phone_nudge_and_follow_up_come_first_and_desktop_keeps_two_columns(
    browser, live_server_url, settings
):
    """The interviewer's most used controls come before the guide, the scores and the five
    feedback forms on a 360 px phone (not some 5,000 px down the page); at 1280 px they stay
    in the column beside the live view."""
    settings.MOCK_POLL_SECONDS = 60
    _, context, page = _interviewer_page(browser, live_server_url, [], width=360, height=740)

    def box(selector):
        return page.locator(selector).bounding_box()

    ask, live = box("#ask-text"), box("#live")
    assert box("#nudge-text")["y"] < ask["y"] < live["y"]
    assert ask["y"] + ask["height"] < box("#feedback-clarify")["y"]
    assert ask["y"] + ask["height"] < box("#feedback-overall")["y"]
    page.set_viewport_size({"width": 1280, "height": 900})
    nudge, live = box("#nudge-text"), box("#live")
    context.close()
    assert nudge["x"] >= live["x"] + live["width"]  # beside the live view, not below it
    assert nudge["y"] < 900  # on the first screen
