"""A mock session's append-only event log, and the few mock rules the practice flow obeys.

`practice.services` calls the hooks here (a draft saved, a step submitted, the follow-up gate,
the spec of a follow-up the interviewer asked), so this module imports nothing from the flow;
the mock services (`mocks.services`) build on both.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from mocks.models import MockEvent, MockSession
from practice.diagram import diagram_text
from practice.errors import FlowError
from practice.models import StepAnswer, Submission
from practice.slo import CARD_FIELD_NAMES
from questionbank import FollowUp, RubricPoint
from questions.models import QuestionRevision

# Follow-ups asked in a mock session live in the attempt beside the authored ones, under ids
# no question file can use (authored ids are lowercase letters, digits, '-' and '_'):
# "mock:ask-N" for an interviewer's own question, "mock:probe-POINT" for the app's probe.
MOCK_PREFIX = "mock:"
ASK_PREFIX = MOCK_PREFIX + "ask-"
PROBE_PREFIX = MOCK_PREFIX + "probe-"


class Kind:
    """The event kinds (a plain namespace: the log stores the strings)."""

    JOINED = "joined"
    STARTED = "started"  # the candidate started without the interviewer
    STEP_OPENED = "step_opened"
    DRAFT_SAVED = "draft_saved"
    SUBMITTED = "submitted"
    NUDGE = "nudge"
    TIME_WARNING = "time_warning"
    FOLLOW_UP_ASKED = "follow_up_asked"
    FOLLOW_UP_ANSWERED = "follow_up_answered"
    SCORED = "scored"
    FEEDBACK = "feedback"  # the interviewer's written feedback on a step, or overall ("")
    ENDED = "ended"


# What the candidate's panel shows; everything else is for the interviewer and the report.
CANDIDATE_KINDS = (
    Kind.NUDGE,
    Kind.TIME_WARNING,
    Kind.FOLLOW_UP_ASKED,
    Kind.FOLLOW_UP_ANSWERED,
    Kind.ENDED,
)


def is_mock_follow_up(follow_up_id: str) -> bool:
    return follow_up_id.startswith(MOCK_PREFIX)


def event_append(
    *,
    session_id: int,
    kind: str,
    step_key: str = "",
    payload: dict[str, Any] | None = None,
    once: bool = False,
    at=None,
) -> MockEvent | None:
    """Append an event with the session's next sequence number; returns it.

    The number is taken by an UPDATE first, which locks the session's row (PostgreSQL) or the
    database (SQLite) until the transaction ends, so two processes never write the same `seq`
    and the `once` check below cannot race. With `once`, nothing is written (None returned)
    when the session already has an event of this kind for this step: a time warning or an
    end is logged once however many polls notice it.
    """
    with transaction.atomic():
        MockSession.objects.filter(pk=session_id).update(last_seq=F("last_seq") + 1)
        if (
            once
            and MockEvent.objects.filter(
                session_id=session_id, kind=kind, step_key=step_key
            ).exists()
        ):
            transaction.set_rollback(True)  # give the number back
            return None
        seq = MockSession.objects.filter(pk=session_id).values_list("last_seq", flat=True).get()
        return MockEvent.objects.create(
            session_id=session_id,
            seq=seq,
            kind=kind,
            step_key=step_key,
            payload=payload or {},
            at=at or timezone.now(),
        )


def _live_session_id(attempt_id: int) -> int | None:
    return (
        MockSession.objects.running().for_attempt(attempt_id).values_list("pk", flat=True).first()
    )


def feedback_withheld(attempt_id: int) -> bool:
    """Whether the attempt is a mock session still running: its candidate sees no verdicts,
    rubric or reference answer until the end (the report has them all)."""
    return _live_session_id(attempt_id) is not None


class SessionNotStarted(FlowError):
    """A session with a person that waits for them: no answer is written off the clock."""

    message = (
        "This mock interview has not started yet, so this was not saved: the clock starts "
        "when your interviewer joins, or when you start without them on the session page."
    )


class SessionTimeUp(FlowError):
    """The mock session's time is up: nothing more is saved or submitted."""

    message = (
        "Time is up for this mock interview, so this was not saved: your answers go in "
        "as they stood at the end, and the report follows."
    )


def deadline_gate(answer: StepAnswer) -> None:
    """Flow hook before a draft save or a submit: a running mock session past its time takes
    nothing more (its end, by the next poll or the worker's sweep, submits the answers as
    they stood), and one not started yet takes nothing either (its time does not run, so
    an answer written then would be off the clock). The server's clock decides, never the
    browser's."""
    session = (
        MockSession.objects.running()
        .for_attempt(answer.attempt_id)
        .only("started_at", "total_minutes")
        .first()
    )
    if session is None:
        return
    if session.started_at is None:
        raise SessionNotStarted()
    if timezone.now() >= session.started_at + timedelta(minutes=session.total_minutes):
        raise SessionTimeUp()


def draft_saved(answer: StepAnswer) -> None:
    """Flow hook: log the saved text of a mock session's answer (the live view and the
    replay read these). A plain attempt costs one indexed lookup."""
    session_id = _live_session_id(answer.attempt_id)
    if session_id is None:
        return
    event_append(
        session_id=session_id,
        kind=Kind.DRAFT_SAVED,
        step_key=answer.step_key,
        payload={
            "follow_up_id": answer.follow_up_id,
            "version": answer.version,
            "text": answer.text,
            # The architecture diagram as saved with it (Mermaid text), when there is one.
            **({"diagram": diagram} if (diagram := diagram_text(answer.fields)) else {}),
            # The SLO card's values as saved with it (clarify), when any is filled.
            **({"card": card} if (card := _card_values(answer)) else {}),
            # The napkin worksheet and the quantity boxes as saved with it (estimate).
            **_napkin_values(answer),
        },
    )


def _napkin_values(answer: StepAnswer) -> dict:
    if answer.step_key != "estimate" or answer.follow_up_id:
        return {}
    fields = answer.fields or {}
    values: dict = {}
    if worksheet := str(fields.get("worksheet") or ""):
        values["worksheet"] = worksheet
    if quantities := {k: str(v) for k, v in (fields.get("answers") or {}).items() if str(v)}:
        values["quantities"] = quantities
    return values


def _card_values(answer: StepAnswer) -> dict[str, str]:
    if answer.step_key != "clarify" or answer.follow_up_id:
        return {}
    fields = answer.fields or {}
    return {name: str(fields[name]) for name in CARD_FIELD_NAMES if str(fields.get(name) or "")}


def answer_submitted(answer: StepAnswer, submission: Submission) -> None:
    """Flow hook: log a submission of a mock session's answer (follow-ups answered too)."""
    session = MockSession.objects.for_attempt(answer.attempt_id).first()
    if session is None:
        return
    payload = {
        "follow_up_id": answer.follow_up_id,
        "submission_id": submission.pk,
        "number": submission.number,
        "text": submission.text,
    }
    kind = Kind.FOLLOW_UP_ANSWERED if is_mock_follow_up(answer.follow_up_id) else Kind.SUBMITTED
    event_append(session_id=session.pk, kind=kind, step_key=answer.step_key, payload=payload)


def pending_follow_up(session: MockSession) -> MockEvent | None:
    """The follow-up asked in this session that has no submitted answer yet, if any."""
    asked = list(session.events.filter(kind=Kind.FOLLOW_UP_ASKED).order_by("seq"))
    if not asked:
        return None
    answered = set(
        Submission.objects.filter(
            answer__attempt_id=session.attempt_id, answer__follow_up_id__startswith=MOCK_PREFIX
        ).values_list("answer__follow_up_id", flat=True)
    )
    return next((e for e in asked if e.payload.get("follow_up_id") not in answered), None)


class FollowUpPending(FlowError):
    """The interviewer asked a follow-up that the candidate has not answered yet."""

    message = (
        "Answer the interviewer's follow-up first (in the panel above), then submit this "
        "answer: what you wrote here stays in its box."
    )


class FollowUpAnswered(FlowError):
    """A follow-up asked in a session is answered once: the log and the report hold that one."""

    message = (
        "This follow-up is answered already (from another tab, or before going back): "
        "your first answer stands."
    )


def follow_up_gate(answer: StepAnswer) -> None:
    """Flow hook before a submission: while the session runs, a pending follow-up of the
    interviewer's must be answered before any other answer is submitted; and a follow-up
    asked in a session takes one answer."""
    if is_mock_follow_up(answer.follow_up_id):
        if answer.submissions.exists():
            raise FollowUpAnswered()
        return
    session = MockSession.objects.running().for_attempt(answer.attempt_id).first()
    if session is not None and pending_follow_up(session) is not None:
        raise FollowUpPending()


def follow_up_spec(revision: QuestionRevision, step_key: str, follow_up_id: str) -> FollowUp:
    """What the graders read for a follow-up asked in a mock session.

    The app's probe is graded against the one rubric point it aims at; an interviewer's own
    question against the step's rubric (it adds to the step's answer). The prompt is the
    point's authored probe; the words actually asked are in the session's log.
    Raises FlowError for an id that names nothing in this revision.
    """
    step = revision.question_spec.step(step_key)
    if follow_up_id.startswith(PROBE_PREFIX):
        point = _point(step.rubric, follow_up_id.removeprefix(PROBE_PREFIX))
        if point is None:
            raise FlowError("There is no such follow-up.")
        return FollowUp(
            id=follow_up_id,
            prompt=point.probe or point.says,
            reference=step.reference,
            rubric=(point,),
            concepts=point.concepts,
        )
    if follow_up_id.startswith(ASK_PREFIX) and follow_up_id.removeprefix(ASK_PREFIX).isdigit():
        return FollowUp(
            id=follow_up_id,
            prompt="",
            reference=step.reference,
            rubric=step.rubric,
            concepts=step.concepts,
        )
    raise FlowError("There is no such follow-up.")


def _point(rubric: tuple[RubricPoint, ...], point_id: str) -> RubricPoint | None:
    return next((p for p in rubric if p.id == point_id), None)
