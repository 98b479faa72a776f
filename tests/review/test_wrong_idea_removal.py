"""An instructor rules on the wrong ideas their grade keeps: once their blind verdicts are saved,
the page lists each idea the grade states to the candidate, with a button that removes it, so
the candidate's feedback no longer states it; the verdicts, score and calibration label stay.
A removal is kept when the labels are sent again, and every bad post is refused with a reason."""

from __future__ import annotations

from html import unescape

import pytest
from django.urls import reverse

from practice.errors import FlowError
from practice.feedback import feedback_context
from practice.models import Grade
from review.models import CalibrationLabel
from review.services import WrongIdeaGone, review_store, wrong_idea_remove, wrong_idea_restore

from .conftest import make_submission
from .test_review_flow import ALL_MISS

GPU_UTIL = {"id": "a1-autoscale-gpu-util", "evidence": "We autoscale on GPU utilisation."}
ROUND_ROBIN = {"id": "a1-round-robin", "evidence": "The router sends requests round-robin."}
TEXT = "We autoscale on GPU utilisation. The router sends requests round-robin."
# The ideas as the question states them, which the candidate's feedback shows.
GPU_UTIL_IDEA = "GPU utilisation is the signal to autoscale on."
ROUND_ROBIN_IDEA = "Round robin in front of the replicas is good enough routing."


def model_graded(candidate, *, found=(GPU_UTIL, ROUND_ROBIN)):
    """An answer the model graded, finding the wrong ideas `found`, flagged for review."""
    submission = make_submission(
        user=candidate,
        text=TEXT,
        review_reason="the two graders disagree",
        grades={"llm": (0.0, ALL_MISS), "rubric": (0.0, ALL_MISS)},
    )
    submission.grades.filter(grader="llm").update(misconceptions=list(found))
    return submission


def candidates_wrong_ideas(submission) -> list[str]:
    answer = submission.answer
    context = feedback_context(attempt=answer.attempt, answer=answer, submission=submission)
    assert context["reviewed_by_instructor"]
    return [m["id"] for m in context["misconceptions"]]


# --- the service ---------------------------------------------------------------------------------


def test_a_removed_wrong_idea_leaves_the_grade_and_the_candidates_feedback(
    content_loaded, candidate, instructor
):
    submission = model_graded(candidate)
    # Neither idea's point is credited in full (one partly): both stay, as before.
    labels = {**ALL_MISS, "arch-autoscale-queue": "partial"}
    grade = review_store(submission=submission, reviewer=instructor, labels=labels, blind=True)
    assert [m["id"] for m in grade.misconceptions] == [GPU_UTIL["id"], ROUND_ROBIN["id"]]
    label, score = CalibrationLabel.objects.get(submission=submission), grade.score

    removed = wrong_idea_remove(submission=submission, remover=instructor, idea_id=GPU_UTIL["id"])

    assert removed == GPU_UTIL
    grade.refresh_from_db()
    assert grade.misconceptions == [ROUND_ROBIN]
    assert candidates_wrong_ideas(submission) == [ROUND_ROBIN["id"]]
    # The verdicts, the score and the calibration label are the instructor's as labelled.
    assert {p["id"]: p["verdict"] for p in grade.points} == labels
    assert grade.score == score
    assert CalibrationLabel.objects.get(pk=label.pk).labels == labels


def test_a_removed_wrong_idea_stays_removed_when_the_labels_are_sent_again(
    content_loaded, candidate, instructor
):
    submission = model_graded(candidate)
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    wrong_idea_remove(submission=submission, remover=instructor, idea_id=GPU_UTIL["id"])
    # The label form sent again (a second tab, a double click) stores the same verdicts.
    grade = review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    assert grade.misconceptions == [ROUND_ROBIN]
    # The full-credit rule still holds for the others, both ways.
    credited = {**ALL_MISS, "arch-prefix-router": "hit"}
    grade = review_store(submission=submission, reviewer=instructor, labels=credited)
    assert grade.misconceptions == []
    grade = review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    assert grade.misconceptions == [ROUND_ROBIN]


def test_an_idea_found_after_the_review_is_no_removed_one(content_loaded, candidate, instructor):
    """The model grades again after the review (it was down, say) and finds an idea the
    stored review never held: saving the verdicts again states it; only a removed one stays
    out."""
    submission = model_graded(candidate, found=(GPU_UTIL,))
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    wrong_idea_remove(submission=submission, remover=instructor, idea_id=GPU_UTIL["id"])
    submission.grades.filter(grader="llm").update(misconceptions=[GPU_UTIL, ROUND_ROBIN])
    grade = review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    assert grade.misconceptions == [ROUND_ROBIN]
    assert grade.wrong_ideas_removed == [{"id": GPU_UTIL["id"], "by": instructor.pk}]


def test_removing_a_wrong_idea_is_refused_with_a_reason(content_loaded, candidate, instructor):
    submission = model_graded(candidate)
    # Not labelled yet: refused before anything about the idea is said (labelling is blind).
    with pytest.raises(FlowError, match="Label this answer first") as refused:
        wrong_idea_remove(submission=submission, remover=instructor, idea_id=GPU_UTIL["id"])
    assert not isinstance(refused.value, WrongIdeaGone)
    assert not submission.grades.filter(grader="instructor").exists()

    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    for idea in ("a1-one-tp-instance", "no-such-idea", "", "x" * 500):
        with pytest.raises(FlowError, match="is not a wrong idea this grade states") as refused:
            wrong_idea_remove(submission=submission, remover=instructor, idea_id=idea)
        assert not isinstance(refused.value, WrongIdeaGone)
        assert len(str(refused.value)) < 200
    # A page listing an idea removed since: said so, nothing changed.
    shown = [GPU_UTIL["id"], ROUND_ROBIN["id"]]
    wrong_idea_remove(
        submission=submission, remover=instructor, idea_id=GPU_UTIL["id"], shown=shown
    )
    with pytest.raises(WrongIdeaGone, match="no longer in the grade"):
        wrong_idea_remove(
            submission=submission, remover=instructor, idea_id=GPU_UTIL["id"], shown=shown
        )
    assert submission.grades.get(grader="instructor").misconceptions == [ROUND_ROBIN]


# --- the view ------------------------------------------------------------------------------------


def remove_url(submission) -> str:
    return reverse("review:wrong_idea_remove", args=[submission.pk])


def page_of(client, submission) -> str:
    return unescape(client.get(reverse("review:submission", args=[submission.pk])).content.decode())


def test_the_review_page_offers_each_kept_idea_for_removal_once_labelled(
    content_loaded, client, candidate, instructor
):
    submission = model_graded(candidate)
    client.force_login(instructor)
    blind = page_of(client, submission)
    # The label form shows nothing of the model's findings, nor a way to rule on them.
    assert "Remove from the grade" not in blind and GPU_UTIL_IDEA not in blind
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)

    page = page_of(client, submission)
    kept = page.split('class="kept-wrong-ideas"')[1].split("</ul>")[0]
    assert kept.count('class="wrong-idea-remove"') == 2
    assert 'name="idea" value="a1-autoscale-gpu-util"' in kept
    assert f'name="shown" value="{GPU_UTIL["id"]},{ROUND_ROBIN["id"]}"' in kept
    assert "or you remove it" in page

    response = client.post(
        remove_url(submission), {"idea": GPU_UTIL["id"], "shown": f"{GPU_UTIL['id']}"}
    )
    assert response.status_code == 302
    assert response.url == reverse("review:submission", args=[submission.pk])
    page = page_of(client, submission)
    assert "Removed from the grade: " in page and "feedback no longer states it" in page
    kept = page.split('class="kept-wrong-ideas"')[1].split("</ul>")[0]
    assert GPU_UTIL["evidence"] not in kept and ROUND_ROBIN["evidence"] in kept
    assert candidates_wrong_ideas(submission) == [ROUND_ROBIN["id"]]

    # The candidate's step page states only the idea kept, and marks only its sentence.
    client.force_login(candidate)
    step = unescape(
        client.get(
            reverse("attempt_step", args=[submission.answer.attempt_id, "architecture"])
        ).content.decode()
    )
    assert ROUND_ROBIN_IDEA in step and GPU_UTIL_IDEA not in step
    assert f'<mark class="mark-wrong">{ROUND_ROBIN["evidence"]}</mark>' in step
    assert f'<mark class="mark-wrong">{GPU_UTIL["evidence"]}</mark>' not in step

    # The last one removed, the list goes.
    client.force_login(instructor)
    client.post(remove_url(submission), {"idea": ROUND_ROBIN["id"]})
    assert "kept-wrong-ideas" not in page_of(client, submission)


def test_the_calibration_and_item_pages_still_read_a_grade_with_an_idea_removed(
    content_loaded, client, candidate, instructor
):
    submission = model_graded(candidate)
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    client.force_login(instructor)
    client.post(remove_url(submission), {"idea": GPU_UTIL["id"]})
    slug = submission.answer.attempt.revision.question.slug
    calibration = client.get(reverse("review:calibration_step", args=[slug, "architecture"]))
    assert calibration.status_code == 200
    assert calibration.context["labels_count"] == 1
    assert calibration.context["labels_from_reviews"] == 1
    assert client.get(reverse("review:items", args=[slug])).status_code == 200
    instructor_grade = submission.grades.get(grader="instructor")
    assert client.get(reverse("review:grade", args=[instructor_grade.pk])).status_code == 200


def test_every_bad_removal_is_refused_with_a_reason_never_an_error(
    content_loaded, client, candidate, instructor
):
    submission = model_graded(candidate)
    url = remove_url(submission)
    # Signed out: to sign in. A candidate (not an instructor): no such page.
    response = client.post(url, {"idea": GPU_UTIL["id"]})
    assert response.status_code == 302 and "login" in response.url
    client.force_login(candidate)
    assert client.post(url, {"idea": GPU_UTIL["id"]}).status_code == 404
    assert Grade.objects.get(submission=submission, grader="llm").misconceptions

    client.force_login(instructor)
    assert client.get(url).status_code == 405
    assert client.post(reverse("review:wrong_idea_remove", args=[999999])).status_code == 404
    # Not labelled yet: back to the blind form, told to label first, nothing of the idea said.
    response = client.post(url, {"idea": GPU_UTIL["id"]}, follow=True)
    body = unescape(response.content.decode())
    assert response.status_code == 200 and "Label this answer first" in body
    assert "Save my verdicts" in body and GPU_UTIL_IDEA not in body

    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    for posted in ({}, {"idea": "no-such-idea"}, {"idea": "a1-one-tp-instance", "shown": ","}):
        response = client.post(url, posted, follow=True)
        body = unescape(response.content.decode())
        assert response.status_code == 200, posted
        assert "is not a wrong idea this grade states. Nothing was changed." in body, posted
    assert submission.grades.get(grader="instructor").misconceptions == [GPU_UTIL, ROUND_ROBIN]

    # A stale page: the idea removed from another tab since it was opened.
    shown = f"{GPU_UTIL['id']},{ROUND_ROBIN['id']}"
    client.post(url, {"idea": GPU_UTIL["id"], "shown": shown})
    response = client.post(url, {"idea": GPU_UTIL["id"], "shown": shown}, follow=True)
    body = unescape(response.content.decode())
    assert response.status_code == 200 and "no longer in the grade" in body
    assert "message-info" in body
    assert submission.grades.get(grader="instructor").misconceptions == [ROUND_ROBIN]


def test_a_colleagues_removal_is_named_and_can_be_put_back(
    content_loaded, client, candidate, instructor
):
    """Any instructor may revise a review, its wrong ideas included: a removal says who made
    it, and "Put it back" returns the idea to the grade and the candidate's feedback."""
    from django.contrib.auth.models import User

    from accounts.instructors import instructor_grant

    submission = model_graded(candidate)
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    colleague = User.objects.create_user("colleague")
    instructor_grant(colleague)
    client.force_login(colleague)
    client.post(remove_url(submission), {"idea": GPU_UTIL["id"]})
    assert candidates_wrong_ideas(submission) == [ROUND_ROBIN["id"]]

    client.force_login(instructor)
    page = page_of(client, submission)
    removed = page.split('class="removed-wrong-ideas"')[1].split("</ul>")[0]
    assert GPU_UTIL_IDEA in removed and "(removed by <bdi>colleague</bdi>)" in removed
    assert "Put it back" in removed and ROUND_ROBIN_IDEA not in removed

    restore = reverse("review:wrong_idea_restore", args=[submission.pk])
    client.post(restore, {"idea": GPU_UTIL["id"]})
    page = page_of(client, submission)
    assert "Put back: “GPU utilisation is the signal to autoscale on”. The candidate's" in page
    assert "removed-wrong-ideas" not in page
    assert candidates_wrong_ideas(submission) == [GPU_UTIL["id"], ROUND_ROBIN["id"]]
    # Put back twice (a second tab): said, nothing changed.
    client.post(restore, {"idea": GPU_UTIL["id"]})
    assert "is not removed from the grade" in page_of(client, submission)


def test_an_idea_put_back_whose_point_the_review_credits_stays_out_and_says_why(
    content_loaded, candidate, instructor
):
    submission = model_graded(candidate, found=(ROUND_ROBIN,))
    review_store(submission=submission, reviewer=instructor, labels=ALL_MISS, blind=True)
    wrong_idea_remove(submission=submission, remover=instructor, idea_id=ROUND_ROBIN["id"])
    # The verdicts now credit in full the point the idea contradicts.
    review_store(
        submission=submission, reviewer=instructor, labels={**ALL_MISS, "arch-prefix-router": "hit"}
    )
    assert wrong_idea_restore(submission=submission, idea_id=ROUND_ROBIN["id"]) is False
    grade = submission.grades.get(grader="instructor")
    assert grade.misconceptions == [] and grade.wrong_ideas_removed == []
