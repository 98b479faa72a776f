"""The report of a mock session: every grader's verdict beside the interviewer's, the four
dimensions, time against the budget, the transcript; its Markdown export equals a checked-in
file; the replay scrubs through the saved versions; History lists the session."""

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from mocks import report as mock_report
from mocks import services as mock
from mocks.log import Kind
from mocks.models import MockEvent, MockSession
from practice import services as flow
from practice.models import Submission
from practice.self_check import self_check_save
from questions.models import Question

EXPECTED = Path(__file__).parent / "fixtures" / "mock_report.md"
T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
CLARIFY = "We design for the 50 QPS peak, not the mean, and hold p99 TTFT under 300 ms."
ARCHITECTURE = (
    "Clients go through an API gateway that handles auth and rate limits, then a prefix-aware "
    "router in front of ten vLLM replicas. We autoscale on the summed queue depth, "
    "vllm:num_requests_waiting, rather than on GPU utilisation."
)


def save(session, step_key, text, follow_up_id=""):
    answer = flow.answer_open(attempt=session.attempt, step_key=step_key, follow_up_id=follow_up_id)
    return flow.draft_save(answer=answer, text=text, fields={}, base_version=answer.version)


def submit(answer):
    outcome = flow.step_submit(
        answer=answer, text=answer.text, fields={}, base_version=answer.version
    )
    flow.submission_grade(submission_id=outcome.submission.pk)


def self_check(session, step_key, covered):
    """The candidate's self-check of a step's main answer after the end (no model graded it):
    the points in `covered` covered, the rest not; every wrong idea flagged dismissed."""
    submission = Submission.objects.get(
        answer__attempt=session.attempt, answer__step_key=step_key, answer__follow_up_id=""
    )
    rubric = session.attempt.revision.question_spec.step(step_key).rubric
    flagged = {m["id"] for g in submission.grades.filter(grader="rubric") for m in g.misconceptions}
    self_check_save(
        submission=submission,
        ratings={p.id: "covered" if p.id in covered else "not" for p in rubric},
        wrong_ideas=dict.fromkeys(flagged, "dismissed"),
        base_version=0,
    )


@pytest.fixture
def seeded(content_loaded):
    """A human-mode session walked through by hand, its log's times then fixed (one event
    every 30 s from T0), so the report does not depend on when the test runs."""
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    # Started now, when the interviewer joins (a session past its time takes no drafts); its
    # times move to T0 below.
    session = mock.mock_session_start(user=candidate, revision=revision, mode="human")
    mock.invite_accept(session_id=session.pk, token=mock.invite_token(session), user=interviewer)
    session.refresh_from_db()
    submit(save(session, "clarify", CLARIFY))
    mock.step_score_blind(
        session=session,
        step_key="clarify",
        verdicts={p.id: "hit" for p in revision.question_spec.step("clarify").rubric},
    )
    mock.step_open(session=session, step_key="architecture")
    save(session, "architecture", "Clients go through an API gateway")
    mock.nudge_send(session=session, text="Where does the shared prompt get cached?")
    mock.follow_up_ask(session=session, text="How does the router pick a replica?")
    submit(save(session, "architecture", "By a hash of the prompt prefix.", "mock:ask-1"))
    submit(save(session, "architecture", ARCHITECTURE))
    rubric = revision.question_spec.step("architecture").rubric
    mock.step_score_blind(
        session=session,
        step_key="architecture",
        verdicts={p.id: "partial" for p in rubric} | {"arch-gateway": "hit"},
    )
    mock.communication_score(session=session, verdict="partial")
    for event in MockEvent.objects.filter(session=session):
        MockEvent.objects.filter(pk=event.pk).update(at=T0 + timedelta(seconds=30 * event.seq))
    last = session.events.order_by("-seq").first()
    end = T0 + timedelta(seconds=30 * last.seq + 60)
    mock.session_end(session=session, now=end, reason="ended early")
    # Written feedback, right after the end; the latest per step counts.
    mock.feedback_write(
        session=session, user=interviewer, step_key="architecture", text="Good router."
    )
    mock.feedback_write(
        session=session,
        user=interviewer,
        step_key="architecture",
        text="Good router; say why queue depth beats GPU utilisation.",
    )
    mock.feedback_write(
        session=session,
        user=interviewer,
        step_key=mock.OVERALL,
        text="Clear and structured.\nState the SLO before the design.",
    )
    # No model graded: the candidate self-checks after the end.
    self_check(session, "clarify", {p.id for p in revision.question_spec.step("clarify").rubric})
    self_check(session, "architecture", {"arch-gateway", "arch-prefix-router"})
    MockSession.objects.filter(pk=session.pk).update(started_at=T0)
    session.refresh_from_db()
    return session


def test_the_markdown_export_equals_the_checked_in_file(seeded):
    exported = mock_report.report_markdown(seeded)
    if os.environ.get("UPDATE_EXPECTED") == "1":  # after a deliberate change of the report
        EXPECTED.write_text(exported)
    assert exported == EXPECTED.read_text()


def test_the_report_puts_every_verdict_side_by_side(seeded):
    report = mock_report.report_context(seeded)
    architecture = next(s for s in report["steps"] if s["key"] == "architecture")
    assert architecture["score_label"] == "Self-checked"
    router = next(p for p in architecture["points"] if p["id"] == "arch-prefix-router")
    # The candidate's self-check beside the interviewer; no model graded.
    assert (router["self"], router["human"], router["model"]) == ("hit", "partial", "")
    assert router["disagree"]
    assert router["matcher"] == ""  # the matcher's verdicts only for the interviewer
    gateway = next(p for p in architecture["points"] if p["id"] == "arch-gateway")
    assert (gateway["self"], gateway["human"], gateway["disagree"]) == ("hit", "hit", False)
    theirs = mock_report.report_context(seeded, show_matcher=True)
    architecture = next(s for s in theirs["steps"] if s["key"] == "architecture")
    router = next(p for p in architecture["points"] if p["id"] == "arch-prefix-router")
    assert router["matcher"] == "hit"
    assert router["matcher_quote"] and router["matcher_quote"] in ARCHITECTURE
    dims = {d["name"]: d for d in report["dimensions"]}
    assert dims["Problem navigation"]["human_score"] == 1.0
    assert report["communication"] == "partial"
    assert [t["text"] for t in report["transcript"] if t["kind"] == Kind.NUDGE] == [
        "Nudge (Architecture): Where does the shared prompt get cached?"
    ]


def test_without_a_person_communication_is_not_scored(content_loaded):
    user = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=user, revision=revision, mode="app")
    mock.session_end(session=session, reason="ended early")
    client = Client()
    client.force_login(user)
    html = client.get(reverse("mock_report", kwargs={"session_id": session.pk})).content.decode()
    assert "not scored" in html
    assert "not scored" in mock_report.report_markdown(session)


def test_both_parties_read_the_report_and_download_it(seeded):
    for name in ("candidate", "interviewer"):
        client = Client()
        client.force_login(User.objects.get(username=name))
        page = client.get(reverse("mock_report", kwargs={"session_id": seeded.pk}))
        html = page.content.decode()
        assert page.status_code == 200 and "verdicts differ" in html
        md = client.get(reverse("mock_report_md", kwargs={"session_id": seeded.pk}))
        assert md["Content-Type"].startswith("text/markdown")
        if name == "candidate":  # the matcher's verdicts would read as a grade to them
            assert "Matcher" not in html
            assert md.content.decode() == EXPECTED.read_text()
        else:  # the interviewer sees them, labelled advisory
            assert "Matcher, advisory" in html and "Matcher, advisory" in md.content.decode()
    stranger = User.objects.create(username="stranger")
    client = Client()
    client.force_login(stranger)
    assert client.get(reverse("mock_report", kwargs={"session_id": seeded.pk})).status_code == 404


def test_the_replay_scrubs_through_the_saved_versions(seeded):
    context = mock_report.replay_context(seeded, step_key="architecture", version=0)
    texts = [v["text"] for v in context["versions"]]
    assert texts[0] == "Clients go through an API gateway"
    assert texts[-1] == ARCHITECTURE
    assert context["shown"] == 0
    client = Client()
    client.force_login(seeded.attempt.user)
    replay = reverse("mock_replay", kwargs={"session_id": seeded.pk})
    page = client.get(f"{replay}?step=architecture")
    html = page.content.decode()
    assert 'type="range"' in html and "Clients go through an API gateway</pre>" in html


def test_history_lists_the_session_and_its_trend_counts_it(seeded):
    client = Client()
    client.force_login(seeded.attempt.user)
    html = client.get(reverse("history")).content.decode()
    assert "mock interview" in html
    assert reverse("mock_report", kwargs={"session_id": seeded.pk}) in html
    from practice.history import candidate_history

    trends = {t["key"]: t["series"] for t in candidate_history(seeded.attempt.user)["trends"]}
    assert len(trends["clarify"]) == 1 and len(trends["architecture"]) == 1
    assert Submission.objects.filter(answer__attempt=seeded.attempt).count() == 3


def test_what_is_submitted_after_the_end_stays_out_of_the_report(seeded):
    submit(save(seeded, "bottlenecks", "The queue is the first wall; add replicas."))
    assert Submission.objects.filter(answer__step_key="bottlenecks").exists()
    assert mock_report.report_markdown(seeded) == EXPECTED.read_text()
