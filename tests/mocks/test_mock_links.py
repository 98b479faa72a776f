"""Invite and share links of a mock session: signed, single use, expiring, revocable; every
refusal is a page that says why. And who may see which page."""

from datetime import timedelta

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from mocks import services as mock
from mocks.log import Kind
from mocks.models import MockSession
from questions.models import Question
from tests.mocks.conftest import client_for


@pytest.fixture
def session(people):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    return mock.mock_session_start(user=people["candidate"], revision=revision, mode="human")


def join_url(session, token=None):
    token = mock.invite_token(session) if token is None else token
    return reverse("mock_join", kwargs={"session_id": session.pk, "token": token})


def join(user, session, token=None):
    return client_for(user).post(join_url(session, token))


def refused(response, words):
    assert response.status_code == 403
    assert words in response.content.decode()


def test_the_interviewer_joins_once_by_the_link(people, session):
    url = join_url(session)
    page = client_for(people["interviewer"]).get(url)
    assert page.status_code == 200 and b"Join as the interviewer" in page.content
    session.refresh_from_db()
    assert session.invite_used_at is None  # looking at the link does not use it up
    response = join(people["interviewer"], session)
    assert response.status_code == 302
    assert response["Location"] == reverse("mock_interview", kwargs={"session_id": session.pk})
    session.refresh_from_db()
    assert session.interviewer == people["interviewer"]
    assert session.events.filter(kind=Kind.JOINED).count() == 1
    # The candidate's page no longer shows a link.
    assert mock.invite_token(session) == ""


def test_a_changed_signature_is_refused(people, session):
    token = mock.invite_token(session)
    tampered = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    refused(join(people["interviewer"], session, tampered), "changed or cut short")
    refused(client_for(people["interviewer"]).get(join_url(session, tampered)), "changed")


def test_a_link_of_another_session_is_refused(people, session):
    other = mock.mock_session_start(
        user=people["stranger"], revision=session.attempt.revision, mode="human"
    )
    # The other session's genuine token, presented at this session's address.
    refused(join(people["interviewer"], session, mock.invite_token(other)), "another mock session")
    # A token signed for a different purpose (the share link) does not open an invite.
    share = mock._token(mock.SHARE_SALT, session.pk, session.invite_nonce)
    refused(join(people["interviewer"], session, share), "changed or cut short")
    # Forged content without the secret key.
    forged = signing.dumps({"s": session.pk, "n": "guess"}, key="not-the-key", salt="x")
    refused(join(people["interviewer"], session, forged), "changed or cut short")


def test_an_expired_link_is_refused(people, session):
    token = mock.invite_token(session)  # as sent, before it expired
    MockSession.objects.filter(pk=session.pk).update(
        invite_expires_at=timezone.now() - timedelta(seconds=1)
    )
    session.refresh_from_db()
    refused(join(people["interviewer"], session, token), "expired")


def test_the_candidate_page_offers_a_new_link_once_the_last_one_expired(people, session):
    old = mock.invite_token(session)
    MockSession.objects.filter(pk=session.pk).update(
        invite_expires_at=timezone.now() - timedelta(seconds=1)
    )
    candidate = client_for(people["candidate"])
    page = candidate.get(reverse("mock_session", kwargs={"session_id": session.pk}))
    html = page.content.decode()
    # Not the dead link to copy and send, but why there is none and the button for a new one.
    assert old not in html and 'id="invite-link"' not in html
    assert "the last one expired" in html and "Make a new invite link" in html
    candidate.post(reverse("mock_invite_new", kwargs={"session_id": session.pk}))
    session.refresh_from_db()
    assert join(people["interviewer"], session).status_code == 302


def test_the_default_expiry_is_a_day(session):
    created = session.events.order_by("seq").first().at  # the invite is made with the session
    assert session.invite_expires_at - created == timedelta(hours=24)


def test_a_used_link_is_refused(people, session):
    url = join_url(session)
    assert join(people["interviewer"], session).status_code == 302
    response = client_for(people["stranger"]).post(url)
    refused(response, "already been used")
    session.refresh_from_db()
    assert session.interviewer == people["interviewer"]


def test_the_interviewer_who_joined_opens_the_link_again_and_is_back_on_their_page(people, session):
    # The link is all they have to find the session again (History lists their own
    # attempts, not the sessions they interview); a second POST is a double click on Join.
    url = join_url(session)
    assert join(people["interviewer"], session).status_code == 302
    interview = reverse("mock_interview", kwargs={"session_id": session.pk})
    for response in (
        client_for(people["interviewer"]).get(url),
        client_for(people["interviewer"]).post(url),
    ):
        assert response.status_code == 302 and response["Location"] == interview
    session.refresh_from_db()
    assert session.events.filter(kind=Kind.JOINED).count() == 1
    # After the end too: their page says it has ended and links the report.
    mock.session_end(session=session, reason="ended early")
    response = client_for(people["interviewer"]).get(url)
    assert response.status_code == 302 and response["Location"] == interview


def test_a_revoked_link_is_refused_and_a_new_one_works(people, session):
    old = mock.invite_token(session)
    client_for(people["candidate"]).post(
        reverse("mock_invite_revoke", kwargs={"session_id": session.pk})
    )
    session.refresh_from_db()
    refused(join(people["interviewer"], session, old), "revoked")
    client_for(people["candidate"]).post(
        reverse("mock_invite_new", kwargs={"session_id": session.pk})
    )
    session.refresh_from_db()
    refused(join(people["interviewer"], session, old), "revoked")
    assert join(people["interviewer"], session).status_code == 302


def test_the_candidate_cannot_interview_themself(people, session):
    refused(join(people["candidate"], session), "your own session")


def test_only_the_interviewer_reaches_the_live_view(people, session):
    join(people["interviewer"], session)
    for name in ("candidate", "stranger"):
        for url_name in ("mock_interview", "mock_interview_events"):
            url = reverse(url_name, kwargs={"session_id": session.pk})
            assert client_for(people[name]).get(url).status_code == 404
    url = reverse("mock_nudge", kwargs={"session_id": session.pk})
    assert client_for(people["stranger"]).post(url, {"text": "hi"}).status_code == 404
    assert (
        client_for(people["interviewer"])
        .get(reverse("mock_interview", kwargs={"session_id": session.pk}))
        .status_code
        == 200
    )


def test_only_the_candidate_reaches_their_panel_and_session_page(people, session):
    for url_name in ("mock_session", "mock_panel"):
        url = reverse(url_name, kwargs={"session_id": session.pk})
        assert client_for(people["stranger"]).get(url).status_code == 404
        assert client_for(people["candidate"]).get(url).status_code == 200


def test_the_report_and_its_share_link_wait_for_the_end(people, session):
    """While the session runs nobody reads the report (its rubric and verdicts), not even
    the candidate, and no share link can be made."""
    mock.invite_accept(
        session_id=session.pk, token=mock.invite_token(session), user=people["interviewer"]
    )
    for who in ("candidate", "interviewer"):
        client = Client()
        client.force_login(people[who])
        for name in ("mock_report", "mock_report_md"):
            page = client.get(reverse(name, kwargs={"session_id": session.pk}))
            assert page.status_code == 403, (who, name)
            assert "when the session ends" in page.content.decode()
    with pytest.raises(mock.MockError, match="when the session ends"):
        mock.share_issue(session=session)
    client = Client()
    client.force_login(people["candidate"])
    client.post(reverse("mock_share_new", kwargs={"session_id": session.pk}))
    session.refresh_from_db()
    assert session.share_nonce == ""


def test_a_share_link_opens_the_report_signed_out_until_revoked(people, session):
    mock.session_end(session=session, reason="ended early")
    token = mock.share_issue(session=session)
    url = reverse("mock_shared", kwargs={"token": token})
    anonymous = Client()
    page = anonymous.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Mock interview report" in html
    # Nothing else of the candidate's is linked from it, and nothing else opens.
    assert f"/mock/{session.pk}/" not in html and "/attempts/" not in html
    for other in (
        reverse("mock_report", kwargs={"session_id": session.pk}),
        reverse("mock_report_md", kwargs={"session_id": session.pk}),
        reverse("mock_replay", kwargs={"session_id": session.pk}),
        reverse("attempt", kwargs={"attempt_id": session.attempt_id}),
    ):
        assert anonymous.get(other).status_code == 302  # to the sign-in page
    mock.share_revoke(session=session)
    refused(anonymous.get(url), "revoked")
    refused(anonymous.get(reverse("mock_shared", kwargs={"token": token + "x"})), "changed")


def test_a_running_session_report_says_so_with_the_way_back_and_the_site_around_it(people, session):
    # History links every mock attempt's report, a running one's too.
    assert join(people["interviewer"], session).status_code == 302
    for who, back in (
        ("candidate", reverse("mock_session", kwargs={"session_id": session.pk})),
        ("interviewer", reverse("mock_interview", kwargs={"session_id": session.pk})),
    ):
        client = client_for(people[who])
        for name in ("mock_report", "mock_report_md"):
            page = client.get(reverse(name, kwargs={"session_id": session.pk}))
            refused(page, "The report is not ready yet")
            html = page.content.decode()
            assert f'href="{back}"' in html
            assert reverse("history") in html  # the site's navigation, not a dead end
    # A share link refused to someone signed out still shows nothing but the refusal.
    html = Client().get(reverse("mock_shared", kwargs={"token": "junk"})).content.decode()
    assert "does not open anything" in html and reverse("history") not in html
