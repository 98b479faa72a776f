"""The review queue: which submissions an instructor should look at, candidates' disputes,
and the instructor's verdict, which becomes the candidate's grade.

A submission is in its question's queue, until an instructor has reviewed it, when:
- the model and the offline grader disagree by more than 0.4, or the model's reply could not
  be used (both leave `Submission.review_reason`, written by the grading task), or
- its candidate's self-check and the offline keyword matcher differ by more than the same
  threshold (`grading.DISAGREEMENT_THRESHOLD`): the candidate may have over- or under-rated
  themselves (the matcher misses paraphrases, so it is a reason to look, not a verdict), or
- its candidate disputed the grade (`GradeDispute`, with a sentence of why).

The instructor labels every rubric point blind (`review_store`); the labels become a Grade with
grader "instructor", which scoring prefers to both graders, and join the question's
calibration set (`CalibrationLabel`). Attempts marked `is_preview` never reach the queue.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Abs
from django.utils import timezone

from grading import DISAGREEMENT_THRESHOLD, INVENTED_QUOTES
from grading.types import VERDICTS, RubricPointVerdict, weighted_score
from practice import extensions
from practice.errors import FlowError
from practice.models import Grade, Submission
from practice.scoring import primary_grade
from practice.services import attempt_touch, grading_text, step_spec
from questions.models import Question
from questions.selectors import STEP_TITLES
from rate_limits import LimitExceeded
from review.models import CalibrationLabel, GradeDispute

INSTRUCTOR = "instructor"
SELF = "self"
MATCHER = "rubric"
DISPUTE_MIN_CHARS = 10
DISPUTE_MAX_CHARS = 500
# The free-text steps: napkin math is judged by its checked numbers, not by rubric labels.
CALIBRATED_STEPS = ("clarify", "architecture", "bottlenecks", "tradeoffs")


def answer_hash(text: str) -> str:
    """The key a labelled answer is stored under (the same text labelled twice is one label)."""
    return hashlib.sha256(text.strip().encode()).hexdigest()


def submission_graded_text(submission: Submission) -> str:
    """The text the graders read for a submission: the clarify card written out then the notes;
    for napkin math the worksheet then the notes; else the answer."""
    step_key = submission.answer.step_key
    worksheet = str(submission.fields.get("worksheet", "")) if step_key == "estimate" else ""
    return grading_text(step_key, submission.text, submission.fields, worksheet_text=worksheet)


# --- disputes -------------------------------------------------------------------------------------


def asks_for_a_grade(submission: Submission) -> bool:
    """Whether the submission's score, an instructor's aside, is its candidate's own
    self-check: there is no grader's verdict to dispute, so a dispute of it is worded as
    asking an instructor to grade the answer (whose verdict then comes first), before the
    review and after it."""
    main = primary_grade([g for g in submission.grades.all() if g.grader != INSTRUCTOR])
    return main is not None and main.grader == SELF


DISPUTED = "disputed by the candidate"
ASKED_FOR_A_GRADE = "the candidate asks for an instructor's grade"


def disputes_used_today(user_id: int) -> int:
    """How many grades the user disputed this UTC day: the disputes the daily quota counted
    (a refused dispute is neither stored nor counted)."""
    midnight = timezone.now().astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return GradeDispute.objects.filter(user_id=user_id, created_at__gte=midnight).count()


def disputes_left_today(user_id: int) -> int:
    """How many more grades the user may dispute this UTC day
    (settings.GRADE_DISPUTES_PER_DAY)."""
    return max(0, settings.GRADE_DISPUTES_PER_DAY - disputes_used_today(user_id))


class DisputeClosed(FlowError):
    """A dispute refused for good, whatever the reason says: the grade is not the candidate's
    to dispute (a preview) or is already disputed or reviewed."""


def grade_dispute(*, user, submission: Submission, reason: str) -> GradeDispute:
    """Open a dispute of a submission's grade by its own candidate; returns it.

    Raises FlowError for a reason too short or too long or a submission not graded yet;
    DisputeClosed for a preview or one already reviewed or disputed; and LimitExceeded past
    settings.GRADE_DISPUTES_PER_DAY in a UTC day. Nothing is counted against the limit for a
    refused one. A submission scored by the candidate's own self-check may be sent too: it asks
    an instructor to grade the answer (`asks_for_a_grade`)."""
    reason = " ".join((reason or "").split())
    if len(reason) < DISPUTE_MIN_CHARS:
        raise FlowError(
            "Say in a sentence why you think the grade is wrong (which point, and where your "
            "answer makes it), so the instructor knows what to look at."
        )
    if len(reason) > DISPUTE_MAX_CHARS:
        raise FlowError(
            f"Keep the reason under {DISPUTE_MAX_CHARS} characters (it has {len(reason)}): "
            "one or two sentences are enough; nothing was sent."
        )
    if submission.answer.attempt.is_preview:
        raise DisputeClosed(
            "This is a preview attempt, which never reaches the review queue, so nobody would "
            "see a dispute of it; nothing was sent. To review a grade, use the review queue."
        )
    if submission.grade_status not in (Submission.GradeStatus.DONE, Submission.GradeStatus.OFFLINE):
        raise FlowError("This answer is still being graded; dispute it once the grade is in.")
    if submission.grades.filter(grader=INSTRUCTOR).exists():
        raise DisputeClosed("An instructor has already reviewed this grade.")
    if GradeDispute.objects.filter(submission=submission).exists():
        raise DisputeClosed("You have already disputed this grade; an instructor will review it.")
    per_day = settings.GRADE_DISPUTES_PER_DAY
    advice = "Your grades are kept as they are; dispute another one tomorrow (UTC)."
    try:
        with transaction.atomic():
            # The user's disputes are counted and written one at a time, so two sent at once
            # (two tabs) cannot both pass the count: on PostgreSQL the second waits for this
            # lock; on SQLite every transaction takes the write lock as it begins (IMMEDIATE).
            get_user_model().objects.select_for_update().filter(pk=user.pk).first()
            # A double click's second post waited for the first one's lock: its dispute is
            # the one stored, not a refusal for the count it spent.
            stored = GradeDispute.objects.filter(submission=submission).first()
            if stored is not None:
                return stored
            # The disputes stored today are the one count: the feedback panel hides the form
            # by it, a restart cannot empty it, and a double click (one row) spends one.
            if disputes_used_today(user.pk) >= per_day:
                plural = "" if per_day == 1 else "s"
                raise LimitExceeded(
                    f"You have used today's {per_day} grade dispute{plural}. {advice}"
                )
            dispute = GradeDispute.objects.create(
                submission=submission,
                user=user,
                reason=reason,
                asks_for_grade=asks_for_a_grade(submission),
            )
    except IntegrityError:  # a double click: the first one is the dispute
        dispute = GradeDispute.objects.get(submission=submission)
    attempt_touch(submission.answer.attempt_id)
    return dispute


# --- the queue ------------------------------------------------------------------------------------


@dataclass
class QueueEntry:
    """One submission waiting for an instructor, with why: the kind of flag only, no grader's
    score, verdict or leaning (labelling is blind; the label page shows them once the
    instructor's own verdicts are saved)."""

    submission: Submission
    step_title: str = ""
    reasons: list[str] = field(default_factory=list)
    dispute: str = ""


def _flag_kind(review_reason: str) -> str:
    """The kind of a grading flag (grading.review_reason, practice's unusable reply), named
    without either grader's figures: labelling is blind."""
    if review_reason.startswith("the model's reply could not be used"):
        return "the model's reply could not be used"
    # Both scores may be 0 here: "the graders disagree" would be untrue.
    if INVENTED_QUOTES in review_reason:
        return "none of the model's quotes is in the answer"
    return "the two graders disagree by more than 0.4"


# The queue's reason for a self-check the matcher disagrees with: which way it leans would
# tell the instructor what to find before they label.
SELF_CHECK_GAP_KIND = "the candidate's self-check and the matcher disagree"


def self_check_gap_reason(self_score: float, matcher_score: float) -> str:
    """Why a self-check was queued, with the figures, for the label page once the instructor's
    verdicts are saved ("" when it and the matcher differ by no more than the threshold):
    "the candidate's self-check (0.9) and the matcher (0.2) disagree: they may have
    over-rated themselves" (or "under-rated")."""
    if abs(self_score - matcher_score) <= DISAGREEMENT_THRESHOLD:
        return ""
    rated = "over-rated" if self_score > matcher_score else "under-rated"
    return (
        f"the candidate's self-check ({self_score:.1f}) and the matcher ({matcher_score:.1f}) "
        f"disagree: they may have {rated} themselves"
    )


def _with_self_check_gap(submissions: QuerySet[Submission]) -> QuerySet[Submission]:
    """Submissions annotated with their self-check and matcher scores and `self_gap`, how far
    apart they are (None where either grade is missing)."""

    def score_of(grader: str) -> Subquery:
        return Subquery(
            Grade.objects.filter(submission=OuterRef("pk"), grader=grader).values("score")[:1]
        )

    return submissions.annotate(
        self_score=score_of(SELF), matcher_score=score_of(MATCHER)
    ).annotate(self_gap=Abs(F("self_score") - F("matcher_score")))


def _waiting_for_review(submissions: QuerySet[Submission]) -> QuerySet[Submission]:
    """Those of `submissions` that wait for an instructor: graded, not a preview, not
    reviewed yet, and flagged by the graders, disputed, or self-checked apart from the
    matcher (annotated as `_with_self_check_gap`, plus `reviewed` and `disputed`)."""
    reviewed = Grade.objects.filter(submission=OuterRef("pk"), grader=INSTRUCTOR)
    disputed = GradeDispute.objects.filter(submission=OuterRef("pk"))
    rows = submissions.filter(
        answer__attempt__is_preview=False,
        grade_status__in=[Submission.GradeStatus.DONE, Submission.GradeStatus.OFFLINE],
    ).annotate(reviewed=Exists(reviewed), disputed=Exists(disputed))
    # A gap no more than the threshold is agreement, as between the two graders.
    return _with_self_check_gap(rows).filter(
        ~Q(review_reason="") | Q(disputed=True) | Q(self_gap__gt=DISAGREEMENT_THRESHOLD),
        reviewed=False,
    )


def review_queue(*, question: Question) -> list[QueueEntry]:
    """The question's submissions waiting for review, oldest first."""
    rows = (
        _waiting_for_review(Submission.objects.filter(answer__attempt__revision__question=question))
        .select_related("answer")
        .prefetch_related("disputes", "grades")
        .order_by("submitted_at", "pk")
    )
    entries = []
    for submission in rows:
        step_key = submission.answer.step_key
        entry = QueueEntry(submission, STEP_TITLES.get(step_key, step_key))
        if submission.review_reason:
            entry.reasons.append(_flag_kind(submission.review_reason))
        if submission.self_gap is not None and submission.self_gap > DISAGREEMENT_THRESHOLD:
            entry.reasons.append(SELF_CHECK_GAP_KIND)
        dispute = next(iter(submission.disputes.all()), None)
        if dispute is not None:
            entry.reasons.append(ASKED_FOR_A_GRADE if dispute.asks_for_grade else DISPUTED)
            entry.dispute = dispute.reason
        entries.append(entry)
    return entries


def self_check_gap(submission: Submission) -> str:
    """Why one submission's self-check was queued, with the figures ("" when not flagged)."""
    scores = dict(
        submission.grades.filter(grader__in=[SELF, MATCHER]).values_list("grader", "score")
    )
    if SELF not in scores or MATCHER not in scores:
        return ""
    return self_check_gap_reason(scores[SELF], scores[MATCHER])


def awaits_blind_label(submission: Submission) -> bool:
    """Whether the submission waits in the review queue for an instructor's blind labels:
    until they are given, no page shows an instructor either grader's verdicts on it."""
    if submission.grades.filter(grader=INSTRUCTOR).exists():
        return False
    return (
        bool(submission.review_reason)
        or submission.disputes.exists()
        or bool(self_check_gap(submission))
    )


def queue_counts() -> dict[int, int]:
    """How many submissions wait for review, by question id (questions with none left out):
    one query, however many questions the bank holds."""
    question = "answer__attempt__revision__question"
    rows = (
        _waiting_for_review(Submission.objects.all())
        .values(question)
        .annotate(waiting=Count("pk"))
        .order_by()
    )
    return {row[question]: row["waiting"] for row in rows}


# --- the instructor's verdict ---------------------------------------------------------------------


REVIEW_COMMENT_MAX_CHARS = 1000


# How much of a rubric point's text a message names it by: enough to tell the points apart.
POINT_NAME_MAX_CHARS = 60


def point_name(says: str) -> str:
    """A rubric point as a message names it: its text as the label form shows it, in quotes,
    cut at a word past POINT_NAME_MAX_CHARS and without its closing full stop, so the points
    join with "; " and the sentence ends once."""
    text = " ".join(says.split()).rstrip(".")
    if len(text) > POINT_NAME_MAX_CHARS:
        cut = text[:POINT_NAME_MAX_CHARS].rsplit(" ", 1)[0] or text[:POINT_NAME_MAX_CHARS]
        text = cut.rstrip(",;:") + "…"
    return f"“{text}”"


class ReviewedMeanwhile(FlowError):
    """Blind labels sent for an answer another review was stored for since the form was
    opened, or a revision of a review revised since (another tab, another instructor):
    nothing was overwritten; the message repeats the refused verdicts so nothing typed is
    lost."""


def review_version(grade: Grade) -> str:
    """The version of an instructor's grade a revise form is opened on: its row, since a
    review whose verdicts or note change is stored as a new grade (`review_store`)."""
    return str(grade.pk)


def _your_verdicts(points, given: Mapping[str, str], comment: str) -> str:
    """The refused verdicts and note, repeated so nothing typed is lost."""
    yours = "; ".join(f"{point_name(p.says)}: {given[p.id]}" for p in points)
    return f"Your verdicts were: {yours}" + (f". Your note: {comment}" if comment else ".")


def _saved_by(grade: Grade, reviewer) -> str:
    """Who saved `grade`, as a refusal names them to `reviewer`."""
    if grade.reviewer_id == reviewer.pk:
        return "you (in another tab or window)"
    return grade.reviewer.get_username() if grade.reviewer else "an instructor"


def review_store(
    *,
    submission: Submission,
    reviewer,
    labels: Mapping[str, str],
    comment: str = "",
    blind: bool = False,
    seen: str | None = None,
) -> Grade:
    """Store an instructor's verdict per rubric point as the submission's grade; returns it.
    `comment`, a word to the candidate (shown with the grade), is the grade's feedback;
    FlowError when it is too long.

    `labels` must give every rubric point of the step a verdict (hit, partial or miss);
    FlowError otherwise, naming what is missing. The grade's quotes are those of a grader
    that reached the same verdict (so the candidate's answer is still highlighted). The labels
    also join the question's calibration set (free-text steps).

    `blind`: the labels come from the blind form, which only an answer not reviewed yet
    shows; ReviewedMeanwhile when a review with other verdicts or another note is stored by
    now (the same ones again are a form sent twice, stored once).

    `seen`: the labels revise the stored review, as the review page showed it
    (`review_version`): any instructor may revise it, and the new verdicts and note become the
    grade, saved as theirs. ReviewedMeanwhile when the review was revised since with other
    verdicts or another note; FlowError when there is no review to revise.
    """
    answer = submission.answer
    revision = answer.attempt.revision
    step = step_spec(revision, answer.step_key, answer.follow_up_id)
    points = list(step.rubric)
    typed = [labels.get(p.id) or "" for p in points]  # "": a point left unlabelled
    unknown = [f"{label!r:.40}" for label in typed if label and label not in VERDICTS]
    if unknown:
        raise FlowError("A verdict is hit, partial or miss, not " + ", ".join(unknown) + ".")
    missing = [point_name(p.says) for p in points if labels.get(p.id) not in VERDICTS]
    if missing:
        raise FlowError(
            "Give every rubric point a verdict (hit, partial or miss) before saving; "
            f"{len(missing)} missing: " + "; ".join(missing) + "."
        )
    comment = " ".join((comment or "").split())
    if len(comment) > REVIEW_COMMENT_MAX_CHARS:
        raise FlowError(
            f"This note is {len(comment):,} characters; the limit is "
            f"{REVIEW_COMMENT_MAX_CHARS:,}, so nothing was saved. Shorten it and save again."
        )
    given = {p.id: labels[p.id] for p in points}
    by_grader = {g.grader: g for g in submission.grades.all()}
    verdicts, stored = [], []
    for point in points:
        verdict = given[point.id]
        quote = ""
        if verdict != "miss":
            for name in ("llm", "rubric"):
                grade = by_grader.get(name)
                stored_points = grade.points if grade else []
                match = next((p for p in stored_points if p.get("id") == point.id), {})
                if match.get("verdict") == verdict and match.get("evidence"):
                    quote = match["evidence"]
                    break
        verdicts.append(RubricPointVerdict(point.id, verdict, evidence=quote))
        stored.append(
            {
                "id": point.id,
                "verdict": verdict,
                "evidence": quote,
                "comment": "",
                "quote": quote,
                "quote_found": True if quote else None,
            }
        )
    text = submission_graded_text(submission)
    found, contradicts = _findings(submission, step, by_grader)
    with transaction.atomic():
        # Reviews of one answer take turns on its submission's row: with no review stored yet
        # there is no grade row to lock, and two first reviews at once would both be written.
        Submission.objects.select_for_update().filter(pk=submission.pk).only("pk").first()
        # Read under the write lock, so an instructor's removal stored meanwhile is seen.
        stored_review = (
            # The grade's row alone is locked: its reviewer, joined to name who saved it, may
            # be null, and PostgreSQL locks no row on the nullable side of an outer join.
            Grade.objects.select_for_update(of=("self",))
            .select_related("reviewer")
            .filter(submission=submission, grader=INSTRUCTOR)
            .first()
        )
        if seen is not None and stored_review is None:
            raise FlowError("There is no review of this answer to revise: nothing was saved.")
        unchanged = stored_review is not None and _same_review(stored_review, given, comment)
        if seen is not None and unchanged:
            return stored_review  # the form sent twice, or nothing changed: nothing to save
        # Checked under the lock: two blind forms, or two revisions, sent at once are told
        # apart here, not overwritten one by the other.
        if blind and stored_review is not None and not unchanged:
            raise ReviewedMeanwhile(
                f"Not saved: {_saved_by(stored_review, reviewer)} saved a review of this answer "
                f"since you opened it, shown below. {_your_verdicts(points, given, comment)}"
            )
        if seen is not None and review_version(stored_review) != seen:
            raise ReviewedMeanwhile(
                f"Not saved: {_saved_by(stored_review, reviewer)} revised this review since "
                f"you opened it, shown below. {_your_verdicts(points, given, comment)}"
            )
        kept = _wrong_ideas_kept(found, contradicts, given, stored_review)
        fields = {
            "score": weighted_score(points, verdicts),
            "points": stored,
            "misconceptions": kept,
            "feedback": comment,
            "reviewer": reviewer,
            "model": "",
            "prompt_version": "",
        }
        if unchanged:  # the same verdicts and note again: the grade stands as it was given
            Grade.objects.filter(pk=stored_review.pk).update(**fields)
            grade = Grade.objects.get(pk=stored_review.pk)
        else:
            # Changed verdicts are a new grade, given now: the candidate's concept cards read
            # grades newer than the last they read (drills), and "Graded at" is when these
            # verdicts were given. The removals of wrong ideas stay with the review.
            removed = stored_review.wrong_ideas_removed if stored_review is not None else []
            if stored_review is not None:
                stored_review.delete()
            grade = Grade.objects.create(
                submission=submission,
                grader=INSTRUCTOR,
                wrong_ideas_removed=removed,
                **fields,
            )
        if answer.step_key in CALIBRATED_STEPS and text.strip():
            CalibrationLabel.objects.update_or_create(
                question=revision.question,
                step_key=answer.step_key,
                follow_up_id=answer.follow_up_id,
                answer_hash=answer_hash(text),
                defaults={
                    "answer": text,
                    "labels": given,
                    "source": CalibrationLabel.Source.REVIEW,
                    "submission": submission,
                    "labelled_by": reviewer,
                },
            )
        # The candidate's plan reads the instructor's verdict now.
        transaction.on_commit(lambda: extensions.verdict_stored(submission))
    attempt_touch(answer.attempt_id)
    return grade


def _same_review(grade: Grade, given: Mapping[str, str], comment: str) -> bool:
    """Whether the instructor's `grade` holds the verdicts `given` and the note `comment`."""
    stored = {p.get("id"): p.get("verdict") for p in grade.points}
    return stored == given and grade.feedback == comment


def _findings(
    submission: Submission, step, by_grader: Mapping[str, Grade]
) -> tuple[list[dict], dict[str, tuple]]:
    """The wrong ideas a grader stands behind in `submission` (the model's, else those the
    candidate confirmed in their self-check), and the rubric points each idea contradicts."""
    source = by_grader.get("llm") or by_grader.get(SELF)
    contradicts = {m.id: m.contradicts for m in getattr(step, "misconceptions", ())}
    return list(source.misconceptions if source else []), contradicts


def _credited(finding: Mapping, contradicts: Mapping[str, tuple], verdicts: Mapping) -> bool:
    """Whether `verdicts` credit in full a point the wrong idea `finding` contradicts."""
    return any(verdicts.get(p) == "hit" for p in contradicts.get(finding.get("id"), ()))


def _wrong_ideas_kept(
    found: list[dict],
    contradicts: Mapping[str, tuple],
    given: Mapping[str, str],
    stored_review: Grade | None,
) -> list[dict]:
    """The wrong ideas an instructor's grade with verdicts `given` states to the candidate.

    Those a grader stands behind stay: the model's (it scored the answer by them, each quoted
    from it) or, without it, the ones the candidate confirmed in their self-check (`found`).
    The keyword matcher's flags do not: it is advisory, and a flag the candidate dismissed is
    answered. One leaves when the verdicts credit in full a point it contradicts (they say
    the answer does not hold it), or when an instructor removed it from the grade already
    stored (`stored_review.wrong_ideas_removed`), so a form sent again does not bring it back;
    an idea a grader found since the review was stored is no removed one, and stays."""
    removed = stored_review.wrong_idea_ids_removed if stored_review else set()
    return [m for m in found if m.get("id") not in removed and not _credited(m, contradicts, given)]


class WrongIdeaGone(FlowError):
    """A wrong idea the review page showed in the instructor's grade, no longer in it when
    its removal arrives (removed in another tab or by another instructor, or credited away by
    verdicts saved since): nothing changed."""


def wrong_idea_remove(
    *, submission: Submission, idea_id: str, remover, shown: Collection[str] = ()
) -> dict:
    """Drop one wrong idea from the instructor's grade of `submission`, so the candidate's
    feedback no longer states it: the instructor judges the answer does not hold it. Returns
    the finding removed. The verdicts, score and calibration label stay as they are. Who
    removed it is kept with it (any instructor may revise a review, as its verdicts may be
    saved again): the review page names them, and `wrong_idea_restore` puts it back.

    FlowError when the answer has no instructor's grade yet (said before anything about the
    idea: its labels are blind) or `idea_id` is not a wrong idea the grade states;
    WrongIdeaGone when `shown`, the ideas the page listed in the grade, names it (a page
    older than the grade)."""
    with transaction.atomic():
        # Removals from two tabs each rewrite the list: one at a time, so neither undoes the
        # other's (on SQLite the transaction takes the write lock as it begins).
        grade = (
            Grade.objects.select_for_update()
            .filter(submission=submission, grader=INSTRUCTOR)
            .first()
        )
        if grade is None:
            raise FlowError(
                "Label this answer first: the graders' wrong ideas are shown, and can be "
                "removed from your grade, once your verdicts are saved. Nothing was changed."
            )
        finding = next((m for m in grade.misconceptions if m.get("id") == idea_id), None)
        if finding is None:
            if idea_id in shown:
                raise WrongIdeaGone(
                    "That wrong idea is no longer in the grade (removed in another tab or by "
                    "another instructor, or its point credited in full by verdicts saved since "
                    "this page was opened): nothing was changed."
                )
            raise FlowError(
                f"Not removed: {idea_id!r:.60} is not a wrong idea this grade states. "
                "Nothing was changed."
            )
        grade.misconceptions = [m for m in grade.misconceptions if m.get("id") != idea_id]
        grade.wrong_ideas_removed = [
            *(r for r in grade.wrong_ideas_removed if r.get("id") != idea_id),
            {"id": idea_id, "by": remover.pk},
        ]
        grade.save(update_fields=["misconceptions", "wrong_ideas_removed"])
    # The candidate's feedback pages are cached by the attempt's version.
    attempt_touch(submission.answer.attempt_id)
    return finding


def wrong_idea_restore(*, submission: Submission, idea_id: str) -> bool:
    """Put back a wrong idea an instructor removed from the grade of `submission` (a removal
    made by mistake, or one a colleague disagrees with): the grade states it again where a
    grader still stands behind it and the verdicts credit no point it contradicts in full.
    Returns whether the candidate's feedback states it again. FlowError, nothing changed,
    when the grade holds no such removal (put back already, in another tab)."""
    answer = submission.answer
    step = step_spec(answer.attempt.revision, answer.step_key, answer.follow_up_id)
    with transaction.atomic():
        grade = (
            Grade.objects.select_for_update()
            .filter(submission=submission, grader=INSTRUCTOR)
            .first()
        )
        if grade is None or idea_id not in grade.wrong_idea_ids_removed:
            raise FlowError(
                "That wrong idea is not removed from the grade (put back in another tab or by "
                "another instructor since this page was opened): nothing was changed."
            )
        grade.wrong_ideas_removed = [r for r in grade.wrong_ideas_removed if r.get("id") != idea_id]
        by_grader = {g.grader: g for g in submission.grades.all()}
        found, contradicts = _findings(submission, step, by_grader)
        verdicts = {p.get("id"): p.get("verdict") for p in grade.points}
        grade.misconceptions = _wrong_ideas_kept(found, contradicts, verdicts, grade)
        grade.save(update_fields=["misconceptions", "wrong_ideas_removed"])
    attempt_touch(answer.attempt_id)
    return any(m.get("id") == idea_id for m in grade.misconceptions)
