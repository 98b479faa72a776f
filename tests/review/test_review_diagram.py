"""The instructor reviews what was graded: the submission's diagram, laid out beside the prose
(its Mermaid text collapsed below), on the blind labelling page, the page a dispute or the
queue leads to, and a grade's audit; once labelled, what the model and the matcher found in
the diagram is listed per point and marked in the picture. A label written as markup is
drawn as text."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from practice import services as flow
from practice.models import Grade, Submission
from questions.models import Question

from .conftest import SLUG, make_submission

HOSTILE = "<img src=x onerror=alert(1)>"
DIAGRAM = f"""flowchart LR
    gw[API gateway] --> router[Router: prefix-aware]
    router --> vllm[vLLM replicas x10]
    evil["{HOSTILE}"] -.-> gw
"""
EDGES = ["API gateway -> Router: prefix-aware", "Router: prefix-aware -> vLLM replicas x10"]
LABELS = ["API gateway", "Router: prefix-aware", "vLLM replicas x10"]


@pytest.fixture
def submitted(content_loaded, candidate):
    """An architecture answer with a diagram, submitted and graded offline (the matcher found
    the gateway -> router -> replicas path in the diagram), then by a model citing it."""
    revision = Question.objects.get(slug=SLUG).current_revision
    attempt = flow.attempt_start(user=candidate, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    outcome = flow.step_submit(
        answer=answer, text="A gateway in front.", fields={"diagram": DIAGRAM}, base_version=0
    )
    flow.submission_grade(submission_id=outcome.submission.pk)
    point = next(
        p
        for p in revision.question_spec.step("architecture").rubric
        if p.diagram is not None and len(p.diagram.path) >= 3
    )
    llm = Grade.objects.create(
        submission=outcome.submission,
        grader="llm",
        model="test-model",
        score=1.0,
        points=[
            {
                "id": point.id,
                "verdict": "hit",
                "evidence": "; ".join(EDGES),
                "quote": "; ".join(EDGES),
                "quote_found": True,
                "comment": "",
                "evidence_source": "diagram",
                "diagram_evidence": EDGES,
            }
        ],
    )
    Submission.objects.filter(pk=outcome.submission.pk).update(grade_status="done")
    return Submission.objects.get(pk=outcome.submission.pk), point, llm


def _marked_edges(html: str) -> int:
    return len(re.findall(r'<g class="edge is-evidence" data-edge="\d+">', html))


def _assert_diagram_shown(html: str) -> None:
    """The picture with the candidate's labels as SVG text, the markup label escaped, and
    the Mermaid text collapsed under the picture."""
    assert "<svg" in html
    for label in LABELS:
        assert f">{label}</text>" in html
    assert "&lt;img src=x onerror=alert(1)&gt;</text>" in html
    assert "<img" not in html and "onerror=alert(1)>" not in html
    source = html.split('<details class="diagram-source">', 1)[1].split("</details>", 1)[0]
    assert "gw[API gateway] --&gt; router[Router: prefix-aware]" in source
    assert "&lt;img src=x onerror=alert(1)&gt;" in source


def test_the_blind_review_shows_the_diagram_without_the_graders_marks(
    submitted, client, instructor
):
    submission, point, _ = submitted
    client.force_login(instructor)
    html = client.get(reverse("review:submission", args=[submission.pk])).content.decode()
    answer = html.split('id="answer-h"', 1)[1].split("</section>", 1)[0]
    assert "A gateway in front." in answer  # the prose, and the picture beside it
    _assert_diagram_shown(answer)
    # Blind: nothing says what a grader found, in the table or in the picture.
    assert "is-evidence" not in html and "From the diagram" not in html


def test_once_labelled_the_diagram_evidence_of_each_grader_is_shown_and_marked(
    submitted, client, instructor
):
    submission, point, llm = submitted
    client.force_login(instructor)
    spec = submission.answer.attempt.revision.question_spec.step("architecture")
    labels = {f"point-{p.id}": "hit" for p in spec.rubric}
    url = reverse("review:submission", args=[submission.pk])
    assert client.post(url, labels).status_code == 302
    html = client.get(url).content.decode()
    _assert_diagram_shown(html)
    row = html.split("<tbody", 1)[1].split(f'<th scope="row" role="rowheader">{point.says}', 1)[1]
    row = row.split("</tr>", 1)[0]
    # The model's cell and the matcher's both name the edges they found in the diagram.
    assert row.count("From the diagram: <code>API gateway -&gt; Router: prefix-aware</code>") == 2
    assert _marked_edges(html) == 2

    audit = client.get(reverse("review:grade", args=[llm.pk])).content.decode()
    _assert_diagram_shown(audit)
    assert "From the diagram: <code>API gateway -&gt; Router: prefix-aware</code>" in audit
    assert _marked_edges(audit) == 2


def test_a_disputed_answer_reaches_the_instructor_with_its_diagram(
    submitted, candidate, client, instructor
):
    submission, _, _ = submitted
    owner = Client()
    owner.force_login(candidate)
    owner.post(
        reverse("review:dispute", args=[submission.pk]),
        {"reason": "My diagram has the router between the gateway and the replicas."},
    )
    client.force_login(instructor)
    queue = client.get(reverse("review:queue", args=[SLUG])).content.decode()
    detail = reverse("review:submission", args=[submission.pk])
    assert detail in queue  # the queue leads to the review page...
    html = client.get(detail).content.decode()
    assert "The candidate disputed this grade" in html
    _assert_diagram_shown(html)  # ...which shows the diagram that was graded


def test_an_answer_without_a_diagram_shows_no_figure(content_loaded, candidate, client, instructor):
    submission = make_submission(user=candidate, text="Prose only.")
    client.force_login(instructor)
    html = client.get(reverse("review:submission", args=[submission.pk])).content.decode()
    assert "Prose only." in html and "diagram-figure" not in html


def test_the_review_pages_name_the_revision_answered_not_the_current_one(
    content_loaded, candidate, client, instructor
):
    submission = make_submission(user=candidate, text="Prose only.")
    answered = submission.answer.attempt.revision
    newer = Question.objects.get(pk=answered.question_id).revisions.get(pk=answered.pk)
    newer.pk, newer.number, newer.title = None, answered.number + 1, "A retitled question"
    newer.save()
    Question.objects.filter(pk=answered.question_id).update(current_revision=newer)
    client.force_login(instructor)
    html = client.get(reverse("review:submission", args=[submission.pk])).content.decode()
    assert f"{answered.title} (revision {answered.number})" in html
    assert "A retitled question" not in html
