"""The feedback panel of a submission: grading status, per-point verdicts with the
candidate's own words highlighted as evidence, the reference answer, and earlier versions.

Where no model graded, the panel is the candidate's self-check (practice.self_check): no
score until they have rated every point, and the keyword matcher only points at sentences."""

from __future__ import annotations

import html
from collections.abc import Sequence
from urllib.parse import urlencode

from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from grading.text import quote_span
from grading.types import comment_without_point, injection_found_in_text, is_injection_warning
from practice import extensions
from practice.diagram import diagram_evidence, diagram_picture, diagram_text
from practice.misconceptions import misconceptions_found
from practice.models import Attempt, StepAnswer, Submission
from practice.scoring import (
    grade_label,
    primary_grade,
    score_label,
    score_makeup,
    submission_score,
)
from practice.self_check import self_check_view
from practice.services import step_spec
from practice.slo import figure_readings, unread_figures
from questionbank import Brief
from questions import selectors

# How long a submission may wait in the queue or in grading before the panel says it is late:
# a grading takes seconds, or up to the model's timeout and one retry when the server hangs;
# past this the worker is likely busy with a backlog or not running at all.
LATE_AFTER_S = 150


def panel_status(status: str, changed_at, *, now=None) -> str:
    """What a waiting panel shows, as its poll names it: the grade status, with "-late" once
    the submission has waited longer than LATE_AFTER_S in it."""
    waiting = (Submission.GradeStatus.QUEUED, Submission.GradeStatus.GRADING)
    if status in waiting and changed_at is not None:
        if ((now or timezone.now()) - changed_at).total_seconds() > LATE_AFTER_S:
            return f"{status}-late"
    return status


def feedback_heading(submission: Submission, count: int) -> str:
    """The feedback panel's heading (and the first words practice.js says of it): plain
    "Feedback" while the step has one submission, else which of them it is ("Feedback on
    submission 2 of 3"), since "submission 1" alone reads as if more were to come."""
    if count <= 1:
        return "Feedback"
    return f"Feedback on submission {submission.number} of {max(count, submission.number)}"


def feedback_context(
    *, attempt: Attempt, answer: StepAnswer, submission: Submission | None
) -> dict:
    """The feedback panel for a submission: status, per-point verdicts, reference, history."""
    if submission is None:
        return {"submission": None}
    feedback_url = reverse(
        "submission_feedback", kwargs={"attempt_id": attempt.pk, "submission_id": submission.pk}
    )
    if extensions.feedback_withheld(attempt.pk):
        return {
            "submission": submission,
            "graded": False,
            "withheld": True,
            "feedback_heading": feedback_heading(submission, answer.submissions.count()),
        }
    planner_url = prefilled_planner_url(attempt, answer)
    if submission.grade_status in (Submission.GradeStatus.QUEUED, Submission.GradeStatus.GRADING):
        # Polled every second until graded: answer with the status alone, cheaply.
        shown = panel_status(submission.grade_status, submission.status_changed_at)
        return {
            "submission": submission,
            "graded": False,
            "feedback_url": feedback_url,
            "planner_url": planner_url,
            "shown": shown,
            "late": shown.endswith("-late"),
            "feedback_heading": feedback_heading(submission, answer.submissions.count()),
        }
    # One query for every version of this step with its grades: the history needs them all.
    versions = list(answer.submissions.prefetch_related("grades").order_by("number"))
    current = next((s for s in versions if s.pk == submission.pk), None)
    grades = list(current.grades.all()) if current else list(submission.grades.all())
    main = primary_grade(grades)
    spec = step_spec(attempt.revision, answer.step_key, answer.follow_up_id)
    rendered = attempt.revision.html(answer.step_key, answer.follow_up_id)
    points_by_id = {p.id: p for p in spec.rubric}
    concepts = selectors.concepts_by_slug({c for p in spec.rubric for c in p.concepts})
    done = submission.grade_status in (Submission.GradeStatus.DONE, Submission.GradeStatus.OFFLINE)
    points = []
    # The per-point verdicts of a model or an instructor; a self-check shows its own ratings.
    if main is not None and main.grader != "self":
        for verdict in main.points:
            rubric = points_by_id.get(verdict.get("id"))
            says = rubric.says if rubric else ""
            # The panel shows the point above its comment: not restated in it.
            comment = comment_without_point(verdict.get("comment") or "", says)
            points.append(
                {
                    **verdict,
                    "comment": comment,
                    "says": says,
                    # The node labels or edges a grader found in the diagram ("gateway -> router").
                    "diagram_evidence": diagram_evidence(verdict),
                    "concepts": [concepts[c] for c in rubric.concepts if c in concepts]
                    if rubric
                    else [],
                }
            )
    by = {g.grader: g for g in grades}
    # Shown first: the wrong ideas the answer states (none for a follow-up: they are per step).
    wrong_ideas = (
        []
        if answer.follow_up_id or main is None or main.grader == "self"
        else misconceptions_found(revision=attempt.revision, step_key=answer.step_key, grade=main)
    )
    self_check = self_check_view(attempt=attempt, submission=submission, grades=grades)
    if main is None or main.grader == "self":
        # What the matcher points at, and the possible wrong ideas not dismissed.
        quotes, wrong = self_check.get("pointers", []), self_check.get("wrong_evidence", [])
        in_diagram = [e for p in self_check.get("points", []) for e in p["diagram_pointer"]]
    else:
        quotes = [
            p.get("evidence", "")
            for p in points
            if p.get("verdict") in ("hit", "partial") and not p["diagram_evidence"]
        ]
        wrong = [m["evidence"] for m in wrong_ideas]
        in_diagram = [
            e
            for p in points
            if p.get("verdict") in ("hit", "partial")
            for e in p["diagram_evidence"]
        ]
    history = []
    for sub in versions:
        history.append(
            {
                "number": sub.number,
                "submitted_at": sub.submitted_at,
                "status": sub.get_grade_status_display(),
                "score": submission_score(answer.step_key, list(sub.grades.all())),
                "label": score_label(answer.step_key, list(sub.grades.all())),
                "current": sub.pk == submission.pk,
            }
        )
    # A part scores its best submission (practice.scoring), so that is the figure to show.
    scored = [h["score"] for h in history if h["score"] is not None]
    return {
        "submission": submission,
        "feedback_heading": feedback_heading(submission, len(versions)),
        "graded": done and main is not None,
        "done": done,
        "grade": main,
        "grade_label": grade_label(main),
        "self_check": self_check,
        # Why no model graded (the matcher's grade keeps the reason), for an offline submission.
        "offline_reason": by["rubric"].fallback_reason if "rubric" in by else "",
        "grades": by,
        "points": points,
        "score": submission_score(answer.step_key, grades),
        # What the score blends, where it is more than the grade its label names.
        "score_makeup": score_makeup(answer.step_key, grades),
        "best_score": max(scored) if scored else None,
        "misconceptions": wrong_ideas,
        "highlighted": highlight_evidence(submission.text, quotes, wrong=wrong),
        "reference_html": rendered["reference"] if done else "",
        # The diagram submitted, laid out, and the step's reference diagram beside the
        # reference answer (practice.diagram).
        "diagram_picture": _picture(diagram_text(submission.fields), evidence=in_diagram),
        "diagram_evidence": list(dict.fromkeys(in_diagram)),
        "reference_diagram": _picture(getattr(spec, "reference_diagram", "") or "")
        if done
        else None,
        "history": history,
        # Both graders' scores and the gap, when it is over the threshold (stored at grading).
        "disagreement": submission.review_reason or "",
        # Text addressed to the grader, as the app's own reading found it; or only the model's
        # flag, which the app could not confirm (a small model flags honest answers at times).
        "injection_suspected": main is not None
        and main.grader == "llm"
        and injection_found_in_text(main.warnings or ()),
        "injection_model_only": main is not None
        and main.grader == "llm"
        and any(is_injection_warning(w) for w in main.warnings or ())
        and not injection_found_in_text(main.warnings or ()),
        "slo_review": _slo_review(
            by["slo"].slo_review, submission.fields, attempt.revision.question_spec.brief
        )
        if "slo" in by and by["slo"].slo_review
        else None,
        "checks": by["checker"].points if "checker" in by else [],
        "feedback_url": feedback_url,
        "planner_url": planner_url,
        **review_notice(submission, main, graded=done and main is not None),
    }


def _slo_review(stored: dict, card: dict, brief: Brief) -> dict:
    """The SLO card's stored review, with the figures it could not read as numbers listed as
    unread (what was typed, and why) rather than among the missed, and a figure read otherwise
    than the brief's value followed by how it was read ("Context length: 8k reads as 8,000;
    ... write 8Ki."), pinned or not."""
    unread = unread_figures(card)
    labels = {u["label"] for u in unread}
    missed = [label for label in stored.get("missed", []) if label not in labels]
    readings = figure_readings(card, brief)
    pinned = [
        f"{label}: {readings[label]}" if label in readings else label
        for label in stored.get("pinned", [])
    ]
    differs = [
        {**d, "brief": f"{d['brief']}. {readings[d['label']]}"} if d.get("label") in readings else d
        for d in stored.get("differs", [])
    ]
    return {**stored, "pinned": pinned, "differs": differs, "missed": missed, "unread": unread}


def _picture(text: str, *, evidence: Sequence[str] = ()):
    """A diagram laid out for the panel, the nodes and edges in `evidence` marked; None when
    there is none."""
    return diagram_picture(text, evidence=evidence) if text.strip() else None


def prefilled_planner_url(attempt: Attempt, answer: StepAnswer) -> str:
    """The capacity planner prefilled from the question's brief, for a submitted napkin-math
    answer (the caller has checked that feedback is not withheld): the planner derives the
    very figures the step asks for, so it is offered only once they are revealed anyway."""
    if answer.step_key != "estimate" or answer.follow_up_id:
        return ""
    try:
        url = reverse("planner:capacity")
    except NoReverseMatch:  # a site without the planner
        return ""
    return f"{url}?{urlencode({'question': attempt.revision.question.slug})}"


def review_notice(submission: Submission, main, *, graded: bool) -> dict:
    """What the panel says about review: "reviewed by an instructor" once one has; before
    that, what features add to a graded submission (e.g. the form to dispute the grade)."""
    reviewed = main is not None and main.grader == "instructor"
    return {
        "reviewed_by_instructor": reviewed,
        # An instructor's grade carries their word to the candidate, if they wrote one.
        "review_comment": main.feedback if reviewed else "",
        "feedback_fragments": (
            [] if reviewed else extensions.feedback_fragments(submission, graded=graded)
        ),
    }


def highlight_evidence(text: str, quotes: list[str], *, wrong: Sequence[str] = ()) -> SafeString:
    """The candidate's own text, escaped, with each evidence quote wrapped in <mark> and each
    sentence stating a misconception (`wrong`) in <mark class="mark-wrong">.

    Quotes are found by the graders' own matcher (case and runs of whitespace ignored); where
    spans overlap, the earlier one wins, and a wrong idea wins a tie.
    """
    # At the same start a wrong idea wins: that sentence is what the candidate must see.
    spans = sorted(
        (
            (*span, kind)
            for kind, group in (("", quotes), ("wrong", wrong))
            for quote in group
            if (span := quote_span(text, quote)) is not None
        ),
        key=lambda s: (s[0], s[2] != "wrong"),
    )
    out, cursor = [], 0
    for start, end, kind in spans:
        if start < cursor:
            start = cursor
        if start >= end:
            continue
        out.append(html.escape(text[cursor:start]))
        opening = '<mark class="mark-wrong">' if kind else "<mark>"
        out.append(f"{opening}{html.escape(text[start:end])}</mark>")
        cursor = end
    out.append(html.escape(text[cursor:]))
    return mark_safe("".join(out))  # every piece above is escaped
