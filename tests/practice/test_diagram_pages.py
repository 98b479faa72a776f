"""The submitted diagram goes everywhere the answer goes, laid out, with what the graders found
in it: the feedback panel (a model's verdict quoting an edge, the self-check's pointer), the
reference diagram beside the reference answer, the scorecard and History."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from practice import services as flow
from practice.models import Grade, Submission
from questions.models import Question

DIAGRAM = """flowchart LR
    gw[API gateway] --> router[Router: prefix-aware]
    router --> vllm[vLLM replicas x10]
"""
EDGES = ["API gateway -> Router: prefix-aware", "Router: prefix-aware -> vLLM replicas x10"]


@pytest.fixture
def submitted(content_loaded):
    """An architecture answer with a diagram, submitted and graded offline (no model)."""
    user = User.objects.create_user("drawer", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    outcome = flow.step_submit(
        answer=answer, text="A gateway in front.", fields={"diagram": DIAGRAM}, base_version=0
    )
    flow.submission_grade(submission_id=outcome.submission.pk)
    client = Client()
    client.force_login(user)
    return attempt, outcome.submission, client


def _path_point(attempt):
    step = attempt.revision.question_spec.step("architecture")
    return next(p for p in step.rubric if p.diagram is not None and len(p.diagram.path) >= 3)


def _marked_edges(html: str) -> int:
    return len(re.findall(r'<g class="edge is-evidence" data-edge="\d+">', html))


def test_the_self_check_points_at_the_edges_and_the_picture_marks_them(submitted):
    attempt, submission, client = submitted
    stored = Grade.objects.get(submission=submission, grader="rubric")
    point = _path_point(attempt)
    verdict = next(p for p in stored.points if p["id"] == point.id)
    assert verdict["evidence_source"] == "diagram"
    assert verdict["diagram_evidence"] == EDGES

    html = client.get(f"/attempts/{attempt.pk}/steps/architecture/").content.decode()
    item = html.split(f'id="point-{point.id}"', 1)[1].split("</fieldset>", 1)[0]
    assert "Where the keyword matcher points in your diagram (it may cover this): " in item
    for edge in EDGES:
        assert f"<code>{edge.replace('>', '&gt;')}</code>" in item
    assert _marked_edges(html) == 2  # the submitted picture, those two edges marked


def test_a_model_verdict_from_the_diagram_is_shown_as_the_diagrams_edge(submitted):
    attempt, submission, client = submitted
    point = _path_point(attempt)
    Grade.objects.create(
        submission=submission,
        grader="llm",
        model="test-model",
        score=1.0,
        points=[
            {
                "id": point.id,
                "verdict": "hit",
                "evidence": "; ".join(EDGES),
                "comment": "",
                "evidence_source": "diagram",
                "diagram_evidence": EDGES,
            }
        ],
    )
    Submission.objects.filter(pk=submission.pk).update(grade_status="done")
    flow.attempt_touch(attempt.pk)
    html = client.get(f"/attempts/{attempt.pk}/steps/architecture/").content.decode()
    assert "From your diagram: <code>API gateway -&gt; Router: prefix-aware</code>" in html
    assert _marked_edges(html) == 2


def test_the_reference_diagram_is_laid_out_beside_the_reference_answer(submitted):
    attempt, _, client = submitted
    html = client.get(f"/attempts/{attempt.pk}/steps/architecture/").content.decode()
    reference = html.split('<details class="reference"', 1)[1].split("</details>\n", 1)[0]
    assert "The reference diagram" in reference and "<svg" in reference


def test_the_scorecard_and_history_show_the_diagram(submitted):
    attempt, _, client = submitted
    scorecard = client.get(f"/attempts/{attempt.pk}/scorecard/").content.decode()
    assert "Your diagram: Architecture" in scorecard
    assert ">Router: prefix-aware</text>" in scorecard
    assert _marked_edges(scorecard) == 2
    history = client.get("/history/").content.decode()
    assert "Your diagrams" in history and ">vLLM replicas x10</text>" in history


def test_the_palette_inserts_placeholders_not_design_choices():
    # Inserted as it stands, a line must not make a choice the answer beside it may contradict
    # (it said "Router: least-loaded" and "vLLM replicas x4" beside prefix-aware and 7).
    from practice.diagram import PALETTE

    lines = " ".join(line for _name, line in PALETTE)
    for choice in ("least-loaded", "prefix-aware", "round-robin", "queue depth"):
        assert choice not in lines
    assert not re.search(r"x\d", lines)
    assert "router[Router: policy]" in lines and "vllm[vLLM replicas xN]" in lines
