"""The report and the panel speak to whoever reads them: the shared report does not call the
candidate's numbers "Your numbers"; the Self-check column uses the words the candidate picked
("Covered", not the graders' "hit"); a number submitted wrong reads "Wrong", not the practice
page's "Not right yet"; and a panel line's time says it is time into the session."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from mocks import report as mock_report
from mocks import services as mock
from practice import services as flow
from practice.models import Submission
from questions.models import Question
from tests.mocks.conftest import client_for
from tests.mocks.test_mock_report import self_check


def _numbers_session(people):
    revision = Question.objects.get(slug="structured-extraction-api").current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
    answer = flow.answer_open(attempt=session.attempt, step_key="estimate")
    fields = {"worksheet": "W = P * b_w in GB", "answers": {"w_bf16": "W", "n_gpu": "17"}}
    outcome = flow.step_submit(answer=answer, text="", fields=fields, base_version=answer.version)
    flow.submission_grade(submission_id=outcome.submission.pk)
    mock.session_end(session=session, reason="ended early")
    return session


def test_the_shared_report_speaks_of_the_candidates_numbers(people, bank_loaded):
    session = _numbers_session(people)
    shared = reverse("mock_shared", kwargs={"token": mock.share_issue(session=session)})
    page = Client().get(shared).content.decode()
    assert "The candidate&#x27;s numbers" in page or "The candidate's numbers" in page
    assert "Your numbers" not in page
    own = client_for(people["candidate"]).get(reverse("mock_report", args=[session.pk]))
    assert "Your numbers" in own.content.decode()


def test_the_markdown_export_speaks_to_the_candidate_or_of_them(people, bank_loaded):
    session = _numbers_session(people)
    own = client_for(people["candidate"]).get(reverse("mock_report_md", args=[session.pk]))
    assert "### Your numbers" in own.content.decode()
    theirs = mock_report.report_markdown(session, is_candidate=False)
    assert "### The candidate's numbers" in theirs and "Your numbers" not in theirs


def test_a_wrong_number_reads_wrong_in_the_report(people, bank_loaded):
    session = _numbers_session(people)
    client = client_for(people["candidate"])
    page = client.get(reverse("mock_report", args=[session.pk])).content.decode()
    export = client.get(reverse("mock_report_md", args=[session.pk])).content.decode()
    for text in (page, export):
        assert "Not right yet" not in text
        assert ": Wrong" in text


def test_the_self_check_column_uses_the_candidates_words(joined_session):
    session = joined_session
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    flow.draft_save(answer=answer, text="A gateway in front.", fields={}, base_version=0)
    mock.session_end(session=session, reason="candidate")
    flow.submission_grade(submission_id=Submission.objects.get(answer=answer).pk)  # matcher
    self_check(session, "architecture", {"arch-gateway"})
    client = client_for(session.attempt.user)
    page = client.get(reverse("mock_report", args=[session.pk])).content.decode()
    step = page[page.index('id="step-architecture-h"') :]
    step = step[: step.index("</table>")]
    assert "<td>Covered</td>" in step and "<td>Not covered</td>" in step
    assert "<td>hit</td>" not in step and "<td>miss</td>" not in step
    export = client.get(reverse("mock_report_md", args=[session.pk])).content.decode()
    section = export.split("## Architecture")[1].split("\n## ")[0]
    assert "| Covered |" in section and "| hit |" not in section


def test_a_panel_line_says_its_time_is_into_the_session(joined_session):
    session = joined_session
    mock.nudge_send(session=session, text="Start from the peak load.")
    panel = client_for(session.attempt.user).get(
        reverse("mock_panel", kwargs={"session_id": session.pk}) + "?step=clarify"
    )
    html = panel.content.decode()
    assert '<span class="muted">0:00 into the interview:</span>' in html
