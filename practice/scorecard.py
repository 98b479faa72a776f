"""The scorecard of one attempt: per-step scores, strongest and weakest rubric points, the
napkin-math verdicts, time spent against the suggested pace, every grader, concepts to review."""

from __future__ import annotations

import re
from collections import defaultdict

from grading.types import VERDICT_CREDIT
from planner.engine import evaluate_expression
from practice.diagram import diagram_evidence, diagram_picture, diagram_text
from practice.misconceptions import misconceptions_found
from practice.models import Attempt, StepAnswer
from practice.scoring import (
    ScoredSubmission,
    attempt_scored_submissions,
    best_per_part,
    mean_score,
    primary_grade,
    score_label,
    step_scores,
    step_verdict_labels,
)
from practice.selectors import attempt_number
from practice.services import value_as_displayed
from practice.step_page import step_url
from questionbank import STEP_KEYS, StepSpec
from questions import selectors

# The SLO card and the napkin checker are blended into a step's score with its main grade
# (`scoring.submission_score`): until the answer is rated they score nothing on their own.
WAITING = "Counts in the step's score once your answer is rated."


def scorecard(attempt: Attempt) -> dict:
    """Per-step scores, strongest and weakest points, napkin verdicts, pace, graders, concepts."""
    revision = attempt.revision
    best = best_per_part(attempt_scored_submissions(attempt.pk))
    scores = step_scores(best)
    seconds_by_step: dict[str, int] = defaultdict(int)
    for answer in StepAnswer.objects.filter(attempt=attempt).only("step_key", "seconds_spent"):
        seconds_by_step[answer.step_key] += answer.seconds_spent
    rows, all_points, graders, checks, wrong_ideas = [], [], [], [], []
    for number, key in enumerate(STEP_KEYS, start=1):
        spec = revision.question_spec.step(key)
        entries = [entry for (step, _), entry in best.items() if step == key]
        rubric_specs = {p.id: p for p in spec.rubric}
        for fu in spec.follow_ups:
            rubric_specs.update({p.id: p for p in fu.rubric})
        for e in entries:
            main = primary_grade(e.grades)
            for g in e.grades:
                if g.grader == "rubric":
                    continue  # the keyword matcher points at sentences; it is not a grade
                graders.append(
                    {
                        "step": selectors.STEP_TITLES[key],
                        "part": e.part[1] or "main answer",
                        "grader": g.grader,
                        "model": g.model,
                        "score": g.score,
                        "note": g.fallback_reason or ("" if e.score is not None else WAITING),
                    }
                )
                if g.grader == "checker":
                    checks = [{**p, "working": shows_working(p)} for p in g.points]
            if main and not e.part[1]:
                wrong_ideas += misconceptions_found(revision=revision, step_key=key, grade=main)
            if main:
                for p in main.points:
                    rs = rubric_specs.get(p.get("id"))
                    all_points.append(
                        {
                            "id": p.get("id"),
                            "verdict": p.get("verdict"),
                            "says": rs.says if rs else p.get("id"),
                            "weight": rs.weight if rs else 1,
                            "concepts": rs.concepts if rs else (),
                            "step": key,
                        }
                    )
        rows.append(
            {
                "number": number,
                "key": key,
                "title": selectors.STEP_TITLES[key],
                "score": scores[key],
                "label": step_verdict_labels(best).get(key, ""),
                # Submitted and graded by no model: not scored until the candidate rates it.
                # The matcher's pointers (the "rubric" grade) are what the self-check needs.
                "unrated": [
                    e.part[1] or "main answer"
                    for e in entries
                    if e.score is None and any(g.grader == "rubric" for g in e.grades)
                ],
                # Still queued or being graded: nothing to rate yet.
                "grading": [
                    e.part[1] or "main answer"
                    for e in entries
                    if e.score is None and not any(g.grader == "rubric" for g in e.grades)
                ],
                "self_checks": self_checks_beside(entries),
                "parts": len(entries),
                "part_scores": part_scores(spec, entries),
                "minutes_spent": round(seconds_by_step[key] / 60, 1),
                "minutes_suggested": spec.minutes,
                "url": step_url(attempt, key),
                **_diagram_of(entries),
            }
        )
    hits = sorted([p for p in all_points if p["verdict"] == "hit"], key=lambda p: -p["weight"])
    misses = sorted(
        [p for p in all_points if p["verdict"] != "hit"],
        key=lambda p: (VERDICT_CREDIT.get(p["verdict"], 0), -p["weight"]),
    )
    review = []
    for p in misses:
        for slug in p["concepts"]:
            if slug not in review:
                review.append(slug)
    concepts = selectors.concepts_by_slug(review)
    return {
        "attempt": attempt,
        "attempt_number": attempt_number(attempt),
        "revision": revision,
        "rows": rows,
        "overall": mean_score(scores.values()),
        # The overall is the mean of the steps that have a score: a step submitted and not
        # scored yet (unrated, or still being graded) is left out of it, and said to be.
        "scored_steps": sum(score is not None for score in scores.values()),
        "strongest": hits[:5],
        "weakest": misses[:5],
        "checks": checks,
        # The wrong ideas still stated in each step's best answer, in step order.
        "misconceptions": wrong_ideas,
        "graders": graders,
        "unrated": any(r["unrated"] for r in rows),
        "grading": any(r["grading"] for r in rows),
        "review_concepts": [concepts[s] for s in review if s in concepts][:6],
    }


# A figure as typed: a number, then at most a unit ("9.5", "1,000", "21.54 ms", "9.5 GB/s").
_FIGURE = re.compile(
    r"\s*[+-]?(\d[\d,_]*\.?\d*|\.\d+)(e[+-]?\d+)?\s*(?P<unit>[^\d\s].*?)?\s*", re.I
)


def shows_working(check: dict) -> bool:
    """Whether a napkin verdict's "answer = value" tells more than the answer: it does for an
    expression or a name (`n_gpu` = 10), a conversion ("9500 MB" = 9.5 GB) or a multiplier
    ("8k" = 8000); not for the figure itself ("9.5" = 9.5), where it reads as a sum of one
    term."""
    answer, value = str(check.get("answer") or ""), str(check.get("value") or "")
    if not answer or not value:
        return False
    figure = _FIGURE.fullmatch(answer)
    if figure is None:
        return True
    read = evaluate_expression(answer.replace(",", "").replace("_", ""))
    if read.error is not None or read.value is None or read.name is not None:
        return True
    if (figure["unit"] or "") != (read.unit or ""):
        return True  # a suffix read as a multiplier ("8k"), not as a unit
    return value_as_displayed(read.value, read.unit or "") != value


def part_scores(spec: StepSpec, entries: list[ScoredSubmission]) -> list[dict]:
    """The scored parts a step's score is the mean of (`scoring.step_scores`), main answer
    first, then the follow-ups in the question's order: {label, score}."""
    order = {fu.id: n for n, fu in enumerate(spec.follow_ups, start=1)}
    # A feature's own follow-ups (a mock's live questions) are no part of the step's score.
    parts = [e for e in entries if e.score is not None and (not e.part[1] or e.part[1] in order)]
    parts.sort(key=lambda e: order.get(e.part[1], 0))
    return [
        {
            "label": f"follow-up {order[e.part[1]]}" if e.part[1] else "main answer",
            "score": e.score,
            "grade_label": score_label(e.part[0], e.grades),
        }
        for e in parts
    ]


def self_checks_beside(entries: list[ScoredSubmission]) -> list[float]:
    """The candidate's self-check scores of parts a model or an instructor has graded since:
    kept in view beside the grade that took over."""
    beside = []
    for e in entries:
        main = primary_grade(e.grades)
        own = next((g for g in e.grades if g.grader == "self"), None)
        if own is not None and main is not None and main.grader != "self":
            beside.append(own.score)
    return beside


def _diagram_of(entries: list[ScoredSubmission]) -> dict:
    """The diagram of a step's main answer as scored (its best submission), laid out, with
    the nodes and edges the grade that counts found in it: {diagram, diagram_evidence}."""
    main = next((e for e in entries if not e.part[1]), None)
    text = diagram_text(getattr(main.item, "fields", None)) if main else ""
    if not text.strip():
        return {"diagram": None, "diagram_evidence": []}
    grade = primary_grade(main.grades)
    if grade is None or grade.grader == "self":
        # A self-check records ratings, not evidence: the keyword matcher's pointers are.
        grade = next((g for g in main.grades if g.grader == "rubric"), None)
    found = [e for p in (grade.points if grade else []) for e in diagram_evidence(p)]
    found = list(dict.fromkeys(found))
    return {"diagram": diagram_picture(text, evidence=found), "diagram_evidence": found}
