"""The interviewer's boxes (nudge, follow-up, feedback) cut nothing as typed or pasted: like an
answer box, a text past the limit is refused by the server, which says how long it is and
what the limit is, and the box keeps it to shorten (nothing is sent as "Sent." cut short)."""

import re

from mocks import services as mock
from mocks.log import Kind
from tests.mocks.test_mock_live import live, url  # noqa: F401 (fixture)


def test_the_interviewers_boxes_have_no_maxlength_to_cut_a_paste(live):  # noqa: F811
    session, _them, us = live
    html = us.get(url("mock_interview", session)).content.decode()
    boxes = re.findall(r"<textarea[^>]*>", html)
    assert len(boxes) == 2 + 5 + 1  # nudge, follow-up, each step's feedback, overall
    assert not [b for b in boxes if "maxlength" in b]


def test_a_nudge_or_follow_up_past_the_limit_is_refused_with_its_length(live):  # noqa: F811
    session, _them, us = live
    long = "x" * (mock.NOTE_MAX_CHARS + 1)
    for name, what in (("mock_nudge", "nudge"), ("mock_ask", "follow-up question")):
        refused = us.post(url(name, session), {"text": long})
        assert refused.status_code == 422
        told = refused.content.decode()
        assert f"This {what} is 1,001 characters; the limit is 1,000" in told, told
        assert "was not sent" in told
    assert not session.events.filter(kind__in=[Kind.NUDGE, Kind.FOLLOW_UP_ASKED]).exists()


def test_feedback_past_the_limit_is_refused_with_its_length(live):  # noqa: F811
    session, _them, us = live
    long = "x" * (mock.FEEDBACK_MAX_CHARS + 1)
    for step in ("clarify", "overall"):
        refused = us.post(url("mock_feedback", session, step=step), {"text": long})
        assert refused.status_code == 422
        told = refused.content.decode()
        assert "This feedback is 2,001 characters; the limit is 2,000" in told, told
        assert "was not saved" in told
    assert not session.events.filter(kind=Kind.FEEDBACK).exists()
