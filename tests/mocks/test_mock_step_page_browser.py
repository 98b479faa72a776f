"""The candidate's step page in a mock interview, as its live panel changes it: a follow-up's
autosave that fails says that the draft was not saved (not that an answer was not sent); in
the session's last seconds an answer the server does not have (the step's, a follow-up's) is
saved again, so that the end submits what is on screen, and one the end came without stays
on screen to copy, under a panel that says only what the server had was submitted;
when the time runs out the progress bar counts the answers the end submitted, with the rest
of what the panel then says."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import expect

from mocks import services as mock
from mocks.models import MockSession
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser


@pytest.fixture
def candidate_page(browser, live_server_url, settings):
    """page_for(session) -> the candidate's architecture step of `session`, open; the test
    fails on any script or console error but those `expected` names."""
    settings.MOCK_POLL_SECONDS = 0.3  # the panel polls fast in a test
    opened = []

    def page_for(session, expected: tuple[str, ...] = (), before_open=None):
        context = signed_in_context(browser, live_server_url, session.attempt.user)
        errors: list[str] = []
        page = watched_page(context, errors)
        if before_open:
            before_open(page)
        page.set_default_timeout(15_000)
        page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
        opened.append((context, errors, expected))
        return page

    yield page_for
    for context, errors, expected in opened:
        context.close()
        assert [e for e in errors if not any(x in e for x in expected)] == []


def test_a_follow_up_draft_not_saved_says_so_and_keeps_the_text(candidate_page):
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    session = chat_session(candidate, interviewer=interviewer)
    event = mock.follow_up_ask(session=session, text="How does the router choose a replica?")
    page = candidate_page(session, expected=("status of 500", "Error Code 500"))
    page.route("**/follow-ups/*/draft/", lambda route: route.fulfill(status=500, body="boom"))

    page.get_by_label("Your answer to the follow-up").fill("By a hash of the prompt prefix.")

    status = page.locator(f"#fu-draft-{event.seq}")
    expect(status).to_have_text(
        "Draft not saved. The server had an error (500). Your answer is kept in its box. "
        "It saves on your next edit."
    )
    expect(page.get_by_label("Your answer to the follow-up")).to_have_value(
        "By a hash of the prompt prefix."
    )


def test_the_panel_answers_typing_the_moment_it_shows_however_slowly_it_settles(candidate_page):
    # htmx wires up what it swaps in (the box's autosave) when the swap settles, by default on
    # a 20 ms timer that a busy machine holds back while the box is on screen and taking keys.
    # Here htmx's default is 60 s: what is typed as soon as the box shows is saved all the same.
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    session = chat_session(candidate, interviewer=interviewer)
    event = mock.follow_up_ask(session=session, text="How does the router choose a replica?")

    def slow_settle(route):
        script = route.fetch().text()
        assert "defaultSettleDelay:20" in script
        route.fulfill(
            body=script.replace("defaultSettleDelay:20", "defaultSettleDelay:60000"),
            content_type="text/javascript",
        )

    page = candidate_page(session, before_open=lambda p: p.route("**/htmx*.js", slow_settle))
    page.get_by_label("Your answer to the follow-up").fill("By a hash of the prompt prefix.")

    # Saved long before the 60 s that htmx waits to settle, however loaded the machine.
    expect(page.locator(f"#fu-draft-{event.seq}")).to_have_text("Draft saved.", timeout=15_000)


def test_a_reload_right_after_typing_a_follow_up_answer_keeps_it(candidate_page):
    # Typed, and the page reloaded before the autosave's pause ran out: the text is sent as
    # the page is left, and the page that comes next shows it.
    session = chat_session(
        User.objects.create(username="candidate"),
        interviewer=User.objects.create(username="interviewer"),
    )
    event = mock.follow_up_ask(session=session, text="How does the router choose a replica?")
    page = candidate_page(session)
    text = "By a hash of the prompt prefix, reloaded at once."
    page.get_by_label("Your answer to the follow-up").fill(text)
    page.reload()

    expect(page.get_by_label("Your answer to the follow-up")).to_have_value(text)
    # Stored by the save sent on leaving, or by the one the next page sends with its copy.
    for _ in range(50):
        if mock.follow_up_answer(session=session, event=event).text == text:
            break
        page.wait_for_timeout(100)
    assert mock.follow_up_answer(session=session, event=event).text == text


STEP_DRAFT = "**/steps/architecture/draft/"
FIRST = "Clients reach a gateway, then a prefix-aware router."
LATEST = FIRST + " Ten replicas behind it, scaled on queue depth."


def _answers_not_saved(candidate_page, answer_failure, expected, told: str):
    """A session with a follow-up asked, its page open, and two answers whose last autosave
    failed (`answer_failure` answers both draft addresses): the follow-up's, typed after the
    step's, which the server has in an earlier version (FIRST, where the page shows LATEST).
    Returns (session, event, page, the follow-up's text)."""
    session = chat_session(
        User.objects.create(username="candidate"),
        interviewer=User.objects.create(username="interviewer"),
    )
    event = mock.follow_up_ask(session=session, text="How does the router choose a replica?")
    page = candidate_page(session, expected=expected)
    step = page.locator("#answer-text")
    with page.expect_response(STEP_DRAFT):
        step.fill(FIRST)
    page.route(STEP_DRAFT, answer_failure)
    step.fill(LATEST)
    expect(page.locator("#save-status")).to_contain_text(f"Not saved. {told}")
    page.route("**/follow-ups/*/draft/", answer_failure)
    text = "By a hash of the prompt prefix, so that a shared prefix meets its cached KV."
    page.get_by_label("Your answer to the follow-up").fill(text)
    expect(page.locator(f"#fu-draft-{event.seq}")).to_contain_text(f"Draft not saved. {told}")
    return session, event, page, text


def _step_answer(session):
    return session.attempt.answers.get(step_key="architecture", follow_up_id="")


def test_answers_not_saved_are_saved_before_the_time_runs_out(candidate_page):
    session, event, page, text = _answers_not_saved(
        candidate_page,
        lambda route: route.fulfill(status=500, body="boom"),
        ("status of 500", "Error Code 500"),
        "The server had an error (500).",
    )
    page.unroute("**/follow-ups/*/draft/")  # the server answers again; nobody types
    page.unroute(STEP_DRAFT)
    # Seven seconds left: a nudge redraws the panel, whose clock then says so.
    left = timedelta(minutes=session.total_minutes) - timedelta(seconds=7)
    MockSession.objects.filter(pk=session.pk).update(started_at=timezone.now() - left)
    mock.nudge_send(session=session, text="Seven seconds left.")
    expect(page.locator("#mock-panel")).to_contain_text("Seven seconds left.")

    expect(page.locator("#mock-panel")).to_contain_text("The session has ended", timeout=15_000)
    expect(page.locator(".mock-not-submitted")).to_have_count(0)
    answer = mock.follow_up_answer(session=session, event=event)
    assert answer.submissions.get().text == text
    assert _step_answer(session).submissions.get().text == LATEST


def test_answers_the_end_came_without_stay_to_copy(candidate_page):
    session, event, page, text = _answers_not_saved(
        candidate_page,
        lambda route: route.abort(),
        ("ERR_FAILED", "htmx:sendError"),
        "Connection lost.",
    )
    mock.session_end(session=session, reason="ended early")

    panel = page.locator("#mock-panel")
    # What the panel says was submitted is what the server had, not what is on screen.
    expect(panel).to_contain_text(
        "The session has ended: your answers were submitted as the server had them at the end"
    )
    kept = panel.get_by_role("alert").filter(
        has_text="Not submitted: your latest answer to the follow-up"
    )
    expect(kept).to_contain_text("the report does not have it")
    copy = kept.get_by_label("Your latest answer to the follow-up (not submitted)")
    expect(copy).to_have_value(text)
    kept.get_by_role("button", name="Copy the answer").click()
    expect(kept.get_by_role("button", name="Copied")).to_be_visible()
    assert not mock.follow_up_answer(session=session, event=event).submissions.exists()

    kept_step = panel.get_by_role("alert").filter(
        has_text="Not submitted: your latest answer to this step"
    )
    expect(kept_step).to_contain_text("the report has the version saved before it")
    expect(kept_step.get_by_label("Your latest answer to this step (not submitted)")).to_have_value(
        LATEST
    )
    assert _step_answer(session).submissions.get().text == FIRST


def test_the_progress_bar_counts_what_the_end_submitted_when_time_runs_out(candidate_page):
    session = chat_session(User.objects.create(username="candidate"))
    page = candidate_page(session)
    expect(page.locator("#mock-panel")).to_contain_text("Left in the session")
    page.locator("#answer-text").fill("Clients reach a gateway, then a prefix-aware router.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    expect(page.locator("#progress")).to_contain_text("0 of 5 steps submitted")

    MockSession.objects.filter(pk=session.pk).update(
        started_at=session.started_at - timedelta(minutes=session.total_minutes)
    )

    expect(page.locator("#mock-panel")).to_contain_text("The session has ended")
    expect(page.locator("#progress")).to_contain_text("1 of 5 steps submitted")
    expect(page.locator("#progress li.done")).to_have_count(1)


def _follow_up_refused_on_submit(candidate_page):
    """A session whose interviewer asked a follow-up, its page open, and the server answering
    500 to the follow-up's submit: (session, event, page)."""
    session = chat_session(
        User.objects.create(username="candidate"),
        interviewer=User.objects.create(username="interviewer"),
    )
    event = mock.follow_up_ask(session=session, text="How does the router choose a replica?")
    page = candidate_page(session, expected=("status of 500", "Error Code 500"))
    page.route("**/follow-ups/*/submit/", lambda route: route.fulfill(status=500, body="boom"))
    return session, event, page


def test_a_follow_up_sent_again_after_the_panel_redrew_is_sent(candidate_page):
    # The panel's poll replaces the follow-up's form while the box telling its failure stays:
    # "Send it again" sends from the form that stands there now (htmx sends nothing from one
    # no longer in the page).
    session, event, page = _follow_up_refused_on_submit(candidate_page)
    answer = "By a hash of the prompt prefix."
    with page.expect_response("**/follow-ups/*/draft/"):
        page.get_by_label("Your answer to the follow-up").fill(answer)
    page.get_by_role("button", name="Submit the follow-up answer").click()
    again = page.locator(f"#fu-status-{event.seq}").get_by_role("button", name="Send it again")
    expect(again).to_be_visible()
    page.unroute("**/follow-ups/*/submit/")

    form = page.locator("form.mock-follow-up").element_handle()
    mock.nudge_send(session=session, text="Two minutes on this step.")
    expect(page.locator("#mock-panel")).to_contain_text("Two minutes on this step.")
    assert not form.evaluate("f => f.isConnected"), "the poll did not redraw the form"

    with page.expect_response("**/follow-ups/*/submit/") as sent:
        again.click()
    assert sent.value.status == 200
    expect(page.locator("form.mock-follow-up")).to_have_count(0)
    follow_up = session.attempt.answers.get(follow_up_id=event.payload["follow_up_id"])
    assert follow_up.submissions.get().text == answer


def test_a_draft_saved_after_a_refused_follow_up_leaves_send_it_again(candidate_page):
    # Submit pressed before the box's autosave ran: the server refuses the answer, then the
    # autosave saves the draft. "Not sent … Send it again" stays beside "Draft saved."
    session, event, page = _follow_up_refused_on_submit(candidate_page)
    with page.expect_response("**/follow-ups/*/draft/"):
        page.get_by_label("Your answer to the follow-up").fill("By a hash of the prompt prefix.")
        page.get_by_role("button", name="Submit the follow-up answer").click()
        expect(page.locator(f"#fu-status-{event.seq}")).to_contain_text("Not sent.")

    expect(page.locator(f"#fu-draft-{event.seq}")).to_have_text("Draft saved.")
    again = page.locator(f"#fu-status-{event.seq}").get_by_role("button", name="Send it again")
    expect(again).to_be_visible()
    assert mock.follow_up_answer(session=session, event=event).text == (
        "By a hash of the prompt prefix."
    )
