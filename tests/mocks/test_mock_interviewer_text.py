"""What the interviewer types (a nudge, a follow-up question, feedback on a step and overall)
is shown to others with its bidirectional controls written out and isolated in a <bdi>: a
U+202E in it cannot reverse the page's own words after it, on the candidate's panel, the
report (signed in or by its read-only link), the interviewer's live view or the export."""

from django.test import Client
from django.urls import reverse

from mocks import services as mock
from tests.mocks.test_mock_live import live, url  # noqa: F401 (fixture)

RLO = "\u202e"
NUDGE = f"Think {RLO}about the peak"
ASKED = f"Which {RLO}percentile?"
STEP_FEEDBACK = f"Good {RLO}router"
OVERALL = f"Clear {RLO}and structured"


def shown(text: str) -> str:
    return text.replace(RLO, "[U+202E]")


def test_the_candidates_panel_shows_a_nudge_and_a_follow_up_with_their_controls_shown(live):  # noqa: F811
    session, them, us = live
    assert us.post(url("mock_nudge", session), {"text": NUDGE}).status_code == 200
    assert us.post(url("mock_ask", session), {"text": ASKED}).status_code == 200
    panel = them.get(url("mock_panel", session) + "?step=clarify").content.decode()
    assert RLO not in panel
    assert f"<bdi>{shown(NUDGE)}</bdi>" in panel
    assert f"<bdi>{shown(ASKED)}</bdi>" in panel
    # The interviewer's own view of the follow-up waiting for its answer.
    live_view = us.get(url("mock_interview", session)).content.decode()
    assert RLO not in live_view.split('id="live"')[1].split("</textarea>")[0]
    assert f"<bdi>{shown(ASKED)}</bdi>" in live_view


def test_the_report_and_its_export_show_the_feedback_with_its_controls_shown(live):  # noqa: F811
    session, them, us = live
    us.post(url("mock_nudge", session), {"text": NUDGE})
    assert (
        us.post(url("mock_feedback", session, step="clarify"), {"text": STEP_FEEDBACK}).status_code
        == 200
    )
    us.post(url("mock_feedback", session, step="overall"), {"text": OVERALL})
    mock.session_end(session=session, reason="ended early")
    token = mock.share_issue(session=session)
    pages = {
        "candidate": them.get(url("mock_report", session)),
        "interviewer": us.get(url("mock_report", session)),
        "shared": Client().get(reverse("mock_shared", kwargs={"token": token})),
    }
    for who, page in pages.items():
        html = page.content.decode()
        assert page.status_code == 200, who
        assert RLO not in html, who
        assert f"<bdi>{shown(STEP_FEEDBACK)}</bdi>" in html, who
        assert f"<bdi>{shown(OVERALL)}</bdi>" in html, who
        assert shown(NUDGE) in html, who  # the transcript
    md = them.get(url("mock_report_md", session)).content.decode()
    assert RLO not in md
    assert shown(STEP_FEEDBACK) in md and shown(OVERALL) in md and shown(NUDGE) in md
