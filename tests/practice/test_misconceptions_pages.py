"""Misconceptions on the pages: stored on the grade; where no model graded, asked as a question
in the self-check ("This sentence may say X. Is that what you meant?"); once confirmed (or
found by a model), on the scorecard, and in the history once held in two attempts."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import services as flow
from practice.feedback import feedback_context
from practice.models import Attempt, Grade, StepAnswer, Submission
from practice.self_check import self_check_save
from questionbank import load_question_spec
from questions.models import Question

POINTS = [p.id for p in load_question_spec("chat-api-50qps").step("architecture").rubric]

WRONG = "The autoscaler adds a replica whenever average GPU utilization goes above 80 percent."
ANSWER = "Clients reach an API gateway that terminates TLS and applies rate limits. " + WRONG


@pytest.fixture
def candidate(client, content_loaded):
    user = User.objects.create_user("cand", password="cand-Passphrase-1")
    client.force_login(user)
    return user


def graded_attempt(
    user, text: str = ANSWER, *, confirm: bool = False
) -> tuple[Attempt, Submission]:
    """An architecture answer graded with no model; with `confirm`, self-checked with every
    flagged wrong idea confirmed."""
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    outcome = flow.step_submit(answer=answer, text=text, fields={}, base_version=answer.version)
    flow.submission_grade(submission_id=outcome.submission.pk)
    submission = Submission.objects.get(pk=outcome.submission.pk)
    if confirm:
        flagged = submission.grades.get(grader="rubric").misconceptions
        self_check_save(
            submission=submission,
            ratings=dict.fromkeys(POINTS, "covered"),
            wrong_ideas={m["id"]: "confirmed" for m in flagged},
            base_version=0,
        )
    return attempt, submission


def test_the_offline_grade_stores_the_wrong_idea_with_the_candidates_sentence(candidate):
    _, submission = graded_attempt(candidate)
    grade = Grade.objects.get(submission=submission, grader="rubric")
    assert [m["id"] for m in grade.misconceptions] == ["a1-autoscale-gpu-util"]
    assert grade.misconceptions[0]["evidence"] in WRONG


def test_the_self_check_asks_about_a_flagged_wrong_idea_and_explains_it(candidate, client):
    attempt, submission = graded_attempt(candidate)
    answer = StepAnswer.objects.get(attempt=attempt, step_key="architecture")
    context = feedback_context(attempt=attempt, answer=answer, submission=submission)
    assert context["misconceptions"] == []  # not stated as a verdict: asked
    (shown,) = context["self_check"]["wrong_ideas"]
    assert shown["idea"] == "GPU utilisation is the signal to autoscale on."
    assert "<code>vllm:num_requests_waiting</code>" in shown["explanation_html"]
    assert [c.slug for c in shown["concepts"]] == ["autoscaling-queue-depth", "concurrency-knee"]
    assert '<mark class="mark-wrong">' in context["highlighted"]
    page = client.get(
        reverse("attempt_step", kwargs={"attempt_id": attempt.pk, "step": "architecture"})
    ).content.decode()
    assert (
        "This sentence may say: GPU utilisation is the signal to autoscale on. "
        "Is that what you meant?" in page
    )
    assert page.index('id="idea-a1-autoscale-gpu-util"') < page.index('id="point-arch-gateway"')


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
    assert "Is that what you meant?" not in page  # the model's verdict, not a question


def test_the_scorecard_lists_the_wrong_ideas_the_candidate_confirmed(candidate, client):
    unconfirmed, _ = graded_attempt(candidate)
    page = client.get(reverse("attempt_scorecard", kwargs={"attempt_id": unconfirmed.pk}))
    assert page.context["misconceptions"] == []  # only flagged by the matcher
    attempt, _ = graded_attempt(candidate, confirm=True)
    page = client.get(reverse("attempt_scorecard", kwargs={"attempt_id": attempt.pk}))
    assert [m["id"] for m in page.context["misconceptions"]] == ["a1-autoscale-gpu-util"]
    assert "Wrong ideas in your answers" in page.content.decode()


def test_history_shows_a_wrong_idea_held_in_two_attempts_and_not_one_held_once(candidate, client):
    graded_attempt(candidate, confirm=True)
    graded_attempt(candidate, "We use plain round robin, which is all the routing we need.")
    graded_attempt(candidate)  # flagged by the matcher, never confirmed: not held
    assert client.get(reverse("history")).context["held_misconceptions"] == []
    graded_attempt(candidate, confirm=True)
    held = client.get(reverse("history")).context["held_misconceptions"]
    assert [(m["id"], m["attempts"]) for m in held] == [("a1-autoscale-gpu-util", 2)]
    assert "Wrong ideas you keep coming back to" in client.get(reverse("history")).content.decode()
