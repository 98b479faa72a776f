"""A mock interview withholds the napkin checker while it runs ("the numbers are checked at the
end: the report has them"), so the report, on the page and in the export, has each number:
what the candidate wrote, the checker's verdict and the expected value."""

from __future__ import annotations

from django.urls import reverse

from mocks import services as mock
from practice import services as flow
from questions.models import Question
from tests.mocks.conftest import client_for

WORKSHEET = "W = P * b_w in GB\nwrong = 3 * P * b_w in GB"


def test_the_report_has_the_numbers_the_session_withheld(people, bank_loaded):
    revision = Question.objects.get(slug="structured-extraction-api").current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
    answer = flow.answer_open(attempt=session.attempt, step_key="estimate")
    fields = {"worksheet": WORKSHEET, "answers": {"w_bf16": "W", "n_gpu": "wrong"}}
    outcome = flow.step_submit(answer=answer, text="", fields=fields, base_version=answer.version)
    flow.submission_grade(submission_id=outcome.submission.pk)
    client = client_for(people["candidate"])
    check = reverse("attempt_check", kwargs={"attempt_id": session.attempt_id})
    post = {"quantity": "w_bf16", "expr_w_bf16": "W"}
    refused = client.post(check, post, HTTP_HX_REQUEST="true").content.decode()
    assert "the report has them" in refused
    mock.session_end(session=session, reason="ended early")

    page = client.get(reverse("mock_report", kwargs={"session_id": session.pk})).content.decode()
    numbers = page.split("Napkin math:")[1].split("mock-report-step")[0]
    assert "Your numbers" in numbers
    assert "Weight memory in BF16" in numbers and "15.23 GB" in numbers
    assert "<code>W</code>" in numbers and "Weight memory in BF16: Correct" in numbers
    # The fleet the brief asks for, and what the candidate had instead.
    assert "H100s for the interactive peak by throughput" in numbers
    assert "expected 4" in numbers
    assert "W = P * b_w in GB" in numbers  # the worksheet itself

    export = client.get(
        reverse("mock_report_md", kwargs={"session_id": session.pk})
    ).content.decode()
    section = export.split("## Napkin math")[1].split("\n## ")[0]
    assert "### Your numbers" in section
    assert "Weight memory in BF16: Correct (`W`), expected 15.23 GB" in section


def test_a_step_awaiting_the_candidates_self_check_links_to_it(people, bank_loaded):
    # With no model every step read "not scored yet, awaiting the candidate's self-check",
    # and the candidate reading their own report had no way from it to the self-check.
    revision = Question.objects.get(slug="structured-extraction-api").current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
    answer = flow.answer_open(attempt=session.attempt, step_key="clarify")
    outcome = flow.step_submit(
        answer=answer, text="Two classes of traffic.", fields={}, base_version=answer.version
    )
    flow.submission_grade(submission_id=outcome.submission.pk)
    mock.session_end(session=session, reason="ended early")
    link = f'href="/attempts/{session.attempt_id}/steps/clarify/#self-check"'
    report = reverse("mock_report", kwargs={"session_id": session.pk})
    page = client_for(people["candidate"]).get(report).content.decode()
    assert "awaiting the candidate's self-check" in page and link in page
    assert "rate your answer against the rubric" in page
    # Nobody else is sent to the candidate's attempt.
    session.refresh_from_db()
    shared_url = reverse("mock_shared", kwargs={"token": mock.share_issue(session=session)})
    shared = client_for(people["stranger"]).get(shared_url).content.decode()
    assert "awaiting the candidate's self-check" in shared and link not in shared


def test_the_report_keeps_the_load_tests_run_during_the_session(people, bank_loaded):
    # The practice scorecard lists each load test (prediction beside the simulator's verdict)
    # as part of the attempt's record; the mock report, the record of a mock, left them out.
    revision = Question.objects.get(slug="structured-extraction-api").current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
    client = client_for(people["candidate"])
    run = reverse("simulator:run", kwargs={"attempt_id": session.attempt_id})
    post = {"scenario": "baseline", "prediction": "Four hold the rate.", "replicas": "4"}
    assert client.post(run, post).status_code == 200
    mock.session_end(session=session, reason="ended early")
    page = client.get(reverse("mock_report", kwargs={"session_id": session.pk})).text
    assert "Load tests of your design" in page
    assert "Four hold the rate." in page and "on 4 replicas" in page
