"""The candidate's self-check of a submission no model graded.

Where no model grades (none configured, or it failed), the keyword matcher's grade ("rubric")
is not a score: it only points. The candidate rates each rubric point against the reference
answer ("covered", "partly", "not"), and confirms or dismisses each wrong idea the matcher
flagged. Ratings autosave with the version guard of practice.autosave. Once every point is
rated and every flagged idea answered, the ratings are stored as a Grade "self", scored with
the graders' own arithmetic (grading.types): a rating is a verdict, a confirmed wrong idea
holds the points it contradicts to at most partial. A model grade or an instructor's review
takes over from it (practice.scoring.primary_grade); the self-check then stays, read-only.

    self_check_save(submission=..., ratings={...}, wrong_ideas={...}, base_version=n)
    self_check_view(submission=..., attempt=...)  # what the feedback panel shows
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.urls import reverse

from grading.types import (
    MisconceptionFound,
    RubricPointVerdict,
    cap_contradicted,
    weighted_score,
)
from practice import extensions
from practice.autosave import versioned_save
from practice.diagram import diagram_evidence
from practice.errors import FlowError
from practice.misconceptions import misconceptions_found
from practice.models import Attempt, Grade, SelfCheck, Submission
from practice.services import _store, attempt_touch, step_spec
from questions import selectors

# A rating is the candidate's verdict on a point, in the graders' own words.
RATING_VERDICTS = {
    SelfCheck.Rating.COVERED: "hit",
    SelfCheck.Rating.PARTLY: "partial",
    SelfCheck.Rating.NOT: "miss",
}
RATING_FIELD = "rating-"  # a form field per point: rating-<point id>
IDEA_FIELD = "idea-"  # a form field per flagged wrong idea: idea-<misconception id>
# Graders whose verdict takes over from the self-check.
TAKES_OVER = ("instructor", "llm")

STALE_MESSAGE = (
    "Your ratings were changed in another tab or window since you opened this one. Nothing "
    "was overwritten: reload the page to see them and carry on."
)


def self_check_applies(submission: Submission, grades: list[Grade]) -> bool:
    """Whether the submission has a self-check to show: grading ended and the keyword
    matcher ran (the model, when there is one, either graded too or could not)."""
    done = submission.grade_status in (Submission.GradeStatus.DONE, Submission.GradeStatus.OFFLINE)
    return done and any(g.grader == "rubric" for g in grades)


def _taken_over(grades: list[Grade]) -> Grade | None:
    by = {g.grader: g for g in grades}
    return next((by[name] for name in TAKES_OVER if name in by), None)


def ratings_from_post(data: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The ratings and wrong-idea answers a self-check form posted: {point id: rating},
    {misconception id: decision}; other fields (the CSRF token, the version) are left out."""
    ratings = {
        k[len(RATING_FIELD) :]: str(v) for k, v in data.items() if k.startswith(RATING_FIELD)
    }
    ideas = {k[len(IDEA_FIELD) :]: str(v) for k, v in data.items() if k.startswith(IDEA_FIELD)}
    return ratings, ideas


def _flagged(submission: Submission, grades: list[Grade]) -> list[dict]:
    """The wrong ideas the keyword matcher flagged in this answer (none on a follow-up:
    misconceptions belong to a step), ready to show (practice.misconceptions)."""
    answer = submission.answer
    if answer.follow_up_id:
        return []
    rubric = next((g for g in grades if g.grader == "rubric"), None)
    return misconceptions_found(
        revision=answer.attempt.revision, step_key=answer.step_key, grade=rubric
    )


def self_check_save(
    *,
    submission: Submission,
    ratings: Mapping[str, str],
    wrong_ideas: Mapping[str, str],
    base_version: int,
) -> SelfCheck:
    """Save the candidate's ratings of a submission if nobody saved newer ones since
    `base_version`; once every point is rated and every flagged idea answered, store (or
    refresh) the Grade "self" they score. Returns the self-check as now stored.

    FlowError, with a sentence that says why, for a rating of a point the step does not have,
    a rating or answer that is not one of the choices, a wrong idea that was not flagged, or a
    submission a model or an instructor has graded; StaleDraft (nothing overwritten) when
    another tab saved in between.
    """
    answer = submission.answer
    attempt = answer.attempt
    if extensions.feedback_withheld(attempt.pk):
        raise FlowError("In a mock interview the rubric comes in the report when it ends.")
    grades = list(submission.grades.all())
    if not self_check_applies(submission, grades):
        raise FlowError("This answer is not graded yet: rate it once its feedback is ready.")
    if _taken_over(grades) is not None:
        raise FlowError(
            "A model or an instructor has graded this answer since; your self-check is kept "
            "as it was."
        )
    spec = step_spec(attempt.revision, answer.step_key, answer.follow_up_id)
    point_ids = [p.id for p in spec.rubric]
    for point_id, rating in ratings.items():
        if point_id not in point_ids:
            raise FlowError(
                f"“{point_id}” is not a rubric point of this step: nothing was saved. "
                "Reload the page to rate the points it has."
            )
        if rating not in SelfCheck.Rating.values:
            raise FlowError(
                f"“{rating}” is not a rating: choose covered, partly or not covered. "
                "Nothing was saved."
            )
    flagged = {m["id"] for m in _flagged(submission, grades)}
    for idea_id, decision in wrong_ideas.items():
        if idea_id not in flagged:
            raise FlowError(
                f"“{idea_id}” is not a wrong idea flagged in this answer: nothing was saved."
            )
        if decision not in SelfCheck.Decision.values:
            raise FlowError(
                f"“{decision}” is not an answer: say whether you meant it (confirmed) or not "
                "(dismissed). Nothing was saved."
            )
    ratings, wrong_ideas = dict(ratings), dict(wrong_ideas)
    row = SelfCheck.objects.filter(submission=submission).first() or SelfCheck(
        submission=submission
    )
    if row.pk is not None and row.ratings == ratings and row.wrong_ideas == wrong_ideas:
        # The same ratings again (a repeated autosave, a retried request): nothing to write,
        # and no version to move that another request of this tab would then be behind.
        return row
    with transaction.atomic():
        row, written = versioned_save(
            row,
            key={"submission": submission},
            base_version=base_version,
            values={"ratings": ratings, "wrong_ideas": wrong_ideas},
            same=lambda stored: stored.ratings == ratings and stored.wrong_ideas == wrong_ideas,
            stale_message=STALE_MESSAGE,
        )
        if written:
            if _store_self_grade(submission, row, spec, flagged):
                # The plan reads the new verdict now, not at the next graded step.
                transaction.on_commit(lambda: extensions.verdict_stored(submission))
            attempt_touch(attempt.pk)
    return row


def self_check_complete(row: SelfCheck | None, point_ids: list[str], flagged: set[str]) -> bool:
    """Whether every point is rated and every flagged wrong idea answered."""
    if row is None:
        return False
    return all(p in row.ratings for p in point_ids) and all(m in row.wrong_ideas for m in flagged)


def _store_self_grade(submission: Submission, row: SelfCheck, spec, flagged: set[str]) -> bool:
    """Store the Grade "self" the ratings score, or drop it while they are incomplete.
    Whether a grade was stored."""
    if not self_check_complete(row, [p.id for p in spec.rubric], flagged):
        Grade.objects.filter(submission=submission, grader="self").delete()
        return False
    rubric = Grade.objects.filter(submission=submission, grader="rubric").first()
    confirmed = [
        m
        for m in (rubric.misconceptions if rubric else [])
        if row.wrong_ideas.get(m.get("id")) == SelfCheck.Decision.CONFIRMED
    ]
    verdicts = [
        RubricPointVerdict(
            id=p.id, verdict=RATING_VERDICTS[row.ratings[p.id]], comment="self-checked"
        )
        for p in spec.rubric
    ]
    cap_contradicted(
        verdicts,
        [MisconceptionFound(id=m["id"], evidence=m.get("evidence", "")) for m in confirmed],
        getattr(spec, "misconceptions", ()),
    )
    points = []
    for v in verdicts:
        comment = "self-checked" if v.comment == "self-checked" else f"self-checked. {v.comment}"
        points.append({"id": v.id, "verdict": v.verdict, "evidence": "", "comment": comment})
    _store(
        submission,
        "self",
        score=weighted_score(list(spec.rubric), verdicts),
        points=points,
        misconceptions=confirmed,
        feedback="",
    )
    return True


def self_check_view(*, attempt: Attempt, submission: Submission, grades: list[Grade]) -> dict:
    """What the feedback panel shows of the self-check: each rubric point with its rating,
    the matcher's pointer ("may cover this") and its concepts; each flagged wrong idea as a
    question with its answer; whether it is complete, editable, and its version.
    Empty when the submission has no self-check to show."""
    if not self_check_applies(submission, grades):
        return {}
    answer = submission.answer
    row = SelfCheck.objects.filter(submission=submission).first()
    taken_over = _taken_over(grades)
    if taken_over is not None and row is None:
        return {}  # graded by a model or an instructor before the candidate rated anything
    ratings = row.ratings if row else {}
    decisions = row.wrong_ideas if row else {}
    spec = step_spec(attempt.revision, answer.step_key, answer.follow_up_id)
    rubric = next((g for g in grades if g.grader == "rubric"), None)
    # The matcher points at a sentence; it never decides, so only its quote is shown.
    found = [p for p in (rubric.points if rubric else []) if p.get("verdict") in ("hit", "partial")]
    # ...at a sentence of the prose, or at the nodes and edges of the diagram it found.
    in_diagram = {p.get("id"): diagram_evidence(p) for p in found if diagram_evidence(p)}
    pointers = {
        p.get("id"): p.get("evidence", "")
        for p in found
        if p.get("evidence") and p.get("id") not in in_diagram
    }
    concepts = selectors.concepts_by_slug({c for p in spec.rubric for c in p.concepts})
    labels = dict(SelfCheck.Rating.choices)
    points = [
        {
            "id": p.id,
            "says": p.says,
            "weight": p.weight,
            "rating": ratings.get(p.id, ""),
            "rating_label": labels.get(ratings.get(p.id, ""), "not rated"),
            "pointer": pointers.get(p.id, ""),
            "diagram_pointer": in_diagram.get(p.id, []),
            "concepts": [concepts[c] for c in p.concepts if c in concepts],
        }
        for p in spec.rubric
    ]
    ideas = [{**m, "decision": decisions.get(m["id"], "")} for m in _flagged(submission, grades)]
    rated = sum(1 for p in points if p["rating"]) + sum(1 for m in ideas if m["decision"])
    return {
        "url": reverse(
            "submission_self_check",
            kwargs={"attempt_id": attempt.pk, "submission_id": submission.pk},
        ),
        "row": row,
        "version": row.version if row else 0,
        "points": points,
        "wrong_ideas": ideas,
        "rated": rated,
        "to_rate": len(points) + len(ideas),
        "complete": self_check_complete(row, [p.id for p in spec.rubric], {m["id"] for m in ideas}),
        "editable": taken_over is None,
        "pointers": [e for e in pointers.values()],
        "wrong_evidence": [m["evidence"] for m in ideas if m["decision"] != "dismissed"],
        "self_grade": next((g for g in grades if g.grader == "self"), None),
    }
