"""A candidate's problem report: its length counted as the form counts it, and a refused one
kept whole on the page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from authoring import services
from authoring.models import ProblemReport
from practice import services as flow
from questions.models import Question

CHAT = "chat-api-50qps"


def _report_url(candidate) -> str:
    revision = Question.objects.get(slug=CHAT).current_revision
    attempt = flow.attempt_start(user=candidate, revision=revision)
    return reverse("problem_report", args=[attempt.pk, "clarify"])


@pytest.mark.django_db
def test_a_report_the_form_allowed_is_not_refused_for_its_line_breaks(
    content_loaded, candidate, candidate_client
):
    # 3,999 characters as the browser's maxlength counts them (a line break is one), but a
    # form sends each line break as CRLF: 4,078 characters on the wire.
    lines = ["x" * 49] * 80
    typed = "\n".join(lines)
    assert len(typed) <= services.REPORT_MESSAGE_MAX < len("\r\n".join(lines))
    response = candidate_client.post(_report_url(candidate), {"message": "\r\n".join(lines)})
    assert response.status_code == 302
    assert ProblemReport.objects.get().message == typed


@pytest.mark.django_db
def test_a_report_too_long_is_refused_and_kept_whole(content_loaded, candidate, candidate_client):
    typed = "The prompt is unclear. " * 200 + "THE END"  # 4,607 characters
    response = candidate_client.post(_report_url(candidate), {"message": typed})
    assert response.status_code == 422
    body = response.content.decode()
    assert f"Keep the report under {services.REPORT_MESSAGE_MAX} characters" in body
    assert "THE END</textarea>" in body  # nothing typed is cut off
    assert not ProblemReport.objects.exists()


@pytest.mark.django_db
def test_the_editor_names_a_reported_step_as_the_candidate_saw_it(
    content_loaded, instructor_client
):
    revision = Question.objects.get(slug=CHAT).current_revision
    ProblemReport.objects.create(
        question=revision.question,
        revision=revision,
        step_key="estimate",
        message="The KV cache figure is off.",
    )
    editor = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    listing = editor.split('class="plain-list report-list"')[1].split("</ul>")[0]
    assert f"<strong>Napkin math</strong>, revision {revision.number}," in listing
    assert "estimate" not in listing  # the internal key, which candidates never see
    assert "on Napkin math (" in listing  # the Close button's name for a screen reader
