"""The instructor's list pages cost the same number of queries for 3 submissions as for 30:
no query per row (a cohort grows; the page must not slow with it)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.calibration import LabelledAnswer
from practice.models import Attempt
from questions.models import Question
from review.calibration_sets import labels_import

from .conftest import make_submission

SLUG = "chat-api-50qps"
PAGES = [
    ("review:index", []),
    ("review:queue", [SLUG]),
    ("review:calibration_step", [SLUG, "architecture"]),
    ("review:items", [SLUG]),
    ("authoring:index", []),
]


def _cohort(start: int, count: int) -> None:
    """`count` candidates, each with a flagged, two-grader architecture submission, a
    disputed-free estimate one, and a labelled answer."""
    question = Question.objects.get(slug=SLUG)
    for i in range(start, start + count):
        user = User.objects.create_user(f"c{i}")
        verdicts = {"arch-gateway": "hit" if i % 2 else "miss"}
        make_submission(
            user=user,
            text=f"Answer {i}: an API gateway.",
            grades={"llm": (0.9, verdicts), "rubric": (0.2, verdicts)},
            review_reason="disagree",
        )
        labels_import(
            question=question,
            entries=[
                LabelledAnswer(
                    SLUG, "architecture", f"Gateway answer {i}.", {"arch-gateway": "hit"}
                )
            ],
        )


def _queries(client, name, args) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse(name, args=args))
    assert response.status_code == 200, name
    return len(queries)


@pytest.mark.parametrize("name,args", PAGES)
def test_a_page_costs_the_same_queries_for_ten_times_the_rows(
    content_loaded, client, instructor, name, args
):
    client.force_login(instructor)
    _cohort(0, 3)
    few = _queries(client, name, args)
    _cohort(3, 27)
    many = _queries(client, name, args)
    assert many <= few, f"{name}: {few} queries for 3 candidates, {many} for 30"


def test_the_review_index_costs_the_same_queries_however_many_questions_wait(
    bank_loaded, client, instructor
):
    """The index counts what waits under each question: one count for the whole bank, not a
    queue built (and its disputes fetched) per question."""
    client.force_login(instructor)
    questions = list(Question.objects.exclude(current_revision=None).order_by("slug"))

    def flag(question: Question, i: int) -> None:
        user = User.objects.create_user(f"w{i}")
        attempt = Attempt.objects.create(user=user, revision=question.current_revision)
        make_submission(user=user, attempt=attempt, grades={}, review_reason="disagree")

    flag(questions[0], 0)
    one = _queries(client, "review:index", [])
    for i, question in enumerate(questions[1:8], start=1):
        flag(question, i)
    eight = _queries(client, "review:index", [])
    assert eight <= one, f"{one} queries with 1 question waiting, {eight} with 8"
    html = client.get(reverse("review:index")).content.decode()
    assert html.count("1 in the queue") == 8
