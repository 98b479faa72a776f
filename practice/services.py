"""Writes for the five-step practice flow: attempts, drafts, submissions and their grading.

Views call these; the grading task calls `submission_grade`. Every write that could race (two
tabs, a double click, a re-run task) is guarded by a database constraint or a version check,
so nothing a candidate wrote is lost or duplicated.

Every write here also moves a version that cached pages are keyed on (`practice.page_cache`):
an edit of an answer bumps its `row_version` in the same UPDATE; an answer created, a
submission created, a grade or a grading status written bump the attempt's `state_version`
(`attempt_touch`), after the write, so a page rendered from the old rows can only have been
cached under the old version.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F
from django.tasks import task
from django.utils import timezone

from diagrams import MAX_TEXT_CHARS as MAX_DIAGRAM_CHARS
from grading.text import typed_opening
from practice import extensions
from practice.autosave import versioned_save
from practice.diagram import DIAGRAM_FIELD, diagram_text
from practice.errors import FlowError
from practice.models import Attempt, Grade, StepAnswer, Submission
from practice.slo import NUMBER_FIELDS, QPS_KIND, card_as_text, figure_errors, review_card
from questionbank import STEP_KEYS, FollowUp, StepSpec
from questions.models import QuestionRevision
from rate_limits import check_daily_quota, check_rate, user_client

if TYPE_CHECKING:
    from grading import GradeResult

log = logging.getLogger(__name__)


class FollowUpLocked(FlowError):
    """A follow-up asked for (by URL) before the one before it was submitted."""

    message = "This follow-up opens once you submit the one before it."


class UnreadFigures(FlowError):
    """A Submit of an SLO card holding figures the card cannot read ("abc", "1e9999"). The
    draft is saved as typed before this is raised; `fields` names the fields, in the card's
    order, for the page to move the focus to the first."""

    def __init__(self, fields: dict[str, str]):
        self.fields = list(fields)
        labels = ", ".join(fields.values())
        super().__init__(
            f"Not submitted: the SLO card cannot read {labels}. Correct or clear "
            f"{'it' if len(fields) == 1 else 'them'} (each field says why), then submit."
        )


def _unread_card_figures(answer: StepAnswer, fields: dict) -> None:
    """Refuse a Submit of the SLO card while a figure in it cannot be read: submitted, it
    would be graded as a figure "Not read". The step's main card only; a follow-up has none."""
    if answer.step_key != "clarify" or answer.follow_up_id:
        return
    errors = figure_errors(fields)
    if not errors:
        return
    mean = fields.get(QPS_KIND) == "mean"
    labels = {
        f.name: "Mean load" if f.name == "peak_qps" and mean else f.label
        for f in NUMBER_FIELDS
        if f.name in errors
    }
    raise UnreadFigures(labels)


def attempt_touch(attempt_id: int) -> None:
    """Mark the attempt's pages out of date: call after writing its answers' submissions or
    grades, or creating an answer."""
    Attempt.objects.filter(pk=attempt_id).update(state_version=F("state_version") + 1)


def attempt_start(*, user, revision: QuestionRevision, is_preview: bool = False) -> Attempt:
    """A new attempt against this exact revision (later edits of the question don't move it).

    Raises LimitExceeded past settings.ATTEMPTS_PER_DAY new attempts by this user in a UTC
    day: each is a row that the history pages read. Nothing existing is touched.
    """
    check_daily_quota(
        client=user_client(user.pk),
        action="new attempt",
        per_day=settings.ATTEMPTS_PER_DAY,
        advice="Everything you wrote is kept: carry on with one of your attempts below or "
        "from your history, and start new ones tomorrow (UTC).",
    )
    return Attempt.objects.create(user=user, revision=revision, is_preview=is_preview)


def _written(text: str, fields: dict) -> bool:
    """Whether an answer holds anything the candidate wrote: its text or a field (the SLO
    card's peak/mean choice always has a value, so alone it is nothing written)."""
    if text.strip():
        return True
    return any(
        value.strip() if isinstance(value, str) else bool(value)
        for name, value in fields.items()
        if name != QPS_KIND
    )


def attempt_start_or_resume(*, user, revision: QuestionRevision) -> tuple[Attempt, bool]:
    """The candidate's unfinished attempt at this revision that holds nothing written yet, or
    else a new one (`attempt_start`); returns it and whether it is new.

    A second press of Start (a double click, or Start again on a blank attempt) thus makes no
    empty attempt beside the first; with work in every open attempt, Start begins afresh.
    Timed mock interviews are left out: each is started on purpose, with its own clock.
    """
    with transaction.atomic():
        # Starts by one user run one at a time (a double click sends two at once), so the
        # second finds the attempt the first made. SQLite serialises writes anyway.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        open_attempts = (
            Attempt.objects.owned_by(user)
            .filter(
                revision=revision,
                status=Attempt.Status.ACTIVE,
                is_preview=False,
                mock__isnull=True,
            )
            .exclude(answers__submissions__isnull=False)
            .prefetch_related("answers")
            .order_by("-pk")
        )
        for attempt in open_attempts:
            blank = not any(_written(a.text, a.fields) for a in attempt.answers.all())
            if blank and not extensions.holds_work(attempt):
                return attempt, False
        return attempt_start(user=user, revision=revision), True


def attempt_finish(*, attempt_id: int, now: datetime | None = None) -> bool:
    """Mark the attempt finished, once: the first finish's time stands. Returns whether this
    call finished it (a double click, or a mock interview's end racing the candidate's
    "Finish", finds it done)."""
    return bool(
        Attempt.objects.filter(pk=attempt_id, finished_at__isnull=True).update(
            status=Attempt.Status.FINISHED, finished_at=now or timezone.now()
        )
    )


def follow_ups_open(follow_up_ids: Sequence[str], submitted: Collection[str]) -> list[bool]:
    """Which follow-ups may be opened, in order, given the ids of those already submitted.

    Follow-ups arrive one at a time: the first is open, each later one once the one before it
    is submitted, and a submitted one stays open. The step page draws its locks from this and
    the flow enforces it, so a locked follow-up is locked by URL too.
    """
    states, open_next = [], True
    for follow_up_id in follow_up_ids:
        done = follow_up_id in submitted
        states.append(done or open_next)
        open_next = done
    return states


def follow_up_check_open(*, attempt: Attempt, step_key: str, follow_up_id: str) -> None:
    """Raise FollowUpLocked unless this follow-up of the attempt is open (`follow_ups_open`)."""
    ids = [fu.id for fu in attempt.revision.question_spec.step(step_key).follow_ups]
    submitted = set(
        Submission.objects.filter(
            answer__attempt_id=attempt.pk, answer__step_key=step_key
        ).values_list("answer__follow_up_id", flat=True)
    )
    if not follow_ups_open(ids, submitted)[ids.index(follow_up_id)]:
        raise FollowUpLocked()


def answer_open(*, attempt: Attempt, step_key: str, follow_up_id: str = "") -> StepAnswer:
    """The draft for a step (created empty on first open); starts its clock once."""
    if step_key not in STEP_KEYS:
        raise FlowError("There is no such step.")
    if follow_up_id:
        step_spec(attempt.revision, step_key, follow_up_id)  # FlowError when there is none
        if not extensions.is_extension_follow_up(follow_up_id):  # asked live: open
            follow_up_check_open(attempt=attempt, step_key=step_key, follow_up_id=follow_up_id)
    try:
        answer, created = StepAnswer.objects.get_or_create(
            attempt=attempt,
            step_key=step_key,
            follow_up_id=follow_up_id,
            defaults={"opened_at": timezone.now()},
        )
    except IntegrityError:  # two tabs opened it at the same instant
        answer = StepAnswer.objects.get(
            attempt=attempt, step_key=step_key, follow_up_id=follow_up_id
        )
    else:
        if created:
            attempt_touch(attempt.pk)
    return answer


def _check_size(text: str, fields: dict) -> None:
    # The diagram has a limit of its own (the engine's) and is told by name: a diagram past it
    # with an empty answer would otherwise be "this answer is too long".
    diagram = len(str(fields.get(DIAGRAM_FIELD) or ""))
    if diagram > MAX_DIAGRAM_CHARS:
        raise FlowError(
            f"This diagram is {diagram:,} characters; the limit is {MAX_DIAGRAM_CHARS:,}. "
            "Nothing was saved over your previous draft. Shorten the diagram (a serving design "
            "rarely needs more than a few dozen components) and it will save again."
        )
    limit = settings.ANSWER_MAX_CHARS
    size = len(text) + sum(len(str(v)) for v in fields.values())
    if size > limit:
        what = "This answer and its diagram are" if diagram else "This answer is"
        together = " together" if diagram else ""
        raise FlowError(
            f"{what} {size:,} characters{together}; the limit is {limit:,}. Nothing was saved "
            "over your previous draft. Shorten it (an interview answer rarely needs more than "
            "a page) and it will save again."
        )


def draft_save(
    *, answer: StepAnswer, text: str, fields: dict, base_version: int, seconds: int = 0
) -> StepAnswer:
    """Save a draft if nobody saved a newer one since `base_version`; returns the answer.

    Raises StaleDraft when another tab saved in between (nothing is overwritten), and
    FlowError for an oversized answer or a mock interview past its time.
    """
    _check_size(text, fields)
    extensions.before_save(answer)  # e.g. a mock interview past its time takes nothing more
    seconds = max(0, min(int(seconds or 0), 120))  # one autosave never credits more than 2 min
    if answer.step_key == "estimate":
        # Quantity checks are written by their own endpoint, without a new draft version; a
        # draft save carries the latest over (only napkin math has them).
        stored = StepAnswer.objects.filter(pk=answer.pk).values_list("fields", flat=True).first()
        if stored and "checks" in stored:
            fields = {**fields, "checks": stored["checks"]}
    unchanged = answer.text == text and answer.fields == fields
    if answer.pk and answer.version == base_version and unchanged:
        # Nothing changed since the version this form was loaded at (a double-clicked Submit,
        # whose second post carries the version the first returned): no new version, so the
        # submit finds this version's submission instead of grading the same text twice. The
        # UPDATE's guard confirms the stored row is still at that version, so still this text.
        still = StepAnswer.objects.filter(pk=answer.pk, version=base_version)
        if still.update(seconds_spent=F("seconds_spent") + seconds):
            answer.seconds_spent += seconds
            return answer
    answer, written = versioned_save(
        answer,
        base_version=base_version,
        values={"text": text, "fields": fields},
        bump={"seconds_spent": seconds, "row_version": 1},
        same=lambda stored: stored.text == text and stored.fields == fields,
    )
    if written:
        extensions.draft_saved(answer)
    return answer


def quantity_check_store(*, answer: StepAnswer, quantity_id: str, check: dict) -> None:
    """Keep a quantity's latest check on the napkin-math answer, beside the other checks.

    Checks are written without a new draft version (a check is not an edit of the text); the
    row lock keeps two checks at once from dropping one another.
    """
    with transaction.atomic():
        locked = StepAnswer.objects.select_for_update().get(pk=answer.pk)
        fields = dict(locked.fields)
        fields["checks"] = {**(fields.get("checks") or {}), quantity_id: check}
        StepAnswer.objects.filter(pk=locked.pk).update(
            fields=fields, row_version=F("row_version") + 1
        )


@dataclass
class SubmitOutcome:
    submission: Submission
    created: bool


def step_submit(
    *,
    answer: StepAnswer,
    text: str,
    fields: dict,
    base_version: int,
    seconds: int = 0,
    enforce_limits: bool = True,
    as_it_stands: bool = False,
) -> SubmitOutcome:
    """Save the draft and submit it for grading; a double submit returns the first submission.

    The grading task is enqueued only after the transaction commits, so the worker always finds
    the answer it is asked to grade. `enforce_limits=False` is for the app's own submissions
    (a mock session's end submits the answers as they stand, once), not a candidate's; with
    `as_it_stands` the stored draft is submitted without saving it again, so a tab still open
    on it is not left one version behind (its next keystroke would read as another tab's).
    """
    if not _written(text, fields):
        raise FlowError("There is nothing to submit yet: write your answer first.")
    extensions.before_submit(answer)  # e.g. a mock interviewer's question is answered first
    if answer.follow_up_id and not extensions.is_extension_follow_up(answer.follow_up_id):
        # Checked here too, not only when the draft is opened: a draft row can outlive the
        # page that opened it, and a submit is what unlocks the next follow-up.
        follow_up_check_open(
            attempt=answer.attempt, step_key=answer.step_key, follow_up_id=answer.follow_up_id
        )
    if not as_it_stands:
        answer = draft_save(
            answer=answer, text=text, fields=fields, base_version=base_version, seconds=seconds
        )
        # The card's text is saved as typed (above); only its submission waits for figures
        # that read. A mock's end submits the answers as they stand, unread figures too.
        _unread_card_figures(answer, answer.fields or {})
    existing = Submission.objects.filter(answer=answer, draft_version=answer.version).first()
    if existing:
        return SubmitOutcome(existing, False)
    if enforce_limits:
        client = user_client(answer.attempt.user_id)
        check_rate(client=client, action="submission", per_minute=settings.GRADING_RATE_PER_MINUTE)
        check_daily_quota(client=client, action="grading", per_day=settings.GRADING_DAILY_QUOTA)
    try:
        with transaction.atomic():
            locked = StepAnswer.objects.select_for_update().get(pk=answer.pk)
            existing = Submission.objects.filter(
                answer=locked, draft_version=locked.version
            ).first()
            if existing:
                return SubmitOutcome(existing, False)
            number = locked.submissions.count() + 1
            submission = Submission.objects.create(
                answer=locked,
                number=number,
                text=locked.text,
                fields=locked.fields,
                draft_version=locked.version,
            )
            attempt_touch(locked.attempt_id)
            transaction.on_commit(lambda: grading_enqueue(submission.pk))
    except IntegrityError:  # the other request of a concurrent double submit won
        return SubmitOutcome(
            Submission.objects.get(answer=answer, draft_version=answer.version), False
        )
    extensions.answer_submitted(answer, submission)
    return SubmitOutcome(submission, True)


def grading_enqueue(submission_id: int, *, delay_s: float = 0) -> None:
    """Queue the grading task; a queue that is down leaves the submission for the sweeper."""
    try:
        task = grade_submission
        if delay_s:
            task = task.using(run_after=timezone.now() + timedelta(seconds=delay_s))
        task.enqueue(submission_id)
    except Exception:  # the submission is saved; grading_requeue_stale picks it up later
        log.exception("could not enqueue grading of submission %s", submission_id)


@task(queue_name="grading")
def grade_submission(submission_id: int) -> str:
    """The grading task: grade one submission. Idempotent: a re-run after a crash upserts,
    never duplicates. It lives beside `grading_enqueue`, which queues it, so that enqueueing
    and grading need no module that imports the other back."""
    submission = submission_grade(submission_id=submission_id)
    return submission.grade_status if submission else "missing"


def grading_tries_cap() -> int:
    """How many times a submission is handed to the grading task at most: the backoff steps,
    the tail at the longest interval, and the first try."""
    return len(settings.GRADING_RETRY_BACKOFF_S) + settings.GRADING_RETRY_TAIL + 1


def grading_requeue_stale(*, older_than_s: int = 120) -> int:
    """Re-queue submissions stuck in queued/grading (a crashed worker); returns how many.

    One that has used up its tries (a bug that crashes the task on it, not a model outage,
    which ends in an offline grade) is not re-queued again: it is marked offline and logged.
    """
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    stuck = Submission.objects.filter(
        grade_status__in=[Submission.GradeStatus.QUEUED, Submission.GradeStatus.GRADING],
        status_changed_at__lt=cutoff,
    )
    for pk in stuck.filter(grade_attempts__gte=grading_tries_cap()).values_list("pk", flat=True):
        log.error("submission %s failed grading %s times; not re-queued", pk, grading_tries_cap())
        Submission.objects.filter(pk=pk).update(
            grade_status=Submission.GradeStatus.OFFLINE, status_changed_at=timezone.now()
        )
        attempt_touch(Submission.objects.values_list("answer__attempt_id", flat=True).get(pk=pk))
    stale = list(stuck.filter(grade_attempts__lt=grading_tries_cap()).values_list("pk", flat=True))
    for pk in stale:
        Submission.objects.filter(pk=pk).update(
            grade_status=Submission.GradeStatus.QUEUED, status_changed_at=timezone.now()
        )
        attempt_touch(Submission.objects.values_list("answer__attempt_id", flat=True).get(pk=pk))
        grading_enqueue(pk)
    return len(stale)


def grading_text(step_key: str, text: str, fields: dict, *, worksheet_text: str = "") -> str:
    """The text the graders read: for clarify the card's values in a form values block, which
    the graders take as context and never quote (`card_as_text`), then the notes the
    candidate typed; for napkin math the worksheet written out (`worksheet_text`), then the
    notes: the lines are the candidate's answer to that step, the notes add to them."""
    if step_key == "clarify":
        return card_as_text({**fields, "notes": text})
    if step_key == "estimate" and worksheet_text:
        return f"{worksheet_text}\n{text}" if text.strip() else worksheet_text
    # The candidate's words open the graded text: they must not pass for a form values block.
    return typed_opening(text)


def submission_grade(*, submission_id: int) -> Submission | None:
    """Grade a submission with every grader that applies; safe to run twice.

    The offline rubric grade is always stored: the keyword matcher's pointers for the
    candidate's self-check (practice.self_check), never a score. With a model configured, the
    model grade is tried too: when it succeeds it is stored beside the offline one, and a gap
    between them larger than DISAGREEMENT_THRESHOLD marks the submission for review; when it
    fails for any reason the submission ends "offline" with the reason on the rubric grade,
    and a re-grade is queued with backoff, a bounded number of times. Grades are upserted per
    (submission, grader), so re-runs never duplicate. No path leaves the submission "grading".
    """
    submission = (
        Submission.objects.select_related("answer__attempt__revision")
        .filter(pk=submission_id)
        .first()
    )
    if submission is None or submission.grade_status == Submission.GradeStatus.DONE:
        return submission
    Submission.objects.filter(pk=submission.pk).update(
        grade_status=Submission.GradeStatus.GRADING,
        status_changed_at=timezone.now(),
        grade_attempts=F("grade_attempts") + 1,
    )
    attempt_touch(submission.answer.attempt_id)
    submission.refresh_from_db()
    try:
        status, review = _grade_with_every_grader(submission)
    except Exception:
        # A bug or a database error, not a model failure (those end in an offline grade):
        # hand it back to the queue so the sweeper retries it, and let the task fail loudly.
        Submission.objects.filter(pk=submission.pk).update(
            grade_status=Submission.GradeStatus.QUEUED, status_changed_at=timezone.now()
        )
        raise
    Submission.objects.filter(pk=submission.pk).update(
        grade_status=status, review_reason=review, status_changed_at=timezone.now()
    )
    attempt_touch(submission.answer.attempt_id)
    submission.refresh_from_db()
    extensions.submission_graded(submission)  # e.g. the app as interviewer asks its probe
    return submission


def _grade_with_every_grader(submission: Submission) -> tuple[str, str]:
    """Store every grade of a submission; return its grade status and any review reason."""
    from grading import GraderConfig, grade, grade_offline, review_reason

    answer = submission.answer
    revision = answer.attempt.revision
    step = step_spec(revision, answer.step_key, answer.follow_up_id)
    context = {
        "slug": revision.question_spec.slug,
        "title": revision.title,
        "brief": revision.question_spec.brief.as_dict(),
        "step_key": answer.step_key,
    }
    worksheet_text = ""
    # The SLO card and the napkin boxes belong to the step's main answer: a follow-up's answer
    # has neither, and checking it as empty ones would blend a 0 into its score.
    if answer.step_key == "clarify" and not answer.follow_up_id:
        review = review_card(submission.fields, revision.question_spec.brief)
        _store(submission, "slo", score=review.score, slo_review=review.to_dict())
    if answer.step_key == "estimate" and not answer.follow_up_id:
        from practice.napkin import submission_checks, worksheet_as_text

        # Every box is checked as submitted, pressed "Check" or not: the submit is the answer.
        checks = submission_checks(attempt=answer.attempt, fields=submission.fields)
        _store_checker(submission, revision, checks)
        worksheet_text = worksheet_as_text(
            attempt=answer.attempt, fields=submission.fields, checks=checks
        )
    text = grading_text(
        answer.step_key, submission.text, submission.fields, worksheet_text=worksheet_text
    )

    # An earlier try's unusable model reply is kept for the audit through later tries.
    earlier_raw = (
        Grade.objects.filter(submission=submission, grader="rubric")
        .values_list("raw_response", flat=True)
        .first()
        or ""
    )
    # The architecture diagram (Mermaid text, practice.diagram) is read by both graders
    # beside the prose: a rubric point may be shown by a path or a node of it.
    diagram = diagram_text(submission.fields)
    rubric = grade_offline(step, text, diagram=diagram)
    _store_result(submission, rubric, graded_text=text)
    try:
        config = GraderConfig.from_settings(settings.GRADER)
    except ValueError as exc:  # a retry cannot fix the settings: say so once, do not queue
        _store_fallback_reason(submission, f"grader settings invalid: {exc}")
        return Submission.GradeStatus.OFFLINE, ""
    if not config.configured:
        return Submission.GradeStatus.DONE, ""

    backoff = settings.GRADING_RETRY_BACKOFF_S
    tries_left = submission.grade_attempts <= len(backoff) + settings.GRADING_RETRY_TAIL
    if submission.grade_attempts > grading_tries_cap():
        # Reached through the sweeper after the last scheduled try: no more model calls.
        _store_fallback_reason(submission, "model unavailable; no tries left")
        return Submission.GradeStatus.OFFLINE, ""
    raw_response, unusable = "", ""
    try:
        result = grade(
            step, text, mode="auto", context=context, config=config, cache=cache, diagram=diagram
        )
    except Exception as exc:  # whatever breaks in the model path, the answer stays saved
        log.exception("model grading of submission %s failed", submission.pk)
        reason = f"model grader error ({type(exc).__name__})"
    else:
        if result.grader == "llm":
            _store_result(submission, result, graded_text=text)
            return Submission.GradeStatus.DONE, review_reason(result, rubric)
        reason = result.fallback_reason or "model unavailable"
        if result.raw_response is not None:
            # The model replied, but with nothing usable: an instructor should look (review
            # queue), and the reply is kept beside the offline grade for the audit.
            raw_response = result.raw_response
            unusable = (
                f"the model's reply could not be used ({reason}); the candidate's self-check "
                "counts until a model grade or a review"
            )
    _store_fallback_reason(submission, reason, raw_response=raw_response or earlier_raw)
    # Back off, then keep trying at the longest interval: a model that is down for hours must
    # still re-grade once it is back. A day of tries is the limit.
    if tries_left:
        step_s = backoff[min(submission.grade_attempts, len(backoff)) - 1]
        grading_enqueue(submission.pk, delay_s=step_s)
    # A retry that finds the model down keeps an earlier try's flag: the submission stays in
    # the review queue until a model grade or an instructor settles it.
    return Submission.GradeStatus.OFFLINE, unusable[:300] or submission.review_reason


def step_spec(
    revision: QuestionRevision, step_key: str, follow_up_id: str = ""
) -> StepSpec | FollowUp:
    """The step (or one of its follow-ups) as the graders read it: prompt, rubric, reference,
    concepts. FlowError when the revision has no such step or follow-up."""
    if extensions.is_extension_follow_up(follow_up_id):
        return extensions.extension_follow_up_spec(revision, step_key, follow_up_id)
    try:
        step = revision.question_spec.step(step_key)
        return step.follow_up(follow_up_id) if follow_up_id else step
    except LookupError:
        raise FlowError(
            "There is no such follow-up." if follow_up_id else "There is no such step."
        ) from None


def _store_result(submission: Submission, result: GradeResult, *, graded_text: str) -> Grade:
    from grading.audit import audited_points

    return _store(
        submission,
        result.grader,
        score=result.score,
        points=audited_points(result, graded_text),
        raw_response=result.raw_response or "",
        misconceptions=[m.to_dict() for m in result.misconceptions],
        feedback=result.feedback,
        model=result.model or "",
        prompt_version=result.prompt_version,
        warnings=result.warnings,
        fallback_reason=(result.fallback_reason or "")[:300],
        latency_ms=result.latency_ms,
        usage={
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
        },
    )


def _store_fallback_reason(submission: Submission, reason: str, raw_response: str = "") -> None:
    """Label the stored offline grade with why the model did not grade (and keep the model's
    unusable reply, when there was one)."""
    Grade.objects.filter(submission=submission, grader="rubric").update(
        fallback_reason=_storable(reason[:300]), raw_response=_storable(raw_response)
    )
    attempt_touch(submission.answer.attempt_id)


def _storable(value: Any) -> Any:
    """`value` with NUL characters removed from every string in it, however nested.

    A model's reply may hold them (raw, or escaped as \\u0000 in its JSON); PostgreSQL refuses
    them in text and JSON columns, which would fail the grading task on every retry."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(v) for v in value]
    return value


def _store(submission: Submission, grader: str, *, score: float, **fields: Any) -> Grade:
    grade, _ = Grade.objects.update_or_create(
        submission=submission, grader=grader, defaults={"score": score, **_storable(fields)}
    )
    attempt_touch(submission.answer.attempt_id)
    return grade


def value_as_displayed(value: float | None, unit: str) -> str:
    """A napkin value as the scorecard shows it beside the answer ("9.5 GB")."""
    from planner.engine import format_number

    return f"{format_number(value)} {unit}".strip() if value is not None else ""


def _store_checker(submission: Submission, revision: QuestionRevision, checks: dict) -> None:
    """The napkin-math verdicts as a grade, with each expected value (revealed on submit)."""
    from planner.engine import evaluate_worksheet, givens_from_estimate

    estimate = revision.question_spec.step("estimate")
    quantities = estimate.quantities
    points, total = [], 0.0
    for qty in quantities:
        check = checks.get(qty.id) or {}
        verdict = check.get("verdict", "unchecked")
        credit = {"correct": 1.0, "close": 0.5}.get(verdict, 0.0)
        total += credit
        givens = givens_from_estimate(estimate.estimate_dict(), upto=qty.id)
        lines = [f"{k} = {v}" for k, v in givens.items()]
        formula = qty.rounded_formula
        target = f"{formula} in {qty.unit}" if qty.unit else formula
        expected = evaluate_worksheet([*lines, target])[-1]
        points.append(
            {
                "id": qty.id,
                "label": qty.label,
                "verdict": verdict,
                "answer": check.get("answer", ""),
                # The candidate's value as the check read it, for the scorecard ("21.54 ms").
                "value": value_as_displayed(check.get("value"), check.get("unit", "")),
                "hint": check.get("hint", ""),
                "expected": expected.display if expected.error is None else "",
            }
        )
    score = total / len(quantities) if quantities else 0.0
    _store(submission, "checker", score=round(score, 3), points=points, feedback="")
