"""Reads of a candidate's attempts."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import F, Prefetch

from practice.models import Attempt, Grade, Submission
from practice.scoring import (
    VERDICT_ORDER,
    ScoredSubmission,
    overall_score,
)


def attempt_number(attempt: Attempt) -> int:
    """The attempt's number among its user's attempts at the same question, from 1 in the
    order they were started (a new user's first attempt is "Attempt 1", whatever its id)."""
    return Attempt.objects.filter(
        user_id=attempt.user_id,
        revision__question_id=attempt.revision.question_id,
        pk__lte=attempt.pk,
        # Previews are numbered apart, as the history (which leaves them out) numbers the rest.
        is_preview=attempt.is_preview,
    ).count()


@dataclass(frozen=True)
class QuestionStatus:
    """Where a candidate stands on one question, over all their attempts at it (any revision,
    previews left out): whether they started it, whether an attempt is still open, and the best
    attempt score so far (scored as History and the scorecard score one; None when no attempt
    has a score yet)."""

    started: bool = False
    in_progress: bool = False
    best_score: float | None = None


NOT_STARTED = QuestionStatus()


def question_statuses(*, user) -> dict[int, QuestionStatus]:
    """The candidate's status per question id, for the questions they have started (any
    other question is NOT_STARTED). Three queries whatever the number of questions or
    attempts: the attempts, their submissions with their answers, and the grades.

    An attempt's score is the History's overall: each part's best submission
    (`scoring.best_per_part`), the mean of each step's parts (`scoring.step_scores`), the mean
    of the scored steps (`scoring.mean_score`). A mock interview still running shows no
    verdict to its candidate, so it counts as in progress and adds no score (as in History).
    """
    if user.pk is None:
        return {}
    attempts = list(
        Attempt.objects.owned_by(user)
        .filter(is_preview=False)
        .select_related("mock")
        # The question, not the revision: a revision row carries the whole question file.
        .annotate(question_id=F("revision__question_id"))
    )
    if not attempts:
        return {}
    running = {a.pk for a in attempts if hasattr(a, "mock") and a.mock.ended_at is None}
    scored: dict[int, list[ScoredSubmission]] = defaultdict(list)
    # Only what a score reads: never the answers' text, which a long history makes large.
    submissions = (
        Submission.objects.filter(answer__attempt_id__in=[a.pk for a in attempts])
        .exclude(answer__attempt_id__in=running)
        .select_related("answer")
        .only("answer__attempt_id", "answer__step_key", "answer__follow_up_id")
        .prefetch_related(
            Prefetch("grades", queryset=Grade.objects.only("submission_id", "grader", "score"))
        )
    )
    for sub in submissions:
        scored[sub.answer.attempt_id].append(ScoredSubmission.of(sub))
    by_question: dict[int, list[Attempt]] = defaultdict(list)
    for attempt in attempts:
        by_question[attempt.question_id].append(attempt)
    statuses = {}
    for question_id, started in by_question.items():
        scores = [overall_score(scored.get(a.pk, [])) for a in started]
        scores = [s for s in scores if s is not None]
        statuses[question_id] = QuestionStatus(
            started=True,
            in_progress=any(a.status == Attempt.Status.ACTIVE or a.pk in running for a in started),
            best_score=max(scores) if scores else None,
        )
    return statuses


@dataclass(frozen=True)
class SelfCheckWaiting:
    """An answer of the candidate's that no model graded and they have not rated yet: the
    keyword matcher only pointed, so it has no score until they self-check it."""

    submission: Submission
    attempt: Attempt


# How far back the candidate's submissions are looked through for one waiting: their latest.
SELF_CHECK_LOOKBACK = 50


def self_check_waiting(*, user) -> SelfCheckWaiting | None:
    """The candidate's most recent answer waiting for their self-check, as History marks
    one ("Not scored yet — rate your answer"): its part's submissions carry the keyword
    matcher's grade and none of them a grade that counts (`scoring.VERDICT_ORDER`). A mock
    interview still running is left out (its candidate sees no verdicts until the end), and
    so are previews. Three queries."""
    if user.pk is None:
        return None
    recent = list(
        Submission.objects.filter(answer__attempt__user=user, answer__attempt__is_preview=False)
        .exclude(answer__attempt__mock__isnull=False, answer__attempt__mock__ended_at__isnull=True)
        .filter(grades__grader="rubric")
        .select_related("answer")
        .only("submitted_at", "answer__attempt_id", "answer__step_key", "answer__follow_up_id")
        .order_by("-submitted_at", "-pk")[:SELF_CHECK_LOOKBACK]
    )
    rated = set(
        Grade.objects.filter(
            submission__answer_id__in={sub.answer_id for sub in recent},
            grader__in=VERDICT_ORDER,
        ).values_list("submission__answer_id", flat=True)
    )
    waiting = next((sub for sub in recent if sub.answer_id not in rated), None)
    if waiting is None:
        return None
    attempt = (
        Attempt.objects.select_related("revision")
        .only("revision__title")  # not the revision's whole question file
        .get(pk=waiting.answer.attempt_id)
    )
    return SelfCheckWaiting(submission=waiting, attempt=attempt)
