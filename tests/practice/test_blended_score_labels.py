"""A clarify answer no model graded, self-checked: its score blends the candidate's ratings
with the SLO card's check (practice.scoring.submission_score), yet the self-check status said
"Self-checked: 61%", the feedback card "61% Self-checked — from your own ratings of each
point" and the scorecard "61% Self-checked", while the ratings alone made 56%. Each label says
what the figure is made of. And History showed "Overall 61%" for an attempt with one step of
five scored, where the scorecard says "across the 1 scored step": it says so too."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from practice.models import Attempt, Grade, StepAnswer, Submission
from practice.scoring import submission_score
from questionbank import load_question_spec
from questions.models import Question

pytestmark = pytest.mark.django_db

SLUG = "chat-api-50qps"
CLARIFY = load_question_spec(SLUG).step("clarify")
SLO_SCORE = 0.67


def _text(response) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


@pytest.fixture
def self_checked_clarify(content_loaded):
    """(client, attempt, submission, ratings' score): a clarify submission read by the keyword
    matcher and the SLO card's check, then rated by its candidate through the page's form."""
    user = User.objects.create_user("blender", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug=SLUG).current_revision
    attempt = Attempt.objects.create(user=user, revision=revision)
    answer = StepAnswer.objects.create(attempt=attempt, step_key="clarify", text="x", version=1)
    submission = Submission.objects.create(
        answer=answer, number=1, text="x", draft_version=1, grade_status="done"
    )
    points = [
        {"id": p.id, "verdict": "miss", "evidence": "", "comment": ""} for p in CLARIFY.rubric
    ]
    Grade.objects.create(submission=submission, grader="rubric", score=0.1, points=points)
    Grade.objects.create(submission=submission, grader="slo", score=SLO_SCORE, points=[])
    client = Client()
    client.force_login(user)
    ratings = {p.id: "covered" if i % 2 else "partly" for i, p in enumerate(CLARIFY.rubric)}
    url = reverse(
        "submission_self_check", kwargs={"attempt_id": attempt.pk, "submission_id": submission.pk}
    )
    data = {"base_version": "0", **{f"rating-{p}": r for p, r in ratings.items()}}
    saved = client.post(url, data, HTTP_HX_REQUEST="true")
    assert saved.status_code == 200
    own = Grade.objects.get(submission=submission, grader="self").score
    assert submission_score("clarify", submission.grades.all()) != round(own, 3)
    return client, attempt, submission, own, saved


def _pct(score: float) -> str:
    return f"{round(score * 100)}%"


def test_the_self_check_and_the_feedback_say_the_score_blends_the_slo_card(
    self_checked_clarify,
):
    client, attempt, submission, own, saved = self_checked_clarify
    blended = _pct(submission_score("clarify", submission.grades.all()))
    makeup = (
        f"your ratings of each point ({_pct(own)}) and the SLO card's check "
        f"({_pct(SLO_SCORE)}), half each"
    )
    status = _text(saved)
    assert f"Score: {blended} — {makeup}." in status
    assert f"Self-checked: {blended}" not in status

    page = _text(client.get(f"/attempts/{attempt.pk}/steps/clarify/"))
    assert f"Score: {blended} — {makeup}." in page
    assert f"{blended} Self-checked " + makeup[0].upper() + makeup[1:] in page
    assert "from your own ratings of each point" not in page

    card = _text(client.get(reverse("attempt_scorecard", args=[attempt.pk])))
    assert f"{blended} Self-checked + SLO card check" in card


def test_history_says_how_many_steps_the_overall_covers(self_checked_clarify):
    client, attempt, submission, _own, _saved = self_checked_clarify
    blended = _pct(submission_score("clarify", submission.grades.all()))
    history = _text(client.get("/history/"))
    assert f"{blended} across 1 of 5 steps" in history
