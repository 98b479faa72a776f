"""The self-check where no model grades: the candidate's ratings are the score, the keyword
matcher only points, and one verdict order (instructor, model, self-check) everywhere."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from practice import services as flow
from practice.autosave import StaleDraft
from practice.errors import FlowError
from practice.models import Grade, SelfCheck, StepAnswer, Submission
from practice.scoring import GRADE_LABELS, primary_grade, submission_score
from practice.self_check import self_check_save
from tests.practice.self_check_helpers import (
    GPU_UTIL,
    WEIGHTS,
    all_rated,
    expected_score,
    form,
    offline_submission,
    post_ratings,
)

pytestmark = pytest.mark.django_db


def test_the_matcher_grade_alone_is_no_score(candidate):
    submission = offline_submission(candidate)
    grades = list(submission.grades.all())
    assert primary_grade(grades) is None
    assert submission_score("architecture", grades) is None


def test_the_verdict_order_is_instructor_then_model_then_self_check(candidate):
    submission = offline_submission(candidate)
    for grader, score in (("self", 0.5), ("llm", 0.7), ("instructor", 0.9)):
        Grade.objects.create(submission=submission, grader=grader, score=score)
        grades = list(submission.grades.all())
        assert primary_grade(grades).grader == grader
        assert submission_score("architecture", grades) == score
    assert set(GRADE_LABELS) == {"instructor", "llm", "self"}


def test_no_score_until_every_point_is_rated_then_the_ratings_are_the_score(candidate):
    submission = offline_submission(candidate)
    partly = all_rated("not", arch_gateway="covered", arch_prefix_router="partly")
    first = dict(list(partly.items())[:3])
    row = self_check_save(submission=submission, ratings=first, wrong_ideas={}, base_version=0)
    assert row.version == 1
    assert not submission.grades.filter(grader="self").exists()
    assert submission_score("architecture", submission.grades.all()) is None

    self_check_save(submission=submission, ratings=partly, wrong_ideas={}, base_version=1)
    grade = submission.grades.get(grader="self")
    assert grade.score == pytest.approx(
        expected_score({"arch-gateway": 1, "arch-prefix-router": 0.5})
    )
    assert grade.points[0] == {
        "id": "arch-gateway",
        "verdict": "hit",
        "evidence": "",
        "comment": "self-checked",
    }
    assert {p["verdict"] for p in grade.points} == {"hit", "partial", "miss"}
    assert submission_score("architecture", submission.grades.all()) == round(grade.score, 3)


def test_a_confirmed_wrong_idea_holds_the_point_it_contradicts_to_partly(candidate):
    found = [{"id": "a1-autoscale-gpu-util", "evidence": GPU_UTIL, "comment": ""}]
    submission = offline_submission(candidate, misconceptions=found)
    ratings = all_rated("covered")
    # Every point rated but the flagged idea not answered yet: still no score.
    self_check_save(submission=submission, ratings=ratings, wrong_ideas={}, base_version=0)
    assert not submission.grades.filter(grader="self").exists()

    self_check_save(
        submission=submission,
        ratings=ratings,
        wrong_ideas={"a1-autoscale-gpu-util": "confirmed"},
        base_version=1,
    )
    grade = submission.grades.get(grader="self")
    credit = dict.fromkeys(WEIGHTS, 1.0) | {"arch-autoscale-queue": 0.5}
    assert grade.score == pytest.approx(expected_score(credit))
    assert grade.misconceptions == found

    self_check_save(
        submission=submission,
        ratings=ratings,
        wrong_ideas={"a1-autoscale-gpu-util": "dismissed"},
        base_version=2,
    )
    grade.refresh_from_db()
    assert grade.score == 1.0 and grade.misconceptions == []


@pytest.mark.parametrize(
    ("ratings", "ideas", "message"),
    [
        ({"arch-teleporter": "covered"}, {}, "not a rubric point of this step"),
        ({"arch-gateway": "hit"}, {}, "not a rating: choose covered, partly or not covered"),
        ({}, {"a1-round-robin": "confirmed"}, "not a wrong idea flagged in this answer"),
    ],
)
def test_unknown_points_ratings_and_ideas_are_refused_with_a_reason(
    candidate, ratings, ideas, message
):
    submission = offline_submission(candidate)
    self_check_save(
        submission=submission, ratings={"arch-gateway": "partly"}, wrong_ideas={}, base_version=0
    )
    with pytest.raises(FlowError, match=re.escape(message)):
        self_check_save(submission=submission, ratings=ratings, wrong_ideas=ideas, base_version=1)
    row = SelfCheck.objects.get(submission=submission)
    assert row.ratings == {"arch-gateway": "partly"} and row.version == 1


def test_a_stale_tab_is_refused_and_the_saved_ratings_stay(candidate):
    submission = offline_submission(candidate)
    self_check_save(
        submission=submission, ratings=all_rated("covered"), wrong_ideas={}, base_version=0
    )
    with pytest.raises(StaleDraft):
        self_check_save(
            submission=submission, ratings={"arch-gateway": "not"}, wrong_ideas={}, base_version=0
        )
    row = SelfCheck.objects.get(submission=submission)
    assert row.ratings == all_rated("covered") and row.version == 1
    assert submission.grades.get(grader="self").score == 1.0


def test_the_autosave_answers_a_stale_tab_409_and_an_unknown_point_422(candidate):
    client = Client()
    client.force_login(candidate)
    submission = offline_submission(candidate)
    saved = post_ratings(
        client, submission, form({"arch-gateway": "covered"}, 0), HTTP_HX_REQUEST="true"
    )
    assert saved.status_code == 200
    assert "1 of 8 rated" in saved.text and 'id="self-check-version" value="1"' in saved.text

    stale = post_ratings(
        client, submission, form({"arch-gateway": "not"}, 0), HTTP_HX_REQUEST="true"
    )
    assert stale.status_code == 409
    assert "changed in another tab" in stale.text
    unknown = post_ratings(
        client, submission, form({"arch-warp-drive": "covered"}, 1), HTTP_HX_REQUEST="true"
    )
    assert unknown.status_code == 422
    assert "not a rubric point of this step" in unknown.text
    assert SelfCheck.objects.get(submission=submission).ratings == {"arch-gateway": "covered"}

    done = post_ratings(client, submission, form(all_rated("partly"), 1), HTTP_HX_REQUEST="true")
    assert done.status_code == 200
    # The score, labelled, in the status and out of band in the panel's score line.
    assert 'Self-checked: <strong class="self-check-score">50%</strong>' in done.text
    assert 'id="score-line" hx-swap-oob="true"' in done.text


def test_the_step_page_shows_the_ratings_checked_and_no_matcher_verdicts(candidate):
    client = Client()
    client.force_login(candidate)
    submission = offline_submission(candidate)
    self_check_save(
        submission=submission, ratings={"arch-replicas": "partly"}, wrong_ideas={}, base_version=0
    )
    page = client.get(
        reverse(
            "attempt_step",
            kwargs={"attempt_id": submission.answer.attempt_id, "step": "architecture"},
        )
    ).text
    assert re.search(r'id="rating-arch-replicas-partly" value="partly" checked', page)
    assert 'id="rating-arch-gateway-covered" value="covered">' in page  # not rated yet
    assert "Not scored yet" in page
    assert "(it may cover this): <q>A gateway.</q>" in page
    assert not re.search(r"verdict-tag|>(hit|miss|partial)<|Missing", page)
    assert "37%" not in page


def test_a_model_grade_takes_over_and_the_self_check_stays_in_view(candidate):
    client = Client()
    client.force_login(candidate)
    submission = offline_submission(candidate)
    self_check_save(
        submission=submission, ratings=all_rated("partly"), wrong_ideas={}, base_version=0
    )
    scorecard_url = reverse("attempt_scorecard", args=[submission.answer.attempt_id])
    before = client.get(scorecard_url).text
    assert "Self-checked" in before and "50%" in before and "Model-graded" not in before

    Grade.objects.create(
        submission=submission,
        grader="llm",
        score=0.8,
        model="test-model",
        points=[{"id": p, "verdict": "hit", "evidence": "", "comment": ""} for p in WEIGHTS],
    )
    flow.attempt_touch(submission.answer.attempt_id)
    after = client.get(scorecard_url).text
    step_row = re.search(r"3\. Architecture.*?</tr>", after, re.S).group(0)
    assert "Model-graded" in step_row and "80%" in step_row
    assert "Your self-check: 50%" in step_row
    assert "you (self-check)" in after  # and in the table of who graded what

    step_url = reverse(
        "attempt_step", kwargs={"attempt_id": submission.answer.attempt_id, "step": "architecture"}
    )
    panel = client.get(step_url).text
    assert "Model-graded" in panel and "your self-check: 50%" in panel
    assert "Your self-check" in panel and 'name="rating-arch-gateway"' not in panel  # read-only
    with pytest.raises(FlowError, match="has graded this answer since"):
        self_check_save(
            submission=submission, ratings=all_rated("not"), wrong_ideas={}, base_version=1
        )


def test_someone_elses_self_check_is_a_404_to_read_and_to_write(candidate):
    submission = offline_submission(candidate)
    self_check_save(
        submission=submission, ratings={"arch-gateway": "covered"}, wrong_ideas={}, base_version=0
    )
    other = User.objects.create_user("other", password="a-long-Passphrase-42")
    client = Client()
    client.force_login(other)
    assert (
        post_ratings(
            client, submission, form({"arch-gateway": "not"}, 1), HTTP_HX_REQUEST="true"
        ).status_code
        == 404
    )
    feedback = reverse(
        "submission_feedback",
        kwargs={"attempt_id": submission.answer.attempt_id, "submission_id": submission.pk},
    )
    assert client.get(feedback).status_code == 404
    assert SelfCheck.objects.get(submission=submission).ratings == {"arch-gateway": "covered"}


def test_an_offline_only_attempt_shows_no_matcher_score_on_the_scorecard_or_history(candidate):
    client = Client()
    client.force_login(candidate)
    submission = offline_submission(candidate)
    attempt_id = submission.answer.attempt_id
    scorecard = client.get(reverse("attempt_scorecard", args=[attempt_id])).text
    history = client.get(reverse("history")).text
    for page in (scorecard, history):
        assert "37%" not in page and "37 %" not in page
        assert "Not scored yet — rate your answer" in page
        assert "offline rubric grader" not in page
    assert "No step has been scored yet." in scorecard
    # The link goes where the rating happens.
    assert f"/attempts/{attempt_id}/steps/architecture/#self-check" in history


def test_the_same_ratings_saved_again_move_no_version(candidate):
    submission = offline_submission(candidate)
    ratings = {"arch-gateway": "covered"}
    self_check_save(submission=submission, ratings=ratings, wrong_ideas={}, base_version=0)
    # A repeated autosave (or a retry) writes nothing, so the tab's next save is not stale.
    again = self_check_save(submission=submission, ratings=ratings, wrong_ideas={}, base_version=1)
    assert again.version == 1
    self_check_save(
        submission=submission, ratings=all_rated("covered"), wrong_ideas={}, base_version=1
    )
    assert submission.grades.get(grader="self").score == 1.0


def test_a_self_checked_zero_counts_as_the_parts_score_over_an_unscored_version():
    from practice.scoring import ScoredSubmission, best_per_part

    unscored = ScoredSubmission(part=("design", ""), score=None)
    zero = ScoredSubmission(part=("design", ""), score=0.0)
    assert best_per_part([unscored, zero])[("design", "")] is zero
    assert best_per_part([zero, unscored])[("design", "")] is zero


def test_the_overall_says_how_many_steps_it_is_over_when_one_is_not_scored_yet(candidate):
    # "Overall 70% across the steps you submitted" read as if the unrated architecture step
    # were in it.
    client = Client()
    client.force_login(candidate)
    submission = offline_submission(candidate)
    attempt = submission.answer.attempt
    clarify = StepAnswer.objects.create(attempt=attempt, step_key="clarify", text="x", version=1)
    scored = Submission.objects.create(answer=clarify, number=1, text="x", draft_version=1,
                                       grade_status=Submission.GradeStatus.DONE)  # fmt: skip
    Grade.objects.create(submission=scored, grader="llm", score=0.7, points=[])
    page = " ".join(client.get(reverse("attempt_scorecard", args=[attempt.pk])).text.split())
    assert "across the 1 scored step; steps not scored yet are not in it." in page
    assert "across the steps you submitted" not in page
