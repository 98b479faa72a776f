"""The live parts of a mock interview's pages poll the server; when the candidate signs out
in another tab (or their session expires) mid-mock, a poll must not follow the redirect to
the log-in page and swap that whole page (its header, its form, a second <main>) into the
step page. The live part says they are signed out, with a way to sign in again, and comes
back by itself once they have."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from mocks import services as mock
from questions.models import Question
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import client_for


def _app_session(user):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    return mock.mock_session_start(user=user, revision=revision, mode="app")


def test_a_signed_out_poll_gets_a_notice_not_the_log_in_page(joined_session):
    anonymous = Client()
    session_page = reverse("mock_session", args=[joined_session.pk])
    interview_page = reverse("mock_interview", args=[joined_session.pk])
    polls = {
        reverse("mock_panel", args=[joined_session.pk]) + "?step=clarify&after=3": (
            'id="mock-panel"',
            session_page,
        ),
        session_page: ('id="mock-session-live"', session_page),
        reverse("mock_interview_events", args=[joined_session.pk]) + "?after=3&graded=0": (
            'id="live"',
            interview_page,
        ),
    }
    for poll, (element, sign_in_next) in polls.items():
        response = anonymous.get(poll, headers={"HX-Request": "true"})
        html = response.content.decode()
        assert response.status_code == 200, poll
        assert element in html and "<main" not in html and "password" not in html.lower()
        assert "You are signed out" in html
        assert f"/accounts/login/?next={sign_in_next}" in html
        assert "hx-trigger" in html  # it polls on, to come back after the sign-in
        assert joined_session.attempt.revision.title not in html  # nothing of the session
        # A plain visit (no htmx) still goes to the log-in page.
        assert anonymous.get(poll)["Location"].startswith("/accounts/login/")


def test_the_notice_polls_for_the_live_part_again_without_moving_the_candidate(joined_session):
    """Once signed in again, the notice's poll brings the whole live part back (not a 204
    for nothing new since the last poll before the sign-out), and does not move the
    candidate to the step of the page it is on (it is no new visit of it)."""
    anonymous = Client()
    them = client_for(joined_session.attempt.user)
    us = client_for(joined_session.interviewer)
    polls = [
        (them, reverse("mock_panel", args=[joined_session.pk]) + "?step=tradeoffs&after=3"),
        (them, reverse("mock_session", args=[joined_session.pk])),
        (us, reverse("mock_interview_events", args=[joined_session.pk]) + "?after=3&graded=0"),
    ]
    for client, poll in polls:
        notice = anonymous.get(poll, headers={"HX-Request": "true"}).content.decode()
        again = notice.split('hx-get="')[1].split('"')[0].replace("&amp;", "&")
        back = client.get(again, headers={"HX-Request": "true"})
        assert back.status_code == 200 and "mock-countdown" in back.content.decode(), poll
    assert mock.current_step(joined_session) == "clarify"


@pytest.mark.browser
def test_signing_out_in_another_tab_mid_mock(browser, live_server_url, settings):
    settings.MOCK_POLL_SECONDS = 0.3
    candidate = User.objects.create(username="candidate")
    session = _app_session(candidate)
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, candidate)
    step = watched_page(context, errors)
    step.goto(f"{live_server_url}/attempts/{session.attempt_id}/steps/architecture/")
    panel = step.locator("#mock-panel")
    expect(panel).to_contain_text("Left in the session")
    other = watched_page(context, errors)
    other.goto(f"{live_server_url}/mock/{session.pk}/")
    other.get_by_role("button", name="Log out").click()
    other.wait_for_url(f"{live_server_url}/")

    expect(panel).to_contain_text("You are signed out")
    expect(step.locator("main")).to_have_count(1)
    expect(step.locator("#id_password")).to_have_count(0)
    expect(step.get_by_role("link", name="Sign in again")).to_be_visible()

    # Signed in again (here: a new session cookie), the panel comes back by itself.
    client = Client()
    client.force_login(candidate)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server_url}]
    )
    expect(panel).to_contain_text("Left in the session")
    context.close()
    assert errors == []
