"""After the end, the report keeps the step page's promise: each step's reference answer, and
the wrong ideas the graders found in the answers with why each breaks, on the page and in
the Markdown export, for both modes; an interviewer who has not scored a step still sees none
of the graders' findings on it."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from mocks import report as mock_report
from mocks import services as mock
from practice import services as flow
from questions.models import Question
from tests.mocks.conftest import client_for

WRONG = (
    "An API gateway handles auth, then ten vLLM replicas sit behind a router. "
    "We autoscale on GPU utilisation."
)
IDEA = "GPU utilisation is the signal to autoscale on."


def submit(session, step_key, text):
    answer = flow.answer_open(attempt=session.attempt, step_key=step_key)
    outcome = flow.step_submit(answer=answer, text=text, fields={}, base_version=answer.version)
    flow.submission_grade(submission_id=outcome.submission.pk)
    return outcome.submission


@pytest.fixture
def revision(content_loaded):
    return Question.objects.get(slug="chat-api-50qps").current_revision


def test_the_app_interviewer_report_shows_references_and_the_wrong_ideas_found(revision):
    candidate = User.objects.create(username="candidate")
    session = mock.mock_session_start(user=candidate, revision=revision, mode="app")
    submission = submit(session, "architecture", WRONG)
    found = {m["id"] for g in submission.grades.all() for m in g.misconceptions}
    assert "a1-autoscale-gpu-util" in found  # the graders flagged it
    client = client_for(candidate)
    report_url = reverse("mock_report", kwargs={"session_id": session.pk})
    assert client.get(report_url).status_code == 403  # nothing before the end
    mock.session_end(session=session, reason="ended early")

    html = client.get(report_url).content.decode()
    steps = revision.rendered["steps"]
    assert steps["architecture"]["reference"] in html
    assert steps["clarify"]["reference"] in html
    assert IDEA in html
    assert steps["architecture"]["misconceptions"]["a1-autoscale-gpu-util"] in html
    assert "We autoscale on GPU utilisation." in html  # the candidate's own words

    md = client.get(reverse("mock_report_md", kwargs={"session_id": session.pk})).content
    md = md.decode()
    spec = revision.question_spec
    assert spec.step("architecture").reference.strip().splitlines()[0] in md
    assert spec.step("clarify").reference.strip().splitlines()[0] in md
    assert IDEA in md
    why = next(m for m in spec.step("architecture").misconceptions if m.idea == IDEA)
    assert why.explanation.strip().splitlines()[0] in md


def test_an_interviewer_sees_no_wrong_ideas_on_a_step_they_have_not_scored(revision):
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    session = mock.mock_session_start(user=candidate, revision=revision, mode="human")
    mock.invite_accept(session_id=session.pk, token=mock.invite_token(session), user=interviewer)
    session.refresh_from_db()
    submit(session, "architecture", WRONG)
    mock.session_end(session=session, reason="ended early")
    report_url = reverse("mock_report", kwargs={"session_id": session.pk})
    md_url = reverse("mock_report_md", kwargs={"session_id": session.pk})
    reference = revision.rendered["steps"]["architecture"]["reference"]

    theirs = client_for(candidate).get(report_url).content.decode()
    assert IDEA in theirs and reference in theirs
    ours = client_for(interviewer)
    page = ours.get(report_url).content.decode()
    assert IDEA not in page
    assert reference in page  # the reference was the interviewer's all along
    assert IDEA not in ours.get(md_url).content.decode()

    rubric = revision.question_spec.step("architecture").rubric
    mock.step_score_blind(
        session=session, step_key="architecture", verdicts={p.id: "partial" for p in rubric}
    )
    assert IDEA in ours.get(report_url).content.decode()
    context = mock_report.report_context(session)
    architecture = next(s for s in context["steps"] if s["key"] == "architecture")
    assert [m["idea"] for m in architecture["wrong_ideas"]] == [IDEA]


def test_the_markdown_export_keeps_each_answer_as_submitted_quoted(revision):
    # The page shows "The answer submitted" for each step; an export without it would leave
    # the candidate a report of verdicts on words they no longer have.
    candidate = User.objects.create(username="candidate")
    session = mock.mock_session_start(user=candidate, revision=revision, mode="app")
    typed = "# Not a heading\nA gateway, then a router.\n\n<script>alert(1)</script>"
    submit(session, "architecture", typed)
    mock.session_end(session=session, reason="ended early")
    md = client_for(candidate).get(reverse("mock_report_md", kwargs={"session_id": session.pk}))
    architecture = md.content.decode().split("## Architecture", 1)[1].split("\n## ", 1)[0]
    assert (
        "### The answer submitted\n\n"
        # Quoted, and its HTML escaped, so a viewer that renders HTML shows it as typed.
        "> # Not a heading\n> A gateway, then a router.\n>\n> \\<script>alert(1)\\</script>\n"
    ) in architecture
