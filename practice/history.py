"""A candidate's history, a page at a time: attempts with their per-step scores, and over
their recent attempts a trend line per step and the rubric points they miss most."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from practice.diagram import LAYOUT_TIMEOUT_S, diagram_picture, diagram_text
from practice.misconceptions import held_repeatedly
from practice.models import Attempt, Submission
from practice.scoring import (
    ScoredSubmission,
    best_per_part,
    mean_score,
    primary_grade,
    step_scores,
    step_verdict_labels,
)
from practice.step_page import step_url
from questionbank import STEP_KEYS
from questions import selectors
from questions.models import QuestionRevision

# The fields of a revision its rows do not show (read per revision, `_revisions`).
REVISION_TEXT_FIELDS = ("source_text", "rendered", "spec", "scenario_markdown")
# How long one History page may spend laying out diagrams not drawn before (seconds).
LAYOUT_BUDGET_S = 3.0


def candidate_history(user: User, *, page: str | int | None = 1) -> dict:
    """One page of a candidate's attempts (newest first) with their per-step scores; the
    trend per step and the most-missed points over their last HISTORY_TREND_WINDOW attempts.

    Bounded whatever the candidate's history: HISTORY_PAGE_SIZE rows a page, and a constant
    number of queries (a count, the page, the window, their submissions and grades).
    """
    attempts = (
        # An instructor's preview attempts count nowhere.
        Attempt.objects.filter(user=user, is_preview=False)
        .select_related("revision__question", "mock")
        # A row names its question; the revision's text and parsed front matter (some 170 KB
        # a row) are read once per revision the page shows (`_revisions`), not once per row.
        .defer(*(f"revision__{name}" for name in REVISION_TEXT_FIELDS))
        # Numbered per question in the order started (as selectors.attempt_number numbers one).
        .annotate(
            number=Window(RowNumber(), partition_by=F("revision__question_id"), order_by="pk")
        )
        .order_by("-started_at", "-pk")
    )
    page_obj = Paginator(attempts, settings.HISTORY_PAGE_SIZE).get_page(page)
    page_attempts = list(page_obj.object_list)
    window = list(attempts[: settings.HISTORY_TREND_WINDOW])
    window_ids = {a.pk for a in window}
    submissions = (
        Submission.objects.filter(answer__attempt_id__in=window_ids | {a.pk for a in page_attempts})
        .select_related("answer")
        .prefetch_related("grades")
    )
    # A mock interview still running shows nothing of its grading (its candidate sees no
    # verdicts until the end): listed, but out of the scores, the trend and the misses.
    running = {
        a.pk for a in [*window, *page_attempts] if hasattr(a, "mock") and a.mock.ended_at is None
    }
    per_attempt: dict[int, list[ScoredSubmission]] = defaultdict(list)
    missed: dict[str, dict] = {}
    specs = _revisions([*window, *page_attempts])
    revisions = {a.pk: specs[a.revision_id] for a in window}
    wrong_ideas = []
    # Each step's latest submitted diagram per attempt: (submission number, Mermaid text).
    diagrams: dict[tuple[int, str], tuple[int, str]] = {}
    for sub in submissions:
        if sub.answer.attempt_id in running:
            continue
        text = diagram_text(sub.fields)
        where = (sub.answer.attempt_id, sub.answer.step_key)
        if (
            text.strip()
            and not sub.answer.follow_up_id
            and sub.number > diagrams.get(where, (0,))[0]
        ):
            diagrams[where] = (sub.number, text)
        per_attempt[sub.answer.attempt_id].append(ScoredSubmission.of(sub, item=sub))
    # Misses and wrong ideas as each attempt's scores read them: from each part's best
    # submission, so a point missed and then hit in a resubmission is not "missed", and a
    # point missed in three resubmissions of one answer is missed once in that attempt.
    for attempt_id in [a.pk for a in window if a.pk not in running]:
        for scored_sub in best_per_part(per_attempt.get(attempt_id, [])).values():
            sub = scored_sub.item
            main = primary_grade(scored_sub.grades)
            if main is not None and main.misconceptions:
                wrong_ideas.append((attempt_id, revisions[attempt_id], sub.answer.step_key, main))
            for p in main.points if main else []:
                if p.get("verdict") == "miss":
                    entry = missed.setdefault(
                        p["id"], {"id": p["id"], "count": 0, "step": sub.answer.step_key}
                    )
                    entry["count"] += 1

    def row(attempt: Attempt) -> dict:
        best = best_per_part(per_attempt.get(attempt.pk, []))
        steps = step_scores(best)
        labels = step_verdict_labels(best)
        # Graded by no model and not rated by the candidate yet: not scored, and said so.
        unrated = {
            step
            for (step, _), entry in best.items()
            if entry.score is None and any(g.grader == "rubric" for g in entry.grades)
        }
        return {
            "attempt": attempt,
            "number": attempt.number,
            "steps": [steps[k] for k in STEP_KEYS],
            "cells": [
                {
                    "score": steps[k],
                    "label": labels[k],
                    "unrated_url": step_url(attempt, k) + "#self-check" if k in unrated else "",
                }
                for k in STEP_KEYS
            ],
            "overall": mean_score(steps.values()),
            # The overall is the mean of the scored steps alone: the page says how many.
            "scored_steps": sum(score is not None for score in steps.values()),
            # A mock interview is an attempt with a clock: listed and trended like the rest.
            "mock": attempt.mock if hasattr(attempt, "mock") else None,
        }

    oldest_first = [row(a) for a in reversed(window)]
    trends = []
    for i, key in enumerate(STEP_KEYS):
        series = [r["steps"][i] for r in oldest_first if r["steps"][i] is not None]
        trends.append(
            {
                "key": key,
                "title": selectors.STEP_TITLES[key],
                "series": series,
                "points": _sparkline(series) if len(series) > 1 else "",
                # One score is a point, not a line: drawn flat across the width it would read
                # as a steady trend.
                "dot": _dot(series[0]) if len(series) == 1 else None,
                # The line's last point is the newest attempt's only once that step is scored:
                # until then the page says the figure is the latest scored, from before.
                "newest_scored": bool(oldest_first) and oldest_first[-1]["steps"][i] is not None,
            }
        )
    says = _rubric_says(specs.values())
    top_missed = sorted(missed.values(), key=lambda m: -m["count"])[:8]
    for m in top_missed:
        m["says"] = says.get(m["id"], m["id"])
    rows = [row(a) for a in page_attempts]
    # The page's diagrams laid out: most are remembered by their text (practice.diagram), and
    # those that are not share one layout budget, so a page of twenty new diagrams cannot hold
    # the request for twenty layouts' time limits; past it, a diagram links to its scorecard.
    deadline = time.monotonic() + LAYOUT_BUDGET_S
    for r in rows:
        r["diagrams"] = []
        for k in STEP_KEYS:
            if (key := (r["attempt"].pk, k)) not in diagrams:
                continue
            left = min(LAYOUT_TIMEOUT_S, deadline - time.monotonic())
            r["diagrams"].append(
                {
                    "title": selectors.STEP_TITLES[k],
                    "picture": diagram_picture(diagrams[key][1], timeout_s=left)
                    if left > 0.05
                    else None,
                }
            )
    return {
        "rows": rows,
        "any_diagrams": any(r["diagrams"] for r in rows),
        "page": page_obj,
        "window": len(window),
        # The trend spans questions: the page says how many, since a step's scores at
        # different questions are not one question practised again.
        "window_questions": len({a.revision.question_id for a in window}),
        "trends": trends,
        "missed": top_missed,
        # Wrong ideas stated in more than one of those attempts.
        "held_misconceptions": held_repeatedly(wrong_ideas),
        "step_titles": [selectors.STEP_TITLES[k] for k in STEP_KEYS],
    }


def _revisions(attempts: list[Attempt]) -> dict[int, QuestionRevision]:
    """The attempts' revisions with what their parsed question is built from, each read once
    (one query), whatever the number of attempts on each."""
    ids = {a.revision_id for a in attempts}
    return {
        r.pk: r
        for r in QuestionRevision.objects.filter(pk__in=ids).defer("source_text", "rendered")
    }


def _rubric_says(revisions: Iterable[QuestionRevision]) -> dict[str, str]:
    says: dict[str, str] = {}
    for revision in revisions:
        for step in revision.question_spec.steps:
            for part in (step, *step.follow_ups):
                for p in part.rubric:
                    says[p.id] = p.says
    return says


def _sparkline(series: list[float], width: int = 120, height: int = 28) -> str:
    """SVG polyline points for scores in [0, 1] (drawn server-side; no chart script)."""
    if not series:
        return ""
    if len(series) == 1:
        return ""  # a point, not a line (`_dot`)
    step = width / (len(series) - 1)
    return " ".join(f"{i * step:.1f},{height - s * height:.1f}" for i, s in enumerate(series))


def _dot(score: float, height: int = 28, radius: int = 3) -> dict:
    """Where a step scored once is drawn in the sparkline's box: a point at the left, kept
    inside the box, with its figure beside it."""
    cy = min(height - radius, max(radius, height - score * height))
    # The figure's baseline stays where an 11-unit label fits in the box.
    return {"cx": radius + 1, "cy": f"{cy:.1f}", "ty": f"{min(height - 6, max(8, cy)):.1f}"}
