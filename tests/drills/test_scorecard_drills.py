"""The scorecard offers a set of drills for each concept it sends the candidate to review:
the figures behind what was missed, practised where the practice plan keeps them."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from drills import engine
from practice.models import Attempt, Grade, StepAnswer, Submission
from questionbank import STEP_KEYS, load_question_spec
from questions.models import Question

pytestmark = pytest.mark.django_db

SLUG = "chat-api-50qps"


def _scorecard(user, attempt) -> str:
    client = Client()
    client.force_login(user)
    client.post(reverse("attempt_finish", args=[attempt.pk]))
    return client.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()


def test_the_scorecard_offers_drills_for_the_concepts_it_sends_to_review(content_loaded):
    # Every step model-graded with every rubric point missed: the page sends the candidate
    # to review each missed point's concepts, and offers the drills of those concepts.
    user = User.objects.create_user("misser", password="a-long-Passphrase-42")
    attempt = Attempt.objects.create(
        user=user, revision=Question.objects.get(slug=SLUG).current_revision
    )
    spec = load_question_spec(SLUG)
    for key in STEP_KEYS:
        answer = StepAnswer.objects.create(attempt=attempt, step_key=key, text="x", version=1)
        submission = Submission.objects.create(
            answer=answer, number=1, text="x", draft_version=1, grade_status="done"
        )
        points = [{"id": p.id, "verdict": "miss", "evidence": ""} for p in spec.step(key).rubric]
        Grade.objects.create(submission=submission, grader="llm", score=0.0, points=points)
    page = _scorecard(user, attempt)
    review = page[page.index('id="review-h"') :]
    slugs = re.findall(r'href="/concepts/([^/"]+)/"', review)
    expected = [k.key for k in engine.KINDS.values() if k.available and k.concept in slugs]
    assert expected, slugs  # some missed concept has a drill
    drills = page[page.index('id="drill-next-h"') : page.index('id="review-h"')]
    assert sorted(re.findall(r'name="kind" value="([^"]+)"', drills)) == sorted(expected)
    assert 'action="/drills/sets/"' in drills
    # Named for what they are: the concepts sent to review, not the numbers got wrong.
    assert "Drills for the concepts to review</h2>" in drills


def test_a_scorecard_with_nothing_to_review_offers_no_drills(content_loaded):
    user = User.objects.create_user("blank", password="a-long-Passphrase-42")
    attempt = Attempt.objects.create(
        user=user, revision=Question.objects.get(slug=SLUG).current_revision
    )
    page = _scorecard(user, attempt)
    assert 'id="review-h"' not in page and 'id="drill-next-h"' not in page
