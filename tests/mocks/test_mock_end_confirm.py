"""Ending a mock interview early takes a deliberate second step: "End the session now" opens
a page that says what ending does, and only a ticked box there ends it (no JavaScript
needed). The server refuses an end that was not confirmed (a one-click form left in a stale
tab, a mis-tap), and the session runs on. Time running out and the sweep end it as before."""

from django.urls import reverse

from mocks import services as mock
from mocks.log import Kind
from tests.mocks.conftest import client_for


def url(name, session):
    return reverse(name, kwargs={"session_id": session.pk})


def test_neither_side_has_a_one_click_end(joined_session):
    end = url("mock_end", joined_session)
    pages = [
        client_for(joined_session.attempt.user).get(url("mock_session", joined_session)),
        client_for(joined_session.interviewer).get(url("mock_interview", joined_session)),
    ]
    for page in pages:
        html = page.content.decode()
        assert f'action="{end}"' not in html  # no form that ends on a tap
        assert f'href="{end}"' in html  # a link to the confirmation instead


def test_the_confirmation_says_what_ending_does_and_asks_for_a_ticked_box(joined_session):
    end = url("mock_end", joined_session)
    for user in (joined_session.attempt.user, joined_session.interviewer):
        page = client_for(user).get(end)
        assert page.status_code == 200
        html = page.content.decode()
        assert "submitted as it stands" in html
        assert 'type="checkbox" name="confirm" value="yes" required' in html
        assert '<label for="end-confirm">' in html  # the box has its label, for a screen reader
    candidate = client_for(joined_session.attempt.user).get(end).content.decode()
    assert f'href="{url("mock_session", joined_session)}"' in candidate  # the way back
    interviewer = client_for(joined_session.interviewer).get(end).content.decode()
    assert f'href="{url("mock_interview", joined_session)}"' in interviewer


def test_an_unconfirmed_end_is_refused_and_the_session_runs_on(joined_session):
    end = url("mock_end", joined_session)
    for user in (joined_session.attempt.user, joined_session.interviewer):
        for data in ({}, {"confirm": ""}, {"confirm": "no"}):
            refused = client_for(user).post(end, data)
            assert refused.status_code == 422
            assert "Tick the box" in refused.content.decode()
    joined_session.refresh_from_db()
    assert joined_session.ended_at is None
    assert not joined_session.events.filter(kind=Kind.ENDED).exists()


def test_a_confirmed_end_submits_the_answers_and_opens_the_report(joined_session):
    ended = client_for(joined_session.interviewer).post(
        url("mock_end", joined_session), {"confirm": "yes"}
    )
    assert ended.status_code == 302 and ended["Location"] == url("mock_report", joined_session)
    joined_session.refresh_from_db()
    assert joined_session.ended_at is not None
    event = joined_session.events.get(kind=Kind.ENDED)
    assert event.payload["reason"] == "ended early"
    # Once it has ended, the confirmation leads to the report.
    again = client_for(joined_session.attempt.user).get(url("mock_end", joined_session))
    assert again.status_code == 302 and again["Location"] == url("mock_report", joined_session)


def test_a_stranger_neither_sees_nor_uses_the_confirmation(joined_session, people):
    stranger = client_for(people["stranger"])
    end = url("mock_end", joined_session)
    assert stranger.get(end).status_code == 404
    assert stranger.post(end, {"confirm": "yes"}).status_code == 404
    joined_session.refresh_from_db()
    assert joined_session.ended_at is None


def test_a_link_from_another_site_to_the_panel_does_not_move_the_candidate(joined_session):
    """The step page loads its panel with htmx, which sends HX-Request; a plain navigation
    (a link or an image on another site, which Lax cookies still sign in) cannot send that
    header, so it reads the panel and moves nobody."""
    them = client_for(joined_session.attempt.user)
    panel = url("mock_panel", joined_session)
    page = them.get(panel + "?step=tradeoffs")
    assert page.status_code == 200
    assert "HX-Request" in page["Vary"]
    assert mock.current_step(joined_session) == "clarify"
    assert not joined_session.events.filter(kind=Kind.STEP_OPENED, step_key="tradeoffs").exists()
    # The step page's own load of its panel moves the candidate.
    them.get(panel + "?step=tradeoffs", headers={"HX-Request": "true"})
    assert mock.current_step(joined_session) == "tradeoffs"
