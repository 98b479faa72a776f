"""A saved review can be revised on the reviewed answer's page, by the instructor who saved it
or by another: the revised verdicts and note become the candidate's grade and the step's
calibration label, the page says who saved them and when, and a revision made from a page
older than the review (revised meanwhile) is refused with the typed verdicts repeated."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from accounts.instructors import instructor_grant
from practice.feedback import feedback_context
from practice.models import Grade
from practice.scoring import primary_grade
from review.models import CalibrationLabel
from review.services import ReviewedMeanwhile, review_store, review_version

from .conftest import make_submission
from .test_review_flow import ALL_MISS, ANSWER

ALL_HIT = dict.fromkeys(ALL_MISS, "hit")


@pytest.fixture
def second(db):
    user = User.objects.create_user("second-teacher", password="a-long-Passphrase-42")
    instructor_grant(user)
    return user


@pytest.fixture
def reviewed(content_loaded, candidate, instructor):
    """An answer the model graded, flagged, then labelled all hit by `instructor`."""
    submission = make_submission(
        user=candidate, text=ANSWER, review_reason="a gap", grades={"llm": (0.1, ALL_MISS)}
    )
    review_store(
        submission=submission, reviewer=instructor, labels=ALL_HIT, comment="Good.", blind=True
    )
    return submission


def _form(labels: dict[str, str], comment: str = "", revises: str | None = None) -> dict:
    data = {f"point-{k}": v for k, v in labels.items()} | {"comment": comment}
    if revises is not None:
        data["revises"] = revises
    return data


def _text(response) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", unescape(response.content.decode())).split())


def _candidates_grade(submission):
    return primary_grade(list(submission.grades.all()))


def _version(submission) -> str:
    return review_version(Grade.objects.get(submission=submission, grader="instructor"))


def test_the_reviewed_page_offers_a_form_to_revise_the_review(reviewed, client, instructor):
    client.force_login(instructor)
    page = client.get(reverse("review:submission", args=[reviewed.pk])).content.decode()
    assert "Revise this review" in page
    assert f'name="revises" value="{_version(reviewed)}"' in page
    # The form holds the saved verdicts and note.
    assert 'name="point-arch-gateway" value="hit" checked' in page
    assert ">Good.</textarea>" in page
    assert "Saved by you on" in _text(client.get(reverse("review:submission", args=[reviewed.pk])))


def test_the_same_instructor_revises_a_mis_click(reviewed, client, instructor):
    url = reverse("review:submission", args=[reviewed.pk])
    client.force_login(instructor)
    labels = {**ALL_HIT, "arch-observability": "miss"}
    page = _text(client.post(url, _form(labels, "Fixed.", _version(reviewed)), follow=True))
    assert "Your revised verdicts are saved" in page
    grade = _candidates_grade(reviewed)
    assert grade.grader == "instructor" and grade.reviewer == instructor
    assert {p["id"]: p["verdict"] for p in grade.points} == labels
    assert grade.feedback == "Fixed." and grade.score < 1.0
    assert CalibrationLabel.objects.get(submission=reviewed).labels == labels


def test_another_instructor_revises_the_review_and_the_candidates_grade_follows(
    reviewed, client, instructor, second
):
    url = reverse("review:submission", args=[reviewed.pk])
    before = Grade.objects.get(submission=reviewed, grader="instructor")
    client.force_login(second)
    page = _text(
        client.post(url, _form(ALL_MISS, "Nothing here.", _version(reviewed)), follow=True)
    )
    assert "Your revised verdicts are saved" in page and "Saved by you on" in page
    grade = _candidates_grade(reviewed)
    # A new grade, given now: the row the candidate's concept cards read next.
    assert grade.pk != before.pk and grade.reviewer == second and grade.score == 0.0
    assert grade.created_at > before.created_at
    label = CalibrationLabel.objects.get(submission=reviewed)
    assert label.labels == ALL_MISS and label.labelled_by == second
    answer = reviewed.answer
    context = feedback_context(attempt=answer.attempt, answer=answer, submission=reviewed)
    assert context["reviewed_by_instructor"] and context["review_comment"] == "Nothing here."
    # The first instructor reads who revised it.
    client.force_login(instructor)
    theirs = _text(client.get(url))
    assert "Saved by second-teacher on" in theirs
    assert "second-teacher's verdicts beside the others" in theirs


def test_a_stale_revision_is_refused_with_the_typed_verdicts(reviewed, client, instructor, second):
    """Both open the reviewed page; the second revises first; the first one's revision, sent
    from the older page, is refused: nothing overwritten, their verdicts and note repeated."""
    url = reverse("review:submission", args=[reviewed.pk])
    opened = _version(reviewed)
    client.force_login(second)
    client.post(url, _form(ALL_MISS, "", opened))
    client.force_login(instructor)
    typed = {**ALL_HIT, "arch-replicas": "partial"}
    page = _text(client.post(url, _form(typed, "Mine.", opened), follow=True))
    assert "Not saved: second-teacher revised this review since you opened it" in page
    assert "partial" in page.split("Your verdicts were:")[1] and "Your note: Mine." in page
    grade = _candidates_grade(reviewed)
    assert grade.reviewer == second and {p["verdict"] for p in grade.points} == {"miss"}
    # The page still offers the form, now on the revised review.
    assert "Revise this review" in page and "Save revised verdicts" in page


def test_a_revision_sent_twice_is_stored_once(reviewed, instructor):
    opened = _version(reviewed)
    labels = {**ALL_HIT, "arch-gateway": "partial"}
    first = review_store(submission=reviewed, reviewer=instructor, labels=labels, seen=opened)
    again = review_store(submission=reviewed, reviewer=instructor, labels=labels, seen=opened)
    assert again.pk == first.pk and review_version(again) == review_version(first)
    with pytest.raises(ReviewedMeanwhile, match="you \\(in another tab or window\\) revised"):
        review_store(submission=reviewed, reviewer=instructor, labels=ALL_MISS, seen=opened)


def test_a_refused_blind_label_is_followed_by_the_revise_form(reviewed, client, second):
    """The second instructor's blind labels, refused, leave them a form to revise with."""
    client.force_login(second)
    url = reverse("review:submission", args=[reviewed.pk])
    page = _text(client.post(url, _form(ALL_MISS), follow=True))
    assert "Not saved: teacher saved a review of this answer" in page
    assert "Save revised verdicts" in page


def test_a_revision_with_a_note_too_long_keeps_what_was_typed(reviewed, client, instructor):
    client.force_login(instructor)
    url = reverse("review:submission", args=[reviewed.pk])
    response = client.post(url, _form(ALL_MISS, "x" * 1001, _version(reviewed)))
    assert response.status_code == 422
    page = response.content.decode()
    assert "the limit is 1,000, so nothing was saved" in page
    assert '<details class="revise-review" open>' in page
    assert 'name="point-arch-gateway" value="miss" checked' in page
    assert _candidates_grade(reviewed).feedback == "Good."


def test_a_revision_reaches_the_candidates_concept_cards(reviewed, candidate, instructor):
    """A revision kept the first review's row, and the cards read only grades newer than the
    last they read: the candidate's plan kept the verdicts the instructor had corrected."""
    from drills.services import concept_cards_sync

    concept_cards_sync(user=candidate)  # the first review, read
    first = Grade.objects.get(submission=reviewed, grader="instructor")
    revised = review_store(
        submission=reviewed,
        reviewer=instructor,
        labels=ALL_MISS,
        comment="Good.",
        seen=review_version(first),
    )
    assert concept_cards_sync(user=candidate) == 1
    assert revised.pk != first.pk and revised.created_at > first.created_at
    assert not Grade.objects.filter(pk=first.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_two_blind_reviews_sent_at_once_store_one_and_refuse_the_other(
    content_loaded, candidate, instructor, second
):
    """The blind form's check ran before the lock: both passed, and the later overwrote the
    earlier without a word."""
    from tests.conftest import at_once

    submission = make_submission(
        user=candidate, text=ANSWER, review_reason="a gap", grades={"llm": (0.1, ALL_MISS)}
    )

    def label(reviewer, labels):
        return lambda: review_store(
            submission=submission, reviewer=reviewer, labels=labels, blind=True
        )

    outcomes = at_once(label(instructor, ALL_HIT), label(second, ALL_MISS))
    refused = [o for o in outcomes if isinstance(o, ReviewedMeanwhile)]
    stored = [o for o in outcomes if isinstance(o, Grade)]
    assert len(refused) == 1 and len(stored) == 1, outcomes
    assert Grade.objects.filter(submission=submission, grader="instructor").count() == 1
