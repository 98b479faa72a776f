"""The candidate's diagram in a mock interview: the interviewer sees it laid out as it saves,
the report shows it laid out, and the Markdown export carries it as a ```mermaid block (so it
renders on GitHub)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from mocks import report as mock_report
from mocks import services as mock
from practice import services as flow
from questions.models import Question
from tests.mocks.conftest import client_for

DIAGRAM = """flowchart LR
    gw[API gateway] --> router[Router: prefix-aware]
    router --> vllm[vLLM x10]
    autoscaler[Autoscaler] -.->|queue depth| vllm
"""


@pytest.fixture
def session(content_loaded):
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=candidate, revision=revision, mode="human")
    mock.invite_accept(session_id=session.pk, token=mock.invite_token(session), user=interviewer)
    session.refresh_from_db()
    return session


def _draw(session, *, submit: bool):
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    fields = {"diagram": DIAGRAM}
    if not submit:
        return flow.draft_save(answer=answer, text="A gateway.", fields=fields, base_version=0)
    outcome = flow.step_submit(
        answer=answer, text="A gateway.", fields=fields, base_version=answer.version
    )
    flow.submission_grade(submission_id=outcome.submission.pk)
    return outcome.submission


def test_the_interviewer_sees_the_diagram_laid_out_as_it_saves(session):
    them = client_for(session.attempt.user)
    panel = reverse("mock_panel", kwargs={"session_id": session.pk}) + "?step=architecture"
    them.get(panel, headers={"HX-Request": "true"})  # the step page loads its panel
    _draw(session, submit=False)
    page = client_for(session.interviewer).get(
        reverse("mock_interview", kwargs={"session_id": session.pk})
    )
    html = page.content.decode()
    assert "Their diagram, as it saves" in html
    assert "<svg" in html and ">Router: prefix-aware</text>" in html
    # The session's log keeps it with the draft, so the replay shows each saved version's.
    replay = mock_report.replay_context(session, step_key="architecture", version=None)
    assert replay["versions"][-1]["diagram"] == DIAGRAM


def test_the_report_and_its_markdown_export_carry_the_diagram(session):
    _draw(session, submit=True)
    mock.session_end(session=session, reason="ended early")
    client = client_for(session.attempt.user)
    html = client.get(reverse("mock_report", kwargs={"session_id": session.pk})).content
    assert b"The diagram submitted" in html and b">vLLM x10</text>" in html

    md = client.get(reverse("mock_report_md", kwargs={"session_id": session.pk})).content.decode()
    assert "```mermaid\n" + DIAGRAM.strip() + "\n```" in md
    assert md == mock_report.report_markdown(session)


def test_a_fence_in_the_diagram_cannot_close_the_export_block(session):
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    sneaky = "flowchart LR\n    a[```] --> b\n"
    outcome = flow.step_submit(
        answer=answer, text="", fields={"diagram": sneaky}, base_version=answer.version
    )
    flow.submission_grade(submission_id=outcome.submission.pk)
    mock.session_end(session=session, reason="ended early")
    md = mock_report.report_markdown(session)
    assert "````mermaid\n" + sneaky.strip() + "\n````" in md
