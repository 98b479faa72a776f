"""Finishing a mock interview is deliberate: the last step's "Finish" leads to the page that
says what ending does and asks for a ticked box (the same second step as "End the session
now"), with a way back to the step; nothing ends on the first click. It works by keyboard
alone and without JavaScript, and once the session has ended, Finish and the browser's back
button lead to the report."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from mocks import services as mock
from mocks.log import Kind
from practice import services as flow
from practice.models import Submission
from questions.models import Question
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import client_for
from tests.practice.test_layout_a11y_browser import PHONE

TRADEOFFS = "Bigger batches raise throughput but stretch TPOT; I would cap them at the knee."


def _app_session(user):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    return mock.mock_session_start(user=user, revision=revision, mode="app")


def _url(name, session):
    return reverse(name, kwargs={"session_id": session.pk})


def test_finish_asks_first_and_the_session_runs_on(people):
    session = _app_session(people["candidate"])
    them = client_for(people["candidate"])

    finish = them.post(reverse("attempt_finish", kwargs={"attempt_id": session.attempt_id}))

    assert finish.status_code == 302
    assert finish["Location"] == _url("mock_end", session) + "?step=tradeoffs"
    session.refresh_from_db()
    assert session.ended_at is None
    assert not session.events.filter(kind=Kind.ENDED).exists()
    page = them.get(finish["Location"]).content.decode()
    step = reverse("attempt_step", kwargs={"attempt_id": session.attempt_id, "step": "tradeoffs"})
    assert f'href="{step}"' in page  # "Keep going" leads back to the step they were on
    assert 'name="step" value="tradeoffs"' in page  # and still does after a refused post
    refused = them.post(_url("mock_end", session), {"step": "tradeoffs"})
    assert refused.status_code == 422 and f'href="{step}"' in refused.content.decode()


def test_the_finish_button_of_a_mock_says_it_ends_the_interview(people):
    session = _app_session(people["candidate"])
    them = client_for(people["candidate"])
    step = reverse("attempt_step", kwargs={"attempt_id": session.attempt_id, "step": "tradeoffs"})
    assert ">Finish the interview…</button>" in them.get(step).content.decode()
    # Submitting the step redraws the pager (the follow-ups still open) in the same words.
    submit = reverse(
        "attempt_submit", kwargs={"attempt_id": session.attempt_id, "step": "tradeoffs"}
    )
    answered = them.post(submit, {"text": TRADEOFFS, "base_version": "0"}, HTTP_HX_REQUEST="true")
    assert answered.status_code == 200
    assert ">Finish the interview…</button>" in answered.content.decode()
    # Practice's own Finish leads to the scorecard and says so.
    revision = session.attempt.revision
    practice = flow.attempt_start(user=people["candidate"], revision=revision)
    own = reverse("attempt_step", kwargs={"attempt_id": practice.pk, "step": "tradeoffs"})
    assert ">Finish and see the scorecard</button>" in them.get(own).content.decode()


def test_finish_after_the_end_opens_the_report(people):
    session = _app_session(people["candidate"])
    mock.session_end(session=session, reason="ended early")
    finish = client_for(people["candidate"]).post(
        reverse("attempt_finish", kwargs={"attempt_id": session.attempt_id})
    )
    assert finish["Location"] == _url("mock_report", session)


def test_only_a_step_of_the_question_is_a_way_back(people):
    session = _app_session(people["candidate"])
    page = client_for(people["candidate"]).get(_url("mock_end", session) + "?step=//evil.example")
    assert "evil.example" not in page.content.decode()
    assert f'href="{_url("mock_session", session)}"' in page.content.decode()


@pytest.mark.browser
def test_finishing_by_keyboard_alone_asks_then_ends(browser, live_server_url):
    candidate = User.objects.create(username="candidate")
    session = _app_session(candidate)
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, candidate)
    page = watched_page(context, errors)
    step = f"{live_server_url}/attempts/{session.attempt_id}/steps/tradeoffs/"
    page.goto(step)
    expect(page.locator("#mock-panel .mock-countdown").first).to_be_visible()
    page.locator("#answer-text").press_sequentially(TRADEOFFS[:20])

    finish = page.get_by_role("button", name="Finish")
    finish.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/mock/{session.pk}/end/?step=tradeoffs")
    expect(page.get_by_role("heading", level=1)).to_contain_text("End the session now?")
    session.refresh_from_db()
    assert session.ended_at is None

    # "Keep going" by keyboard goes back to the step, with the text kept.
    page.get_by_role("link", name="Keep going").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(step)
    expect(page.locator("#answer-text")).to_have_value(TRADEOFFS[:20])

    page.get_by_role("button", name="Finish").focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/end/?step=tradeoffs")
    box = page.get_by_label("Yes, end the session now")
    box.focus()
    page.keyboard.press("Enter")  # Enter in the box asks for it to be ticked: nothing ends
    expect(page).to_have_url(f"{live_server_url}/mock/{session.pk}/end/?step=tradeoffs")
    page.keyboard.press("Space")
    expect(box).to_be_checked()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="End the session")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/mock/{session.pk}/report/")
    context.close()
    session.refresh_from_db()
    assert session.ended_at is not None
    assert Submission.objects.filter(answer__attempt_id=session.attempt_id).exists()
    assert errors == []


@pytest.mark.browser
def test_finishing_on_a_phone_without_javascript(browser, live_server_url):
    candidate = User.objects.create(username="candidate")
    session = _app_session(candidate)
    answer = flow.answer_open(attempt=session.attempt, step_key="tradeoffs")
    flow.draft_save(answer=answer, text=TRADEOFFS, fields={}, base_version=0)
    errors: list[str] = []
    context = signed_in_context(
        browser, live_server_url, candidate, viewport=PHONE, java_script_enabled=False
    )
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/tradeoffs/")
    page.get_by_role("button", name="Finish").dblclick()
    # The second tap's post aborts the first one's navigation, so the test polls the page it
    # lands on rather than awaiting one navigation (which may be the aborted one).
    expect(page).to_have_url(re.compile(rf"/mock/{session.pk}/end/\?step=tradeoffs$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("End the session now?")
    session.refresh_from_db()
    assert session.ended_at is None  # a double tap on Finish ends nothing

    page.get_by_label("Yes, end the session now").check()
    page.get_by_role("button", name="End the session").click()
    page.wait_for_url(f"**/mock/{session.pk}/report/")
    session.refresh_from_db()
    assert session.ended_at is not None

    # Back, after the end: the confirmation is not armed again; it leads to the report.
    page.go_back()
    page.wait_for_url(f"**/mock/{session.pk}/report/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    context.close()
    assert errors == []
