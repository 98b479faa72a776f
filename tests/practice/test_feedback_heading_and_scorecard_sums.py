"""The feedback panel's heading reads naturally for a step's only submission and names which of
several it is; the scorecard's napkin line shows "answer = value" only when the answer is
working, not the figure itself ("10 = 10")."""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

import re

import pytest
from django.urls import reverse

from practice.models import StepAnswer, Submission
from practice.scorecard import shows_working
from practice.services import submission_grade
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    ARCHITECTURE_ANSWER,
    attempt,
    candidate,
    client_in,
    napkin_on_the_scorecard,
    step_url,
)


def heading(page: str) -> str:
    (text,) = re.findall(r'<h2 id="feedback-heading" class="h3">([^<]*)</h2>', page)
    return text


def submit(client_in, attempt, text: str, capture) -> str:
    version = StepAnswer.objects.filter(step_key="architecture").values_list("version", flat=True)
    with capture(execute=False):
        response = client_in.post(
            step_url(attempt, "architecture", "submit"),
            {"base_version": version.first() or 0, "text": text},
            htmx=True,
        )
    assert response.status_code == 200
    return response.content.decode()


def test_the_only_submission_is_headed_feedback(
    client_in, attempt, django_capture_on_commit_callbacks
):
    answer = submit(client_in, attempt, ARCHITECTURE_ANSWER, django_capture_on_commit_callbacks)
    assert heading(answer) == "Feedback"  # queued: the panel the Submit answers with
    submission_grade(submission_id=Submission.objects.get().pk)
    page = client_in.get(step_url(attempt, "architecture")).content.decode()
    assert heading(page) == "Feedback"
    assert "submission 1" not in page


def test_a_later_submission_says_which_of_how_many(
    client_in, attempt, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    submit(client_in, attempt, ARCHITECTURE_ANSWER, capture)
    answer = submit(client_in, attempt, ARCHITECTURE_ANSWER + " Also pre-warm replicas.", capture)
    assert heading(answer) == "Feedback on submission 2 of 2"
    for s in Submission.objects.all():
        submission_grade(submission_id=s.pk)
    page = client_in.get(step_url(attempt, "architecture")).content.decode()
    assert heading(page) == "Feedback on submission 2 of 2"
    # An earlier one, as its own panel is fetched, says so too.
    first = Submission.objects.get(number=1)
    panel = client_in.get(
        reverse("submission_feedback", args=[attempt.pk, first.pk]), htmx=True
    ).content.decode()
    assert heading(panel) == "Feedback on submission 1 of 2"


@pytest.mark.parametrize(
    ("answer", "value", "shown"),
    [
        ("10", "10", False),
        ("9.5", "9.5", False),
        ("9.50", "9.5", False),
        ("9.5 GB", "9.5 GB", False),
        ("1,000", "1000", False),
        ("n_gpu", "10", True),
        ("ceil(qps_peak / r_inst)", "10", True),
        ("2 * 5", "10", True),
        ("9500 MB", "9.5 GB", True),
        ("8k", "8000", True),
        ("9.5", "9.5 GB", True),
        ("9.5", "", False),
    ],
)
def test_the_working_shows_only_when_it_adds_something(answer, value, shown):
    assert shows_working({"answer": answer, "value": value}) is shown


def test_the_scorecard_has_no_figure_equal_to_itself(
    client_in, attempt, django_capture_on_commit_callbacks
):
    boxes = {"expr_n_gpu": "10", "expr_max_seqs": "2 * 6"}
    napkin = napkin_on_the_scorecard(client_in, attempt, boxes, django_capture_on_commit_callbacks)
    assert "<code>10</code></li>" in napkin
    assert '<code>10</code> = <span class="napkin-value">' not in napkin
    assert '<code>2 * 6</code> = <span class="napkin-value">12</span>' in napkin
