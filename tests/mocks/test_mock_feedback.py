"""The interviewer's written feedback: a box per step beside the scoring and one overall on
the live view; each save is logged, the latest per step (and overall) counts, and the report
and its export show it. Only the session's interviewer writes it, during the session or
after its end; it is limited in length and escaped."""

import pytest
from django.contrib.auth.models import User

from mocks import report as mock_report
from mocks import services as mock
from mocks.log import Kind
from tests.mocks.test_mock_live import Htmx, live, url  # noqa: F401 (fixture)


def feedback_url(session, step):
    return url("mock_feedback", session, step=step)


def test_the_live_view_has_a_feedback_box_per_step_and_overall(live):  # noqa: F811
    session, _, us = live
    html = us.get(url("mock_interview", session)).content.decode()
    for step in ("clarify", "estimate", "architecture", "bottlenecks", "tradeoffs", "overall"):
        assert f'action="{feedback_url(session, step)}"' in html


def test_the_latest_feedback_per_step_and_overall_is_in_the_report(live):  # noqa: F811
    session, them, us = live
    assert (
        us.post(feedback_url(session, "architecture"), {"text": "Good router."}).status_code == 200
    )
    us.post(feedback_url(session, "architecture"), {"text": "Good router; say why prefixes."})
    us.post(feedback_url(session, "overall"), {"text": "Clear and structured."})
    assert session.events.filter(kind=Kind.FEEDBACK).count() == 3
    # The candidate reads none of it while the session runs.
    panel = them.get(url("mock_panel", session) + "?step=architecture").content.decode()
    assert "Good router" not in panel
    mock.session_end(session=session, reason="ended early")

    context = mock_report.report_context(session)
    architecture = next(s for s in context["steps"] if s["key"] == "architecture")
    assert architecture["feedback"] == "Good router; say why prefixes."
    assert context["overall_feedback"] == "Clear and structured."
    for client in (them, us):
        html = client.get(url("mock_report", session)).content.decode()
        assert "Good router; say why prefixes." in html and "Good router.<" not in html
        assert "Clear and structured." in html
        md = client.get(url("mock_report_md", session)).content.decode()
        assert "Good router; say why prefixes." in md and "Clear and structured." in md


def test_feedback_may_be_written_after_the_end_by_the_interviewer_only(live):  # noqa: F811
    session, them, us = live
    mock.session_end(session=session, reason="ended early")
    assert (
        us.post(feedback_url(session, "clarify"), {"text": "Asked the right things."}).status_code
        == 200
    )
    html = us.get(url("mock_interview", session)).content.decode()
    assert "Asked the right things." in html  # the box shows what was saved
    assert them.post(feedback_url(session, "clarify"), {"text": "I was great."}).status_code == 404
    stranger = Htmx()
    stranger.force_login(User.objects.create(username="stranger"))
    assert stranger.post(feedback_url(session, "overall"), {"text": "Hi."}).status_code == 404
    assert us.post(url("mock_feedback", session, step="nowhere"), {"text": "x"}).status_code == 404
    assert mock_report.report_context(session)["steps"][0]["feedback"] == "Asked the right things."
    # The service refuses anyone but the interviewer too.
    with pytest.raises(mock.MockError, match="Only the session's interviewer"):
        mock.feedback_write(session=session, user=session.attempt.user, step_key="", text="x")


def test_feedback_is_limited_in_length_and_escaped(live):  # noqa: F811
    session, them, us = live
    long = "x" * (mock.FEEDBACK_MAX_CHARS + 1)
    refused = us.post(feedback_url(session, "overall"), {"text": long})
    assert refused.status_code == 422 and "the limit is 2,000" in refused.content.decode()
    assert not session.events.filter(kind=Kind.FEEDBACK).exists()
    assert (
        us.post(feedback_url(session, "overall"), {"text": "<script>alert(1)</script>"}).status_code
        == 200
    )
    mock.session_end(session=session, reason="ended early")
    html = them.get(url("mock_report", session)).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
