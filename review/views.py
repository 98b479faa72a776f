"""Grader trust pages: the review queue, blind labelling, a grade's audit trail, calibration
and item statistics (instructors only: 404 for any other signed-in user, sign-in for the
signed out), and the candidate's "dispute this grade" (their own submissions only)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_POST, require_safe

from accounts.instructors import instructor_required
from grading.types import NOT_AWARDED, VERDICTS, comment_without_point
from practice import step_page
from practice.diagram import diagram_evidence, diagram_picture, diagram_text
from practice.errors import FlowError
from practice.misconceptions import misconceptions_found
from practice.models import Grade, Submission
from practice.scoring import CHECKER_WEIGHT
from practice.services import step_spec
from questions import selectors
from questions.models import Question
from rate_limits import LimitExceeded
from review import services as review
from review.calibration_sets import (
    CalibrationError,
    calibration_view,
    labels_import,
    shipped_labels,
)
from review.item_stats import FLAG_FROM, question_item_stats
from review.models import CalibrationLabel
from review.services import CALIBRATED_STEPS

# Who gave a grade, in the one verdict order (practice.scoring), then the keyword matcher:
# shown to instructors beside the others, labelled advisory, never as the candidate's grade.
GRADER_NAMES = {
    "instructor": "Instructor",
    "llm": "Model grader",
    "self": "Candidate's self-check",
    "rubric": "Matcher, advisory",
}


def _question(slug: str) -> Question:
    """A published question (a preview of a new question's draft stores one without a
    published revision: it has no title to show, nothing to review or measure)."""
    return get_object_or_404(
        Question.objects.select_related("current_revision"),
        slug=slug,
        current_revision__isnull=False,
    )


@instructor_required
@require_safe
def review_index(request: HttpRequest) -> HttpResponse:
    counts = review.queue_counts()
    questions = [
        {"question": q, "waiting": counts.get(q.pk, 0)}
        for q in Question.objects.select_related("current_revision")
        if q.current_revision is not None
    ]
    return render(request, "review/index.html", {"questions": questions})


@instructor_required
@require_safe
def review_queue(request: HttpRequest, slug: str) -> HttpResponse:
    question = _question(slug)
    entries = review.review_queue(question=question)
    return render(
        request,
        "review/queue.html",
        {"question": question, "entries": entries},
    )


def _side_by_side(submission: Submission, points) -> tuple[list[dict], list[dict]]:
    """The graders that graded (instructor first) and, per rubric point, each one's verdict
    and quote."""
    grades = {g.grader: g for g in submission.grades.select_related("reviewer")}
    columns = [name for name in GRADER_NAMES if name in grades]
    titles = {name: _grader_title(grades[name]) for name in columns}
    rows = []
    for point in points:
        cells = []
        for name in columns:
            found = next((p for p in grades[name].points if p.get("id") == point.id), {})
            # An instructor picks verdicts, never quotes: the quote stored with their grade is
            # a grader's (review_store), kept to highlight the candidate's answer; shown in
            # the instructor's column it reads as if they had cited it.
            quoted = name != review.INSTRUCTOR
            cells.append(
                {
                    # The column's heading, which names the cell where a phone stacks the row.
                    "title": titles[name],
                    "verdict": found.get("verdict", "miss"),
                    "quote": (found.get("quote") or found.get("evidence", "")) if quoted else "",
                    "quote_found": found.get("quote_found"),
                    "comment": found.get("comment", ""),
                    # Why a grader's verdict is a miss in spite of its quote, as the candidate
                    # reads it: the quote stays under it, so without the reason it reads as
                    # a miss the grader backed.
                    "not_awarded": _not_awarded(found, point) if quoted else "",
                    # The nodes and edges this grader found in the diagram ("gw -> router").
                    "diagram_evidence": diagram_evidence(found),
                }
            )
        verdicts = {c["verdict"] for c in cells}
        rows.append({"point": point, "cells": cells, "agree": len(verdicts) == 1})
    return [
        {"grader": name, "title": titles[name], "grade": grades[name]} for name in columns
    ], rows


def _not_awarded(found: dict, point) -> str:
    """The reason a grader's verdict on `point` was not awarded ("Not awarded: the grader's
    quote is ..."), without the point restated after it (the row names it); "" for none."""
    comment = found.get("comment") or ""
    if found.get("verdict") != "miss" or not comment.startswith(NOT_AWARDED):
        return ""
    return comment_without_point(comment, point.says)


def _reviewer_name(grade: Grade) -> str:
    """Who labelled an instructor's grade, by user name ("" when the account is gone)."""
    return grade.reviewer.get_username() if grade.reviewer_id else ""


def _grader_title(grade: Grade) -> str:
    """A grade's column heading: the instructor's names the one who labelled it, since a
    second instructor reads the same page."""
    title = GRADER_NAMES.get(grade.grader, grade.grader)
    name = _reviewer_name(grade) if grade.grader == review.INSTRUCTOR else ""
    return f"{title}: {name}" if name else title


def _submission_diagram(submission: Submission, points=()) -> dict:
    """The submission's diagram laid out (practice.diagram) for a page, as `diagram_picture`
    (None when it has none), with the nodes and edges the graders found for the hit and
    partial `points` marked and listed as `diagram_evidence`."""
    text = diagram_text(submission.fields)
    if not text.strip():
        return {"diagram_picture": None, "diagram_evidence": []}
    found = [
        e
        for p in points
        if p.get("verdict") in ("hit", "partial")
        for e in p.get("diagram_evidence") or ()
    ]
    found = list(dict.fromkeys(found))
    return {"diagram_picture": diagram_picture(text, evidence=found), "diagram_evidence": found}


# The revise form's field holding the version of the review it was opened on.
REVISE_FIELD = "revises"


@instructor_required
def review_submission(request: HttpRequest, submission_id: int) -> HttpResponse:
    """GET: the blind labelling form (the answer and the rubric, no grader verdicts) until an
    instructor has labelled it, then both graders beside the instructor, and a form to revise
    the review. POST: the labels, blind or revising the review (REVISE_FIELD)."""
    submission = get_object_or_404(
        Submission.objects.select_related("answer__attempt__revision__question"),
        pk=submission_id,
        answer__attempt__is_preview=False,
    )
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    answer = submission.answer
    revision = answer.attempt.revision
    spec = step_spec(revision, answer.step_key, answer.follow_up_id)
    points = list(spec.rubric)
    error, given, comment = "", {}, ""
    # The revise form carries the version of the review it was opened on; the blind one none.
    seen = request.POST.get(REVISE_FIELD) if request.method == "POST" else None
    if request.method == "POST":
        given = {p.id: request.POST.get(f"point-{p.id}", "") for p in points}
        comment = request.POST.get("comment", "")
        try:
            review.review_store(
                submission=submission,
                reviewer=request.user,
                labels=given,
                comment=comment,
                blind=seen is None,
                seen=seen,
            )
        except review.ReviewedMeanwhile as exc:  # the page now shows the stored review
            messages.error(request, str(exc))
            return redirect("review:submission", submission_id=submission.pk)
        except FlowError as exc:
            error = str(exc)
        else:
            # What saving did is said once, on the page, under the verdicts compared.
            messages.success(
                request,
                "Your revised verdicts are saved."
                if seen is not None
                else "Your verdicts are saved.",
            )
            return redirect("review:submission", submission_id=submission.pk)
    reviewed = submission.grades.filter(grader=review.INSTRUCTOR).exists()
    # A refused revision shows the reviewed page again, its form holding what was typed.
    revise_error = error if reviewed and seen is not None else ""
    if revise_error:
        error = ""
    context = {
        "submission": submission,
        "question": revision.question,
        "revision": revision,  # the one answered, whose title and rubric the page shows
        "step_title": selectors.STEP_TITLES.get(answer.step_key, answer.step_key),
        "follow_up_id": answer.follow_up_id,
        "answer_text": review.submission_graded_text(submission),
        "dispute": submission.disputes.first(),
        "verdicts": VERDICTS,
        "error": error,
        "reviewed": reviewed and not error,
        "points": [{"point": p, "given": given.get(p.id, "")} for p in points],
        "comment": comment,
    }
    found = []
    if context["reviewed"]:
        # Only now, after the instructor's own verdicts are stored, are the graders shown.
        context["columns"], context["rows"] = _side_by_side(submission, points)
        context["review_reason"] = submission.review_reason
        context["self_check_gap"] = review.self_check_gap(submission)
        found = [cell for row in context["rows"] for cell in row["cells"]]
        # The instructor's grade, as the side-by-side just loaded it (with its reviewer).
        labelled = next(c["grade"] for c in context["columns"] if c["grader"] == review.INSTRUCTOR)
        # The page speaks to the instructor who labelled it; anyone else reads whose it is.
        context["labelled_by_you"] = labelled.reviewer_id == request.user.pk
        context["labelled_by"] = _reviewer_name(labelled)
        # The wrong ideas the instructor's grade now states to the candidate, as their
        # feedback shows them, with the points whose full credit would take each away: the
        # blind label form never showed them, so each is ruled on here (wrong_idea_remove).
        contradicts = {m.id: m.contradicts for m in getattr(spec, "misconceptions", ())}
        says = {p.id: p.says for p in points}
        shown = misconceptions_found(
            revision=revision,
            step_key=answer.step_key,
            grade=labelled,
        )
        context["kept_wrong_ideas"] = [
            {**m, "contradicts": [says[p] for p in contradicts.get(m["id"], ()) if p in says]}
            for m in shown
        ]
        # The removal form's record of what the page showed: a removal that arrives after
        # another one took the idea away is told so, not refused as an unknown idea.
        context["kept_ids"] = ",".join(m["id"] for m in shown)
        # Those removed, each with who removed it, to put back.
        context["removed_wrong_ideas"] = _removed_wrong_ideas(labelled, spec, request.user)
        # The form to revise the review, holding its verdicts and note (or, refused, those
        # typed), with the version it revises: one revised since is refused, not overwritten.
        stored = {p.get("id"): p.get("verdict") for p in labelled.points}
        context["saved_at"] = labelled.created_at
        context["revise_error"] = revise_error
        context["revise_version"] = review.review_version(labelled)
        context["revise_points"] = [
            {"point": p, "given": given.get(p.id) if revise_error else stored.get(p.id)}
            for p in points
        ]
        context["revise_comment"] = comment if revise_error else labelled.feedback
    # The diagram graded with the text, laid out beside it: what the graders found in it
    # is marked only once reviewed: nothing while labelling is blind.
    context.update(_submission_diagram(submission, found))
    return render(
        request, "review/submission.html", context, status=422 if error or revise_error else 200
    )


def _removed_wrong_ideas(grade: Grade, spec, user) -> list[dict]:
    """The wrong ideas removed from the instructor's grade, as the review page lists them:
    {"id", "idea", "by"} with "you" or the remover's name."""
    ideas = {m.id: m.idea for m in getattr(spec, "misconceptions", ())}
    removers = {
        u.pk: u.get_username()
        for u in get_user_model().objects.filter(
            pk__in=[r.get("by") for r in grade.wrong_ideas_removed]
        )
    }
    return [
        {
            "id": r.get("id"),
            "idea": ideas.get(r.get("id"), r.get("id")),
            "by": "you" if r.get("by") == user.pk else removers.get(r.get("by"), "an instructor"),
        }
        for r in grade.wrong_ideas_removed
    ]


def _idea_named(submission: Submission, idea_id: str) -> str:
    """A wrong idea of the submission's step as a message names it (`point_name`)."""
    answer = submission.answer
    spec = step_spec(answer.attempt.revision, answer.step_key, answer.follow_up_id)
    ideas = {m.id: m.idea for m in getattr(spec, "misconceptions", ())}
    return review.point_name(ideas.get(idea_id, idea_id))


def _reviewed_submission(submission_id: int) -> Submission:
    return get_object_or_404(
        Submission.objects.select_related("answer__attempt__revision"),
        pk=submission_id,
        answer__attempt__is_preview=False,
    )


# The form field listing the wrong ideas the page showed in the grade, comma-separated.
SHOWN_FIELD = "shown"


@instructor_required
@require_POST
def wrong_idea_remove(request: HttpRequest, submission_id: int) -> HttpResponse:
    """An instructor drops a wrong idea from the instructor's grade: they judge the answer does
    not hold it, so the candidate's feedback no longer states it. Asked after the labels, on
    the page that first shows the graders' findings: the label form is blind to them."""
    submission = _reviewed_submission(submission_id)
    idea_id = request.POST.get("idea", "")
    shown = [i for i in request.POST.get(SHOWN_FIELD, "").split(",") if i]
    try:
        review.wrong_idea_remove(
            submission=submission, idea_id=idea_id, remover=request.user, shown=shown
        )
    except review.WrongIdeaGone as exc:
        messages.info(request, str(exc))
    except FlowError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Removed from the grade: {_idea_named(submission, idea_id)}. The candidate's "
            "feedback no longer states it.",
        )
    return redirect("review:submission", submission_id=submission.pk)


@instructor_required
@require_POST
def wrong_idea_restore(request: HttpRequest, submission_id: int) -> HttpResponse:
    """An instructor puts back a wrong idea removed from the instructor's grade (a removal by
    mistake, or a colleague's they disagree with)."""
    submission = _reviewed_submission(submission_id)
    idea_id = request.POST.get("idea", "")
    try:
        states = review.wrong_idea_restore(submission=submission, idea_id=idea_id)
    except FlowError as exc:
        messages.error(request, str(exc))
    else:
        named = _idea_named(submission, idea_id)
        messages.success(
            request,
            f"Put back: {named}. The candidate's feedback states it again."
            if states
            else f"Put back: {named}. The feedback still does not state it: no grader stands "
            "behind it now, or the review credits in full a point it contradicts.",
        )
    return redirect("review:submission", submission_id=submission.pk)


@instructor_required
@require_safe
def grade_audit(request: HttpRequest, grade_id: int) -> HttpResponse:
    grade = get_object_or_404(
        Grade.objects.select_related("submission__answer__attempt__revision__question", "reviewer"),
        pk=grade_id,
    )
    submission = grade.submission
    if review.awaits_blind_label(submission):
        # The audit shows a grader's verdicts: reading it first would unblind the labels.
        messages.info(request, "Label this answer first: the graders' verdicts come after yours.")
        return redirect("review:submission", submission_id=submission.pk)
    answer = submission.answer
    spec = step_spec(answer.attempt.revision, answer.step_key, answer.follow_up_id)
    says = {p.id: p.says for p in spec.rubric}
    points = [
        {**p, "says": says.get(p.get("id"), ""), "diagram_evidence": diagram_evidence(p)}
        for p in grade.points
    ]
    return render(
        request,
        "review/grade.html",
        {
            "grade": grade,
            "grader_title": GRADER_NAMES.get(grade.grader, grade.grader),
            "submission": submission,
            "question": answer.attempt.revision.question,
            "revision": answer.attempt.revision,
            "step_title": selectors.STEP_TITLES.get(answer.step_key, answer.step_key),
            "answer_text": review.submission_graded_text(submission),
            "points": points,
            # The diagram graded with the text, what this grader found in it marked.
            **_submission_diagram(submission, points),
        },
    )


@instructor_required
@require_safe
def calibration_page(request: HttpRequest, slug: str, step: str = "") -> HttpResponse:
    question = _question(slug)
    if not step:
        return redirect("review:calibration_step", slug=slug, step=CALIBRATED_STEPS[0])
    if step not in CALIBRATED_STEPS:
        raise Http404("No calibration set for that step.")
    try:
        context = calibration_view(question=question, step_key=step)
    except CalibrationError as exc:
        raise Http404(str(exc)) from None
    context.update(
        {
            "question": question,
            "step_key": step,
            "step_title": selectors.STEP_TITLES[step],
            "steps": [(k, selectors.STEP_TITLES[k]) for k in CALIBRATED_STEPS],
            # The one step left out, and why: most of its score is the checker's.
            "napkin_title": selectors.STEP_TITLES["estimate"],
            "checker_share": round(CHECKER_WEIGHT * 100),
            "verdicts": VERDICTS,
            "grader_names": GRADER_NAMES,
        }
    )
    return render(request, "review/calibration.html", context)


@instructor_required
@require_POST
def calibration_load_shipped(request: HttpRequest, slug: str) -> HttpResponse:
    """Load the labelled set shipped with the question into its calibration set (the same
    answer already labelled keeps one label, replaced by the shipped one)."""
    question = _question(slug)
    step = request.POST.get("step", "")
    step_labels = CalibrationLabel.objects.filter(question=question, step_key=step, follow_up_id="")
    before = step_labels.count()
    try:
        entries = shipped_labels(question=question)
        created, updated = labels_import(question=question, entries=entries)
    except CalibrationError as exc:
        messages.error(request, str(exc))
    else:
        # The set spans the question's steps and the page counts one: the message says which
        # figure is which, so "48 new" above "12 labelled answers" is no mismatch.
        steps = len({e.step for e in entries})
        said = (
            f"Loaded the shipped labelled set: {created} new answer{pluralize(created)} and "
            f"{updated} updated, across its {steps} step{pluralize(steps)}."
        )
        if step in CALIBRATED_STEPS:
            after = step_labels.count()
            said += (
                f" {selectors.STEP_TITLES[step]} now has {after} labelled "
                f"answer{pluralize(after)}, {after - before} of them new."
            )
        messages.success(request, said)
    if step in CALIBRATED_STEPS:
        return redirect("review:calibration_step", slug=slug, step=step)
    return redirect("review:calibration", slug=slug)


@instructor_required
@require_safe
def item_stats_page(request: HttpRequest, slug: str) -> HttpResponse:
    question = _question(slug)
    context = question_item_stats(question=question) | {"flag_from": FLAG_FROM}
    return render(request, "review/items.html", context)


@login_required
@require_POST
def submission_dispute(request: HttpRequest, submission_id: int) -> HttpResponse:
    """A candidate disputes the grade of their own submission, with a sentence of why."""
    submission = (
        Submission.objects.owned_by(request.user)
        .select_related("answer__attempt")
        .filter(pk=submission_id)
        .first()
    )
    if submission is None:
        raise Http404("No such submission.")
    answer = submission.answer
    url = step_page.step_url(answer.attempt, answer.step_key, answer.follow_up_id)
    reason = request.POST.get("reason", "")
    try:
        review.grade_dispute(user=request.user, submission=submission, reason=reason)
    except (FlowError, LimitExceeded) as exc:
        # Shown on a page of its own with the reason as typed, so nothing written is lost.
        limited = isinstance(exc, LimitExceeded)
        context = {
            "submission": submission,
            "error": str(exc),
            "reason": reason,
            "back": url,
            "limited": limited,
            # Sending the same form again would be refused again: no form to send it with.
            "final": limited or isinstance(exc, review.DisputeClosed),
            # A self-checked score's request asks for an instructor's grade: worded so.
            "own_check": review.asks_for_a_grade(submission),
        }
        status = 429 if limited else 422
        return render(request, "review/dispute_refused.html", context, status=status)
    messages.success(
        request,
        "Your request was sent: an instructor will grade this answer, and their grade comes first."
        if review.asks_for_a_grade(submission)
        else "Your dispute was sent: an instructor will review this grade and decide it.",
    )
    return redirect(url + "#feedback")
