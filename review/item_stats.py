"""Item statistics of a question over its cohort: what candidates get right and wrong.

Per rubric point of each step: how many candidates hit it, and its discrimination (Pearson's
correlation between the point's credit and the rest of the step's score, so a point that
strong candidates hit and weak ones miss scores high; near zero or negative, the point does
not tell them apart). A point hit by more than 95% or fewer than 5% is flagged: it says
little about a candidate. Per napkin-math quantity: the most common wrong answers and which
mistake hints fired.

One answer per candidate and step: the candidate's best submission of the step's main answer
across all their attempts, graded by the one verdict order (`practice.scoring`: an
instructor's review, else the model, else the candidate's self-check), and each step says how
many of its answers each of those graded. The offline keyword matcher's verdicts never count:
an answer it alone has read waits for its candidate's self-check, and is only counted as
waiting. Preview attempts (instructors trying a question) never count.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from grading.types import VERDICT_CREDIT
from practice.models import Submission
from practice.scoring import (
    GRADE_LABELS,
    ScoredSubmission,
    best_per_part,
    primary_grade,
    submission_score,
)
from questionbank import STEP_KEYS, RubricPoint
from questions.models import Question, QuestionRevision
from questions.selectors import STEP_TITLES

EASY_ABOVE = 0.95
HARD_BELOW = 0.05
# Below this many candidates every point is hit by all or by none of them: no flag says so.
FLAG_FROM = 5
TOP_WRONG = 5


@dataclass
class PointStats:
    id: str
    says: str
    n: int
    hit_rate: float | None
    partial_rate: float | None
    discrimination: float | None
    flag: str = ""


@dataclass
class QuantityStats:
    id: str
    label: str
    n: int
    correct_rate: float | None
    wrong_answers: list[tuple[str, int]] = field(default_factory=list)
    hints: list[tuple[str, str, int]] = field(default_factory=list)  # (verdict, hint, count)


def _correlation(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r, or None where it is undefined (fewer than two answers, or either side the
    same for everyone)."""
    if len(xs) < 2:
        return None
    try:
        return round(statistics.correlation(xs, ys), 4)
    except statistics.StatisticsError:
        return None


def point_statistics(
    points: Sequence[RubricPoint],
    responses: Sequence[Mapping[str, str]],
    asked: Sequence[Collection[str]] | None = None,
) -> list[PointStats]:
    """Statistics of each rubric point over responses ({point id: verdict}, one per candidate;
    a point without a verdict is a miss). Credit: hit 1, partial 0.5, miss 0; the rest score
    is the weighted share of credit on the step's other points.

    `asked`, when given, holds per response the point ids of the rubric it was graded against
    (its attempt's revision): a point counts only over the responses that were asked it, so a
    point added in a later revision is not a miss of every answer made before it existed."""
    if asked is None:
        asked = [{p.id for p in points}] * len(responses)
    credit = [
        {p.id: VERDICT_CREDIT.get(r.get(p.id, "miss"), 0.0) for p in points} for r in responses
    ]
    out = []
    for point in points:
        mine_rows = [i for i, ids in enumerate(asked) if point.id in ids]
        n = len(mine_rows)
        mine, rest = [], []
        for i in mine_rows:
            others = [q for q in points if q.id != point.id and q.id in asked[i]]
            other_weight = sum(q.weight for q in others)
            mine.append(credit[i][point.id])
            rest.append(
                sum(q.weight * credit[i][q.id] for q in others) / other_weight
                if other_weight
                else 0.0
            )
        hits = sum(responses[i].get(point.id) == "hit" for i in mine_rows)
        partials = sum(responses[i].get(point.id) == "partial" for i in mine_rows)
        hit_rate = round(hits / n, 4) if n else None
        flag = ""
        if n < FLAG_FROM:
            pass
        elif hit_rate is not None and hit_rate > EASY_ABOVE:
            flag = f"hit by more than {EASY_ABOVE:.0%}: it tells candidates apart little"
        elif hit_rate is not None and hit_rate < HARD_BELOW:
            flag = f"hit by fewer than {HARD_BELOW:.0%}: too hard, or unclear to candidates"
        out.append(
            PointStats(
                id=point.id,
                says=point.says,
                n=n,
                hit_rate=hit_rate,
                partial_rate=round(partials / n, 4) if n else None,
                discrimination=_correlation(mine, rest),
                flag=flag,
            )
        )
    return out


def _best_submissions(
    question: Question,
) -> tuple[dict[str, list[ScoredSubmission]], Counter[str]]:
    """Each candidate's best scored submission of each step's main answer across their
    non-preview attempts, by step (a candidate who answers twice is one candidate, not two);
    and per step how many candidates have only answers the matcher alone graded (they wait
    for the candidate's self-check)."""
    rows = (
        Submission.objects.filter(
            answer__attempt__revision__question=question,
            answer__attempt__is_preview=False,
            answer__follow_up_id="",
        )
        .select_related("answer__attempt")
        .prefetch_related("grades")
    )
    per_candidate: dict[int, list[ScoredSubmission]] = defaultdict(list)
    for sub in rows:
        grades = list(sub.grades.all())
        per_candidate[sub.answer.attempt.user_id].append(
            ScoredSubmission(
                part=(sub.answer.step_key, ""),
                score=submission_score(sub.answer.step_key, grades),
                grades=grades,
                item=sub,
            )
        )
    by_step: dict[str, list[ScoredSubmission]] = defaultdict(list)
    waiting: Counter[str] = Counter()
    for entries in per_candidate.values():
        matcher_read = {e.part for e in entries if any(g.grader == "rubric" for g in e.grades)}
        for part, best in best_per_part(entries).items():
            if best.score is not None:
                by_step[part[0]].append(best)
            elif part in matcher_read:
                waiting[part[0]] += 1
    return by_step, waiting


def graded_by(entries: Sequence[ScoredSubmission]) -> list[tuple[str, int]]:
    """How many of the answers each grader of the verdict order scored, in that order, as
    (label, count) with the labels every page uses ("Self-checked"); graders with none left
    out."""
    counts = Counter(
        grade.grader for e in entries if (grade := primary_grade(e.grades)) is not None
    )
    # GRADE_LABELS is written in the verdict order.
    return [(label, counts[name]) for name, label in GRADE_LABELS.items() if counts[name]]


def question_item_stats(*, question: Question) -> dict:
    """The item statistics page of a question: per step its points, for napkin math its
    quantities too. The points are the current revision's, each counted over the answers whose
    own revision asked it."""
    spec = question.current_revision.question_spec
    best, waiting = _best_submissions(question)
    # The rubric each answer was graded against is its attempt's revision's (a point added or
    # removed since is not held against it).
    revision_ids = {e.item.answer.attempt.revision_id for entries in best.values() for e in entries}
    specs = {
        r.pk: r.question_spec
        for r in QuestionRevision.objects.filter(pk__in=revision_ids).only(
            "pk", "content_hash", "spec", "scenario_markdown"
        )
    }
    steps = []
    for step_key in STEP_KEYS:
        step = spec.step(step_key)
        entries = best.get(step_key, [])
        responses = []
        asked = []
        for entry in entries:
            main = primary_grade(entry.grades)
            responses.append({p["id"]: p.get("verdict", "miss") for p in main.points})
            own = specs.get(entry.item.answer.attempt.revision_id)
            asked.append(
                {p.id for p in own.step(step_key).rubric}
                if own is not None
                else {p.id for p in step.rubric}
            )
        quantities = []
        if step_key == "estimate":
            checks = [
                {p["id"]: p for p in g.points}
                for e in entries
                for g in e.grades
                if g.grader == "checker"
            ]
            quantities = quantity_statistics([(q.id, q.label) for q in step.quantities], checks)
        steps.append(
            {
                "key": step_key,
                "title": STEP_TITLES[step_key],
                "n": len(responses),
                "graded_by": graded_by(entries),
                "awaiting_self_check": waiting[step_key],
                "points": point_statistics(step.rubric, responses, asked),
                "quantities": quantities,
            }
        )
    return {"question": question, "spec": spec, "steps": steps}


def quantity_statistics(
    quantities: Sequence[tuple[str, str]], checks: Sequence[Mapping[str, Mapping]]
) -> list[QuantityStats]:
    """Per quantity (id, label), over checker results ({quantity id: {"verdict", "answer",
    "hint"}}, one per candidate): the share correct, the most common wrong answers (as typed,
    whitespace collapsed; unanswered left out) and which hints fired, most frequent first."""
    out = []
    for qty_id, label in quantities:
        seen = [c[qty_id] for c in checks if qty_id in c]
        answered = [s for s in seen if s.get("verdict") != "unchecked"]
        wrong = Counter(
            " ".join(str(s.get("answer", "")).split())
            for s in answered
            if s.get("verdict") != "correct" and str(s.get("answer", "")).strip()
        )
        hints = Counter(
            (str(s.get("verdict")), str(s["hint"]))
            for s in answered
            if s.get("verdict") != "correct" and s.get("hint")
        )
        correct = sum(s.get("verdict") == "correct" for s in seen)
        out.append(
            QuantityStats(
                id=qty_id,
                label=label,
                n=len(seen),
                correct_rate=round(correct / len(seen), 4) if seen else None,
                wrong_answers=wrong.most_common(TOP_WRONG),
                hints=[(v, h, n) for (v, h), n in hints.most_common(TOP_WRONG)],
            )
        )
    return out
