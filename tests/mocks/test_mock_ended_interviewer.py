"""Once the session has ended, the interviewer's page no longer says which step the candidate
is on (they are on none): it says the session has ended and points to the report."""

from mocks import services as mock
from tests.mocks.test_mock_live import live, url  # noqa: F401 (fixture)


def test_the_ended_page_does_not_say_where_the_candidate_is(live):  # noqa: F811
    session, _them, us = live
    running = us.get(url("mock_interview", session)).content.decode()
    assert "The candidate is on: Clarify the requirements" in running
    mock.session_end(session=session, reason="ended early")
    for html in (
        us.get(url("mock_interview", session)).content.decode(),
        us.get(url("mock_interview_events", session) + "?after=0&graded=0").content.decode(),
    ):
        assert "The session has ended." in html
        assert "The candidate is on" not in html
        assert "Their answer, as it saves" not in html
