"""Misconceptions on the pages: stored on the grade, first in the feedback with the offline
grade's honest label, on the scorecard, and in the history once held in two attempts."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import services as flow
from practice.feedback import feedback_context
from practice.models import Attempt, Grade, StepAnswer, Submission
from questions.models import Question

WRONG = "The autoscaler adds a replica whenever average GPU utilization goes above 80 percent."
ANSWER = "Clients reach an API gateway that terminates TLS and applies rate limits. " + WRONG


@pytest.fixture
def candidate(client, content_loaded):
    user = User.objects.create_user("cand", password="cand-Passphrase-1")
    client.force_login(user)
    return user


def graded_attempt(user, text: str = ANSWER) -> tuple[Attempt, Submission]:
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    outcome = flow.step_submit(answer=answer, text=text, fields={}, base_version=answer.version)
    flow.submission_grade(submission_id=outcome.submission.pk)
    return attempt, Submission.objects.get(pk=outcome.submission.pk)


def test_the_offline_grade_stores_the_wrong_idea_with_the_candidates_sentence(candidate):
    _, submission = graded_attempt(candidate)
    grade = Grade.objects.get(submission=submission, grader="rubric")
    assert [m["id"] for m in grade.misconceptions] == ["a1-autoscale-gpu-util"]
    assert grade.misconceptions[0]["evidence"] in WRONG


def test_the_feedback_names_explains_and_labels_the_offline_grade(candidate, client):
    attempt, submission = graded_attempt(candidate)
    answer = StepAnswer.objects.get(attempt=attempt, step_key="architecture")
    context = feedback_context(attempt=attempt, answer=answer, submission=submission)
    (shown,) = context["misconceptions"]
    assert shown["idea"] == "GPU utilisation is the signal to autoscale on."
    assert "<code>vllm:num_requests_waiting</code>" in shown["explanation_html"]
    assert [c.slug for c in shown["concepts"]] == ["autoscaling-queue-depth", "concurrency-knee"]
    assert '<mark class="mark-wrong">' in context["highlighted"]
    page = client.get(
        reverse("attempt_step", kwargs={"attempt_id": attempt.pk, "step": "architecture"})
    ).content.decode()
    assert page.index('class="wrong-ideas"') < page.index('class="rubric-points"')
    assert "This offline grade matches wording" in page


def test_a_model_grade_shows_its_own_flags_and_no_offline_label(candidate, client):
    attempt, submission = graded_attempt(candidate, "A router and ten replicas behind a gateway.")
    Grade.objects.create(
        submission=submission,
        grader="llm",
        model="m",
        score=0.1,
        points=[],
        misconceptions=[{"id": "a1-round-robin", "evidence": "ten replicas", "comment": ""}],
    )
    page = client.get(
        reverse("attempt_step", kwargs={"attempt_id": attempt.pk, "step": "architecture"})
    ).content.decode()
    assert "Round robin in front of the replicas is good enough routing." in page
    assert "This offline grade matches wording" not in page


def test_the_scorecard_lists_the_attempts_wrong_ideas(candidate, client):
    attempt, _ = graded_attempt(candidate)
    page = client.get(reverse("attempt_scorecard", kwargs={"attempt_id": attempt.pk}))
    assert [m["id"] for m in page.context["misconceptions"]] == ["a1-autoscale-gpu-util"]
    html = page.content.decode()
    assert "Wrong ideas in your answers" in html
    assert "The offline rubric grader matches wording" in html


def test_history_shows_a_wrong_idea_held_in_two_attempts_and_not_one_held_once(candidate, client):
    graded_attempt(candidate)
    graded_attempt(candidate, "We use plain round robin, which is all the routing we need.")
    assert client.get(reverse("history")).context["held_misconceptions"] == []
    graded_attempt(candidate)
    held = client.get(reverse("history")).context["held_misconceptions"]
    assert [(m["id"], m["attempts"]) for m in held] == [("a1-autoscale-gpu-util", 2)]
    assert "Wrong ideas you keep coming back to" in client.get(reverse("history")).content.decode()
