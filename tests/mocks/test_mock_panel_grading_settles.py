"""After the end, a step's answer may still wait for its grader: the step page's panel keeps
polling until the grading settles, then says where the answer stands (scored, or waiting for
the candidate's self-check), instead of "being graded" for good."""

from __future__ import annotations

from django.urls import reverse

from mocks import services as mock
from practice import services as flow
from practice.models import Submission
from tests.mocks.conftest import client_for


def _panel(client, session, after):
    url = reverse("mock_panel", kwargs={"session_id": session.pk})
    return client.get(f"{url}?step=bottlenecks&after={after}", HTTP_HX_REQUEST="true")


def test_the_ended_panel_polls_until_the_grading_settles(joined_session):
    session = joined_session
    answer = flow.answer_open(attempt=session.attempt, step_key="bottlenecks")
    flow.draft_save(answer=answer, text="The KV cache fills.", fields={}, base_version=0)
    mock.session_end(session=session, reason="time")  # submits it; no worker has graded it
    submission = Submission.objects.get(answer=answer)
    assert submission.grade_status == Submission.GradeStatus.QUEUED
    client = client_for(session.attempt.user)

    first = _panel(client, session, -1).content.decode()
    assert "This step's answer is being graded." in first
    assert "hx-get=" in first and 'hx-select="#mock-ended-grading"' in first  # it asks on
    session.refresh_from_db()
    poll = first[first.index('hx-get="') + len('hx-get="') :]
    poll = poll[: poll.index('"')].replace("&amp;", "&")

    # Still queued: nothing new to draw.
    assert client.get(poll, HTTP_HX_REQUEST="true").status_code == 204

    flow.submission_grade(submission_id=submission.pk)  # offline: the matcher alone
    settled = client.get(poll, HTTP_HX_REQUEST="true")
    assert settled.status_code == 200
    html = settled.content.decode()
    assert "being graded" not in html
    assert "rate it in your self-check" in html
    assert "hx-get=" not in html  # settled: the polling stops
