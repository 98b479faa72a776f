"""Communication in a mock report: only a person scores it. Where none interviewed (the app
was the interviewer, or no one joined), its row says so in words, not "the interviewer" that
reads as if someone rated it; where one did, the row gives their score, or says they have not
scored it yet."""

import re

from django.contrib.auth.models import User
from django.urls import reverse

from mocks import report as mock_report
from mocks import services as mock
from questions.models import Question
from tests.mocks.conftest import client_for

# The page's row: where the score comes from is told beneath the dimension's name.
NOBODY = (
    "Communication from a human interviewer only | — "
    "| not scored: no human interviewer in this session"
)


def communication_row(session) -> str:
    """The report's Communication row, its cells joined by " | " (the text of each cell's
    parts joined by a space)."""
    response = client_for(session.attempt.user).get(
        reverse("mock_report", kwargs={"session_id": session.pk})
    )
    assert response.status_code == 200
    page = response.content.decode()
    row = re.search(r'<tr><th scope="row">Communication\b.*?</tr>', page, re.S)
    assert row, "the report has a Communication row"
    cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row.group(0), re.S)
    return " | ".join(" ".join(re.sub(r"<[^>]+>", " ", c).split()) for c in cells)


def markdown_row(session) -> str:
    return next(
        line
        for line in mock_report.report_markdown(session).splitlines()
        if line.startswith("| Communication")
    )


def ended_session(mode: str):
    user = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=user, revision=revision, mode=mode)
    mock.session_end(session=session, reason="ended early")
    return session


def test_with_the_app_as_interviewer_communication_says_no_human_scored_it(content_loaded):
    session = ended_session("app")
    assert communication_row(session) == NOBODY
    assert markdown_row(session) == (
        "| Communication | a human interviewer only | - "
        "| not scored: no human interviewer in this session |"
    )


def test_a_session_no_interviewer_joined_says_no_human_scored_it(content_loaded):
    session = ended_session("human")
    assert communication_row(session) == NOBODY
    assert "not scored: no human interviewer in this session" in markdown_row(session)


def test_an_interviewers_communication_score_is_shown_as_before(joined_session):
    mock.session_end(session=joined_session, reason="ended early")  # scored in the wrap-up
    assert (
        communication_row(joined_session) == "Communication from the interviewer | — | not scored"
    )
    mock.communication_score(session=joined_session, verdict="partial")
    assert (
        communication_row(joined_session)
        == "Communication from the interviewer | — | 50% (partial)"
    )
    assert markdown_row(joined_session) == "| Communication | the interviewer | - | 50% (partial) |"
    # The interviewer closes their account (the session keeps no one): their score stays.
    joined_session.interviewer.delete()
    joined_session.refresh_from_db()
    assert (
        communication_row(joined_session)
        == "Communication from the interviewer | — | 50% (partial)"
    )


def test_the_report_draws_no_empty_box_for_a_feature_with_nothing_to_say(content_loaded):
    # The drills' scorecard fragment offers nothing here (the report lists no concepts to
    # review): wrapped in a card by the report, it was an empty box above the transcript.
    session = ended_session("app")
    page = (
        client_for(session.attempt.user)
        .get(reverse("mock_report", kwargs={"session_id": session.pk}))
        .content.decode()
    )
    assert not re.search(r'<(div|section) class="card"[^>]*>\s*</(div|section)>', page)
