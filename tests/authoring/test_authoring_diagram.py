"""Diagrams in the instructor's editor: the preview lays out each step's reference diagram, a
reference diagram with a syntax error is in the problem list at its file line, and "add a
test from this answer" writes the candidate's diagram into the test with the answer."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from authoring import services
from authoring.models import Draft, ProblemReport
from diagrams import parse_diagram
from practice import services as flow
from questionbank.files import parse_file
from questions.models import Question
from tests.authoring.conftest import problem_report

CHAT = "chat-api-50qps"
HOSTILE = "<img src=x onerror=alert(1)>"
DIAGRAM = f"""flowchart LR
    gw[API gateway] --> router[Router: prefix-aware]
    router --> vllm[vLLM replicas x10]
    evil["{HOSTILE}"] -.-> gw
"""
REFERENCE_FIRST_EDGE = (
    "        client([Clients]) --> gateway[API gateway: TLS, API keys, rate limits]"
)


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _preview(client, text: str) -> str:
    return client.post(
        reverse("authoring:question_preview", args=[CHAT]), {"text": text}
    ).content.decode()


def _published_text() -> str:
    return Question.objects.get(slug=CHAT).current_revision.source_text


@pytest.mark.django_db
def test_the_editor_preview_lays_out_the_reference_diagram(content_loaded, instructor_client):
    revision = Question.objects.get(slug=CHAT).current_revision
    reference = revision.question_spec.step("architecture").reference_diagram
    labels = [node.label for node in parse_diagram(reference).nodes]
    assert len(labels) >= 5
    for html in (
        instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode(),
        _preview(instructor_client, _published_text()),
    ):
        assert "The reference diagram" in html and "<svg" in html
        for label in labels:
            assert f">{_escaped(label)}</text>" in html


@pytest.mark.django_db
def test_a_reference_diagram_label_written_as_markup_is_drawn_as_text(
    content_loaded, instructor_client
):
    text = _published_text()
    assert REFERENCE_FIRST_EDGE in text
    hostile = text.replace(
        REFERENCE_FIRST_EDGE, f'{REFERENCE_FIRST_EDGE}\n        evil["{HOSTILE}"] -.-> gateway', 1
    )
    html = _preview(instructor_client, hostile)
    assert '<ul class="problem-list">' not in html and "<svg" in html  # it validates
    assert "&lt;img src=x onerror=alert(1)&gt;</text>" in html
    assert "<img" not in html and "onerror=alert(1)>" not in html


@pytest.mark.django_db
def test_a_reference_diagram_syntax_error_is_a_problem_at_its_line(
    content_loaded, instructor_client
):
    lines = _published_text().split("\n")
    at = lines.index(REFERENCE_FIRST_EDGE)
    lines[at] = "        client([Clients]) --> gateway[API gateway"  # an unclosed label
    html = _preview(instructor_client, "\n".join(lines))
    assert "problem" in html and "<svg" not in html
    problems = re.findall(r'data-line="(\d+)">Line \d+</a>: ([^<]*)', html)
    assert (str(at + 1), "reference_diagram") in [(n, m.split(":", 1)[0]) for n, m in problems]


@pytest.mark.django_db
def test_a_shared_diagram_goes_into_the_test_added_from_the_answer(
    content_loaded, candidate, candidate_client, instructor_client
):
    revision = Question.objects.get(slug=CHAT).current_revision
    attempt = flow.attempt_start(user=candidate, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    prose = "Ten vLLM replicas on 4090s serve the chats."
    flow.draft_save(answer=answer, text=prose, fields={"diagram": DIAGRAM}, base_version=0)
    candidate_client.post(
        reverse("problem_report", args=[attempt.pk, "architecture"]),
        {"message": "My diagram was right.", "share_answer": "on"},
    )
    report = ProblemReport.objects.get()
    assert (report.answer_text, report.answer_diagram) == (prose, DIAGRAM)

    url = reverse("authoring:report_add_test", args=[report.pk])
    form = instructor_client.get(url).content.decode()
    for label in ("API gateway", "Router: prefix-aware", "vLLM replicas x10"):
        assert f">{label}</text>" in form
    assert "&lt;img src=x onerror=alert(1)&gt;</text>" in form
    assert "<img" not in form and "onerror=alert(1)>" not in form
    points = re.findall(r'name="verdict-([a-z0-9-]+)" value="hit"', form)
    assert 'name="verdict-arch-prefix-router" value="hit" checked' in form
    # The proposed verdicts read the diagram: its path earns what the prose alone does not.
    prose_only = dict(
        (pid, v)
        for pid, _says, v in services.answer_test_verdicts(
            slug=CHAT, step_key="architecture", answer=prose
        )
    )
    with_diagram = dict(
        (pid, v)
        for pid, _says, v in services.answer_test_verdicts(
            slug=CHAT, step_key="architecture", answer=prose, diagram=DIAGRAM
        )
    )
    assert (prose_only["arch-prefix-router"], with_diagram["arch-prefix-router"]) == ("miss", "hit")
    verdicts = {f"verdict-{p}": with_diagram[p] for p in points}
    assert instructor_client.post(url, verdicts).status_code == 302

    draft = Draft.objects.get(slug=CHAT)
    assert "      diagram: |\n        flowchart LR\n" in draft.text
    assert f'        evil["{HOSTILE}"] -.-> gw' in draft.text
    added = parse_file(f"{CHAT}.md", draft.text).meta["tests"]["architecture"][-1]
    assert added["name"] == f"from report {report.pk}"
    assert (added["answer"], added["diagram"]) == (prose, DIAGRAM)
    check = services.question_check(slug=CHAT, text=draft.text)
    assert check.problems == [] and services.question_tests(check).failures == ()


@pytest.mark.django_db
def test_a_report_with_only_a_diagram_can_become_a_test(content_loaded, instructor_client):
    report = problem_report(
        slug=CHAT,
        step_key="architecture",
        message="Only my diagram.",
        answer_diagram=DIAGRAM,
    )
    response = instructor_client.get(reverse("authoring:report_add_test", args=[report.pk]))
    assert (
        response.status_code == 200 and ">Router: prefix-aware</text>" in response.content.decode()
    )
