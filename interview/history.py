"""A candidate's history: every attempt with its per-step scores, a trend line per step, and
the rubric points they miss most."""

from __future__ import annotations

from collections import defaultdict

from django.contrib.auth.models import User

from interview import selectors
from interview.models import Attempt, Submission
from interview.scoring import (
    ScoredSubmission,
    best_per_part,
    mean_score,
    primary_grade,
    step_scores,
    submission_score,
)
from questionbank import STEP_KEYS


def candidate_history(user: User) -> dict:
    """Every attempt with its per-step scores; trends per step; the most-missed points."""
    attempts = list(
        Attempt.objects.filter(user=user)
        .select_related("revision__question")
        .order_by("started_at")
    )
    submissions = (
        Submission.objects.filter(answer__attempt__user=user)
        .select_related("answer")
        .prefetch_related("grades")
    )
    per_attempt: dict[int, list[ScoredSubmission]] = defaultdict(list)
    missed: dict[str, dict] = {}
    for sub in submissions:
        grades = list(sub.grades.all())
        per_attempt[sub.answer.attempt_id].append(
            ScoredSubmission(
                part=(sub.answer.step_key, sub.answer.follow_up_id),
                score=submission_score(sub.answer.step_key, grades),
                grades=grades,
            )
        )
        main = primary_grade(grades)
        for p in main.points if main else []:
            if p.get("verdict") == "miss":
                entry = missed.setdefault(
                    p["id"], {"id": p["id"], "count": 0, "step": sub.answer.step_key}
                )
                entry["count"] += 1
    numbers = selectors.attempt_numbers(attempts)
    rows = []
    for attempt in attempts:
        steps = step_scores(best_per_part(per_attempt.get(attempt.pk, [])))
        rows.append(
            {
                "attempt": attempt,
                "number": numbers[attempt.pk],
                "steps": [steps[k] for k in STEP_KEYS],
                "overall": mean_score(steps.values()),
            }
        )
    trends = []
    for i, key in enumerate(STEP_KEYS):
        series = [r["steps"][i] for r in rows if r["steps"][i] is not None]
        trends.append(
            {
                "key": key,
                "title": selectors.STEP_TITLES[key],
                "series": series,
                "points": _sparkline(series),
            }
        )
    says = _rubric_says(attempts)
    top_missed = sorted(missed.values(), key=lambda m: -m["count"])[:8]
    for m in top_missed:
        m["says"] = says.get(m["id"], m["id"])
    return {
        "rows": list(reversed(rows)),
        "trends": trends,
        "missed": top_missed,
        "step_titles": [selectors.STEP_TITLES[k] for k in STEP_KEYS],
    }


def _rubric_says(attempts: list[Attempt]) -> dict[str, str]:
    says: dict[str, str] = {}
    for revision in {a.revision for a in attempts}:
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
        series = series * 2
    step = width / (len(series) - 1)
    return " ".join(f"{i * step:.1f},{height - s * height:.1f}" for i, s in enumerate(series))
