"""Finishing an attempt and the words beside scores say what happened:

- Finish names the steps left unsubmitted and asks first (a form, so without JavaScript too),
  and finishes nothing with no step submitted; a finished attempt stays open to more work and
  its step pages and the question page say so.
- The feedback panel's badge says "Self-checked" when the candidate's own ratings scored it.
- Home's "practise next" says a concept was missed in a scored answer, not a graded one.
- History's trends say when they span questions, and a step scored once is a point."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from drills import selectors as drill_selectors
from drills import services as drill_services
from practice.models import Attempt, Grade, StepAnswer, Submission
from questionbank import STEP_KEYS
from questions.models import Question
from tests.drills.factories import graded_submission, revision_of
from tests.practice.self_check_helpers import all_rated, form, offline_submission, post_ratings

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def with_steps(user: User, steps: list[str]) -> Attempt:
    """An attempt at chat-api-50qps with a model-graded submission of each of `steps`."""
    attempt = Attempt.objects.create(user=user, revision=revision_of())
    for step in steps:
        graded_submission(user=user, at=NOW, step=step, grades={"llm": 0.5}, attempt=attempt)
    return attempt


def finish(client: Client, attempt: Attempt, **data):
    return client.post(reverse("attempt_finish", args=[attempt.pk]), data)


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


# --- Finish -------------------------------------------------------------------------------


def test_finish_with_steps_unsubmitted_asks_first_and_names_them(candidate):
    attempt = with_steps(candidate, ["clarify", "estimate", "architecture"])
    client = signed_in(candidate)
    asked = finish(client, attempt)
    assert asked.status_code == 200
    attempt.refresh_from_db()
    assert attempt.finished_at is None
    page = text_of(asked.content.decode())
    assert "Finish with 2 steps not submitted?" in page
    assert "Bottlenecks and failure modes" in page and "Trade-offs and follow-ups" in page
    assert "Architecture" not in page.split("not submitted?")[1].split("You can still")[0]
    # The confirmation is a plain form: it posts confirm=yes to the same address.
    assert 'name="confirm" value="yes"' in asked.content.decode()
    done = finish(client, attempt, confirm="yes")
    assert done.status_code == 302 and done.url == reverse("attempt_scorecard", args=[attempt.pk])
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.FINISHED


def test_finish_with_every_step_submitted_asks_nothing(candidate):
    attempt = with_steps(candidate, list(STEP_KEYS))
    done = finish(signed_in(candidate), attempt)
    assert done.status_code == 302
    attempt.refresh_from_db()
    assert attempt.finished_at is not None


def test_finish_with_nothing_submitted_finishes_nothing(candidate):
    attempt = with_steps(candidate, [])
    client = signed_in(candidate)
    for data in ({}, {"confirm": "yes"}):
        page = finish(client, attempt, **data)
        assert page.status_code == 200
        assert "Nothing to finish yet" in page.content.decode()
        assert 'name="confirm"' not in page.content.decode()
    attempt.refresh_from_db()
    assert attempt.finished_at is None and attempt.status == Attempt.Status.ACTIVE


def test_a_finished_attempt_says_so_on_its_steps_and_on_the_question_page(candidate):
    attempt = with_steps(candidate, ["clarify", "estimate"])
    client = signed_in(candidate)
    step = reverse("attempt_step", kwargs={"attempt_id": attempt.pk, "step": "tradeoffs"})
    before = client.get(step).content.decode()
    assert "You finished this attempt" not in before
    assert reverse("attempt_finish", args=[attempt.pk]) in before
    finish(client, attempt, confirm="yes")
    attempt.refresh_from_db()
    after = client.get(step).content.decode()
    stamp = attempt.finished_at.strftime("%b %-d, %H:%M")
    assert (
        f"You finished this attempt on {stamp} UTC; what you submit now updates its scorecard"
        in text_of(after)
    )
    # The last step's pager no longer offers Finish: the scorecard is a link away.
    assert reverse("attempt_finish", args=[attempt.pk]) not in after
    assert "See the scorecard" in after
    question = client.get(reverse("question", args=["chat-api-50qps"])).content.decode()
    assert "2 of 5 steps submitted · finished (scorecard)" in text_of(question)
    resume = reverse("attempt", args=[attempt.pk])
    assert f'<a href="{resume}">(continue it)</a>' in question


# --- the feedback badge -----------------------------------------------------------------


def badge(html: str) -> str:
    match = re.search(r'<span id="grade-status"[^>]*>(.*?)</span>', html, re.S)
    return " ".join(match.group(1).split()) if match else ""


def test_a_self_checked_score_is_badged_self_checked_not_graded(candidate):
    client = signed_in(candidate)
    submission = offline_submission(candidate)
    done = post_ratings(client, submission, form(all_rated("partly"), 0), HTTP_HX_REQUEST="true")
    assert badge(done.content.decode()) == "Self-checked"
    step = f"/attempts/{submission.answer.attempt_id}/steps/architecture/"
    assert badge(client.get(step).content.decode()) == "Self-checked"
    # A model's grade is still "Graded".
    Grade.objects.create(submission=submission, grader="llm", score=0.8, points=[])
    Submission.objects.filter(pk=submission.pk).update(grade_status="done")
    StepAnswer.objects.filter(pk=submission.answer_id).update(row_version=99)
    Attempt.objects.filter(pk=submission.answer.attempt_id).update(state_version=99)
    assert badge(client.get(step).content.decode()) == "Graded"


# --- home's practise next -----------------------------------------------------------------


def test_practise_next_says_a_scored_answer_not_a_graded_one(content_loaded, monkeypatch):
    from fsrs import Rating

    from drills.models import Card

    user = User.objects.create_user("reader", password="a-long-Passphrase-42")
    concept = revision_of().question_spec.step("architecture").concepts[0]
    drill_services.card_review(user=user, key=f"concept:{concept}", source=Card.Source.CONCEPT,
                               rating=Rating.Again, now=NOW)  # fmt: skip
    rec = drill_selectors.recommendation(user=user, now=NOW + timedelta(minutes=5))
    assert rec.action == "Read the note"
    assert "you missed it in a scored answer" in rec.sentence
    assert "graded" not in rec.sentence


# --- History's trends ---------------------------------------------------------------------


def trends(html: str) -> str:
    return html.split('id="trends-h"')[1].split("</section>")[0]


def test_the_trends_say_they_span_questions(candidate):
    other = Question.objects.exclude(slug="chat-api-50qps").order_by("slug").first()
    graded_submission(user=candidate, at=NOW, grades={"llm": 0.4})
    graded_submission(user=candidate, at=NOW, grades={"llm": 0.9}, slug=other.slug)
    page = text_of(trends(signed_in(candidate).get(reverse("history")).content.decode()))
    assert "Over your last 2 attempts, across 2 different questions" in page


def test_a_step_scored_once_is_a_point_with_its_figure_not_a_line(candidate):
    graded_submission(user=candidate, at=NOW, grades={"llm": 0.62})
    graded_submission(user=candidate, at=NOW, step="clarify", grades={"llm": 0.5})
    graded_submission(user=candidate, at=NOW, step="clarify", grades={"llm": 0.7})
    html = trends(signed_in(candidate).get(reverse("history")).content.decode())
    cards = dict(
        re.findall(r'<h3 class="h3">([^<]*)</h3>(.*?)</li>', html, re.S),
    )
    once = cards["Architecture"]
    assert "<polyline" not in once and "<circle" in once
    assert re.search(r"<text[^>]*>62% · one attempt</text>", once)
    assert "3 attempts, all at one question" in text_of(html)
    assert "<polyline" in cards["Clarify the requirements"]
