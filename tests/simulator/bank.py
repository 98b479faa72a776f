"""The bank's questions as the simulator sees them: their reference designs, one way; and the
steps a candidate submits before the panel offers the reference's fleet and router."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.urls import reverse

from practice import services as flow
from questionbank import load_question_spec
from simulator.services import Design, RunRefused, design_from_brief

BANK = sorted(
    p.stem for p in (Path(__file__).resolve().parents[2] / "content/questions").glob("*.md")
)
# Questions whose design the simulator does not run (the panel says why): none now. The
# prefill-only embedding-rerank-service runs as the engine's prefill-only fleet.
NOT_SIMULATED: set[str] = set()
# Prefill-only questions (one pooled output per request): the engine sizes and runs their
# fleet, not the planner; the estimate step's figures they are checked against.
PREFILL_ONLY = {"embedding-rerank-service": {"tok_s": "tok_s_gpu", "replicas": "gpus_online"}}


def reference_design(slug: str) -> Design | None:
    """The design a question's reference settles on; None, after checking the refusal, for a
    question the simulator does not run."""
    brief = load_question_spec(slug).brief
    if slug in NOT_SIMULATED:
        with pytest.raises(RunRefused):
            design_from_brief(brief, slug=slug)
        return None
    return design_from_brief(brief, slug=slug)


def submit(attempt, step_key: str) -> None:
    answer = flow.answer_open(attempt=attempt, step_key=step_key)
    flow.step_submit(
        answer=answer, text="My answer to this step.", fields={}, base_version=answer.version
    )


def open_reference(attempt) -> None:
    """Submit the napkin-math and architecture steps of `attempt`, after which the panel
    offers the reference design's fleet and router."""
    for step_key in ("estimate", "architecture"):
        submit(attempt, step_key)


def submitted_feedback(client, attempt, saved) -> str:
    """The bottlenecks answer a run was saved with, submitted and graded: its feedback panel."""
    outcome = flow.step_submit(
        answer=saved.answer,
        text="The queue is the first wall.",
        fields={},
        base_version=saved.answer.version,
    )
    flow.submission_grade(submission_id=outcome.submission.pk)
    return feedback_panel(client, attempt, outcome.submission.pk)


def feedback_panel(client, attempt, submission_id: int) -> str:
    """A submission's feedback panel as the step page's htmx loads it."""
    url = reverse(
        "submission_feedback", kwargs={"attempt_id": attempt.pk, "submission_id": submission_id}
    )
    return client.get(url, HTTP_HX_REQUEST="true").content.decode()


def panel(client, attempt) -> str:
    """The attempt's load-test panel as the candidate reads it (entities unescaped)."""
    url = reverse("simulator:panel", kwargs={"attempt_id": attempt.pk})
    return html.unescape(client.get(url).content.decode())


def replicas_box(page: str) -> str:
    return re.search(r'id="sim-replicas"[^>]*value="([^"]*)"', page).group(1)
