"""The scoring policy: what a submission scores, and what a step and an attempt score.

One rule for every page that shows a score (feedback, scorecard, history):
- a submission's score is the primary grade (an instructor's review, else the model's, else
  the candidate's own self-check), blended
  with the napkin-math checker on `estimate` and with the SLO card review on `clarify`;
- a part (a step's main answer, or one follow-up) scores its best submission;
- a step scores the mean of its answered parts, so a weak follow-up pulls the step down even
  after a strong main answer;
- an attempt scores the mean of its scored steps.

The offline keyword matcher's grade ("rubric") is never a score: it points the candidate at
their own sentences while they self-check, nothing more. A submission with only that grade
is not scored until the candidate rates it (practice.self_check).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch

from grading.types import RubricPointVerdict, weighted_score
from practice.extensions import is_extension_follow_up
from practice.models import Grade, StepAnswer, Submission
from questionbank import STEP_KEYS, RubricPoint

# How much of a step's score comes from its structured check rather than the primary grade.
CHECKER_WEIGHT = 0.6  # estimate: the numbers the candidate checked
SLO_CARD_WEIGHT = 0.5  # clarify: the SLO card against the brief


def points_credit(points: Iterable[RubricPoint], verdicts: Mapping[str, str]) -> float:
    """The weighted credit of rubric `points` from stored verdicts by point id, as a grade's
    own score counts it (a point without a verdict a miss)."""
    stored = [RubricPointVerdict(id=pid, verdict=v) for pid, v in verdicts.items()]
    return weighted_score(list(points), stored)


@dataclass(frozen=True)
class StepCheck:
    """A step's own check, blended into its score with the primary grade: the grade that
    holds it, its weight, and its names in a sentence and beside the graders' labels."""

    grader: str
    weight: float
    words: str
    label: str


# The one blend rule: submission_score, score_label, score_makeup and step_verdict_labels.
STEP_CHECKS = {
    "estimate": StepCheck(
        "checker", CHECKER_WEIGHT, "the napkin-math checks", "Napkin-math checks"
    ),
    "clarify": StepCheck("slo", SLO_CARD_WEIGHT, "the SLO card's check", "SLO card check"),
}

PartKey = tuple[str, str]  # (step key, follow-up id or "")


# The one verdict order, first wins: an instructor's review, the model's grade, the
# candidate's self-check. Every page that names who scored a submission uses these labels.
VERDICT_ORDER = ("instructor", "llm", "self")
GRADE_LABELS = {"instructor": "Instructor-reviewed", "llm": "Model-graded", "self": "Self-checked"}


def primary_grade(grades: Iterable[Grade]) -> Grade | None:
    """The grade that counts: an instructor's review when there is one (the human verdict
    wins), else the model's when it graded, else the candidate's self-check; None when there
    is none of these (the offline matcher's "rubric" grade never counts)."""
    by = {g.grader: g for g in grades}
    for grader in VERDICT_ORDER:
        if grader in by:
            return by[grader]
    return None


def grade_label(grade: Grade | None) -> str:
    """The label a page shows beside a score that came from `grade` ("" for none)."""
    return GRADE_LABELS.get(grade.grader, "") if grade is not None else ""


def submission_score(step_key: str, grades: Iterable[Grade]) -> float | None:
    """A submission's step score in [0, 1], None when no instructor, model or self-check
    grade exists: the primary grade, blended with the checked numbers for napkin math and with
    the SLO card for clarify."""
    grades = list(grades)
    main = primary_grade(grades)
    if main is None:
        return None
    by = {g.grader: g for g in grades}
    check = STEP_CHECKS.get(step_key)
    if check and check.grader in by:
        return round(check.weight * by[check.grader].score + (1 - check.weight) * main.score, 3)
    return round(main.score, 3)


# What a page calls each part of a blended score (submission_score).
PRIMARY_WORDS = {
    "instructor": "the instructor's review",
    "llm": "the model's grade",
    "self": "your ratings of each point",
}


def score_label(step_key: str, grades: Iterable[Grade]) -> str:
    """The label beside a submission's score: who graded it, and the step's own check where
    the score blends it in ("Self-checked + SLO card check"); "" for no score."""
    grades = list(grades)
    label = grade_label(primary_grade(grades))
    check = STEP_CHECKS.get(step_key)
    if label and check and any(g.grader == check.grader for g in grades):
        return f"{label} + {check.label}"
    return label


def score_makeup(step_key: str, grades: Iterable[Grade]) -> str:
    """What a submission's score is made of when it blends the primary grade with the step's
    own check, with each part's figure ("your ratings of each point (56%) and the SLO card's
    check (67%), half each"), so a page does not label the blend as the primary grade alone;
    "" when the score is the primary grade alone (or there is none)."""
    grades = list(grades)
    main = primary_grade(grades)
    check = STEP_CHECKS.get(step_key)
    by = {g.grader: g for g in grades}
    if main is None or check is None or check.grader not in by:
        return ""
    weight = check.weight
    share = (
        "half each"
        if weight == 0.5
        else f"weighted {round((1 - weight) * 100)}:{round(weight * 100)}"
    )
    return (
        f"{PRIMARY_WORDS[main.grader]} ({round(main.score * 100)}%) and "
        f"{check.words} ({round(by[check.grader].score * 100)}%), {share}"
    )


@dataclass
class ScoredSubmission:
    """A submission with its grades and score; `item` is whatever the caller wants to keep
    beside it (the submission row, its answer)."""

    part: PartKey
    score: float | None
    grades: list[Grade] = field(default_factory=list)
    item: Any = None

    @classmethod
    def of(
        cls, submission: Submission, *, answer: StepAnswer | None = None, item: Any = None
    ) -> ScoredSubmission:
        """A submission scored by the verdict order from its grades (prefetch them);
        `answer` is its step answer when the caller holds it already."""
        answer = answer or submission.answer
        grades = list(submission.grades.all())
        return cls(
            part=(answer.step_key, answer.follow_up_id),
            score=submission_score(answer.step_key, grades),
            grades=grades,
            item=item,
        )


def attempt_scored_submissions(
    attempt_id: int, *, only: Collection[int] | None = None
) -> list[ScoredSubmission]:
    """Every submission of the attempt (or those of them in `only`) with its grades and
    score, in the order the answers were opened; `item` is the submission."""
    return attempts_scored_submissions([attempt_id], only=only).get(attempt_id, [])


def attempts_scored_submissions(
    attempt_ids: Collection[int], *, only: Collection[int] | None = None
) -> dict[int, list[ScoredSubmission]]:
    """`attempt_scored_submissions` of each of `attempt_ids`, by attempt id (an attempt with
    no submission left out), in the same three queries however many attempts."""
    submissions = Submission.objects.prefetch_related("grades").order_by("answer_id", "number")
    if only is not None:
        submissions = submissions.filter(pk__in=only)
    answers = StepAnswer.objects.filter(attempt_id__in=attempt_ids).order_by("pk")
    scored: dict[int, list[ScoredSubmission]] = {}
    for answer in answers.prefetch_related(Prefetch("submissions", queryset=submissions)):
        for sub in answer.submissions.all():
            entry = ScoredSubmission.of(sub, answer=answer, item=sub)
            scored.setdefault(answer.attempt_id, []).append(entry)
    return scored


def best_per_part(scored: Iterable[ScoredSubmission]) -> dict[PartKey, ScoredSubmission]:
    """Each part's best submission (the first of equal scores; an ungraded one only when the
    part has nothing better)."""
    best: dict[PartKey, ScoredSubmission] = {}

    def rank(entry: ScoredSubmission) -> tuple[bool, float]:
        # Any score, a self-checked 0 included, ranks above no score yet.
        return (entry.score is not None, entry.score or 0.0)

    for entry in scored:
        current = best.get(entry.part)
        if current is None or rank(entry) > rank(current):
            best[entry.part] = entry
    return best


def mean_score(scores: Iterable[float | None]) -> float | None:
    """The mean of the scores that exist, to 3 places; None when there are none."""
    values = [s for s in scores if s is not None]
    return round(sum(values) / len(values), 3) if values else None


def step_scores(best: Mapping[PartKey, ScoredSubmission]) -> dict[str, float | None]:
    """Every step's score, in step order: the mean over its answered parts of their best.

    A mock interview's own follow-ups (an interviewer's question, the app's probe) are not
    parts of the step: they are graded and shown beside it in the session's report, but a
    short answer to a question asked live must not pull the step's score down."""
    return {
        key: mean_score(
            entry.score
            for (step, follow_up), entry in best.items()
            if step == key and not is_extension_follow_up(follow_up)
        )
        for key in STEP_KEYS
    }


def overall_score(scored: Iterable[ScoredSubmission]) -> float | None:
    """An attempt's overall score from its scored submissions, as its scorecard shows it: the
    mean of the step scores of each part's best submission (None before any is scored)."""
    return mean_score(step_scores(best_per_part(scored)).values())


def step_verdict_labels(best: Mapping[PartKey, ScoredSubmission]) -> dict[str, str]:
    """Who scored each step: the GRADE_LABELS of its scored parts' primary grades, in verdict
    order ("Model-graded", or "Model-graded + Self-checked" when its parts differ), then the
    step's own check where it is in the score ("Self-checked + SLO card check"); "" for a step
    with no scored part."""
    labels: dict[str, str] = {}
    for key in STEP_KEYS:
        graders = {
            main.grader
            for (step, follow_up), entry in best.items()
            if step == key and not is_extension_follow_up(follow_up) and entry.score is not None
            if (main := primary_grade(entry.grades)) is not None
        }
        label = " + ".join(GRADE_LABELS[g] for g in VERDICT_ORDER if g in graders)
        # The step's own check is in its score too (submission_score): named beside the
        # graders, so "61% Self-checked" does not read as the self-check's figure.
        check = STEP_CHECKS.get(key)
        checked = check is not None and any(
            step == key
            and not is_extension_follow_up(follow_up)
            and entry.score is not None
            and any(g.grader == check.grader for g in entry.grades)
            for (step, follow_up), entry in best.items()
        )
        labels[key] = f"{label} + {check.label}" if label and checked else label
    return labels
