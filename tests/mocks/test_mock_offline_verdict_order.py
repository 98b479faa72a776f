"""One verdict order everywhere, offline: after a mock interview no model graded, neither the
report (page and export) nor the item statistics show the keyword matcher's score as a grade;
once the candidate self-checks, their score shows, labelled "Self-checked"."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from accounts.instructors import instructor_grant
from mocks import services as mock
from practice import services as flow
from practice.self_check import self_check_save
from questions.models import Question

ARCHITECTURE = (
    "Clients go through an API gateway that handles auth and rate limits, then a prefix-aware "
    "router in front of ten vLLM replicas. We autoscale on the summed queue depth, "
    "vllm:num_requests_waiting, rather than on GPU utilisation."
)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def step_heading(html: str, step_key: str) -> str:
    return html.split(f'id="step-{step_key}-h"')[1].split("</h2>")[0]


def items_section(html: str, step_key: str) -> str:
    return html.split(f'id="items-{step_key}"')[1].split("</section>")[0]


@pytest.fixture
def offline_session(content_loaded):
    """An app-mode mock interview, no model configured: the architecture step is graded by
    the keyword matcher alone, then the session ends."""
    candidate = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=candidate, revision=revision, mode="app")
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    outcome = flow.step_submit(answer=answer, text=ARCHITECTURE, fields={}, base_version=0)
    flow.submission_grade(submission_id=outcome.submission.pk)
    mock.session_end(session=session, reason="ended early")
    submission = outcome.submission
    submission.refresh_from_db()
    assert {g.grader for g in submission.grades.all()} == {"rubric"}  # the matcher only
    return session, submission


def test_no_page_shows_the_matchers_score_as_a_grade_and_a_self_check_is_labelled(
    offline_session,
):
    session, submission = offline_session
    candidate = session.attempt.user
    instructor = User.objects.create(username="teacher")
    instructor_grant(instructor)
    matcher = submission.grades.get(grader="rubric")
    matcher_pct = f"{round(matcher.score * 100)}%"
    report = reverse("mock_report", kwargs={"session_id": session.pk})
    export = reverse("mock_report_md", kwargs={"session_id": session.pk})
    items = reverse("review:items", args=["chat-api-50qps"])
    them, us = signed_in(candidate), signed_in(instructor)

    # Before the self-check: no score anywhere, and nothing of the matcher's as a verdict.
    html = them.get(report).content.decode()
    heading = step_heading(html, "architecture")
    assert "%" not in heading and "awaiting the candidate" in heading
    assert "Matcher" not in html and "Offline grader" not in html
    md = them.get(export).content.decode()
    assert "## Architecture: not scored yet, awaiting the candidate's self-check" in md
    assert "Overall: not graded." in md and matcher_pct not in md.split("## Transcript")[0]
    page = us.get(items).content.decode()
    section = items_section(page, "architecture")
    assert "(0 candidates)" in section and "%" not in section
    assert "1 answer read only by the keyword matcher" in section

    # The candidate rates their answer: every point covered but observability.
    rubric = session.attempt.revision.question_spec.step("architecture").rubric
    flagged = {m["id"] for m in matcher.misconceptions}
    own = self_check_save(
        submission=submission,
        ratings={p.id: "not" if p.id == "arch-observability" else "covered" for p in rubric},
        wrong_ideas=dict.fromkeys(flagged, "dismissed"),
        base_version=0,
    )
    self_grade = submission.grades.get(grader="self")
    self_pct = f"{round(self_grade.score * 100)}%"
    assert own.ratings and self_pct != matcher_pct

    heading = step_heading(them.get(report).content.decode(), "architecture")
    assert self_pct in heading and "Self-checked" in heading and matcher_pct not in heading
    md = them.get(export).content.decode()
    assert f"## Architecture: {self_pct} (Self-checked)" in md
    section = items_section(us.get(items).content.decode(), "architecture")
    assert "(1 candidate)" in section and "Self-checked: 1" in section
    assert "read only by the keyword matcher" not in section
