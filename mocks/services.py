"""Mock interviews: a timed session over one attempt, with a person or the app as interviewer.

Every answer is the attempt's and is written through `practice.services` (drafts, submissions,
grading). What is the session's own lives in its event log (`mocks.log`): who
joined, which step is open, the nudges, the follow-ups, the interviewer's scores, the end.

The clock is the server's, and starts when the interviewer joins (or the candidate starts
alone; with the app, at once): a session waiting for its interviewer has no time due and
takes no answers. Nothing runs in a web process between requests: every request or
poll that touches a session calls `session_tick`, which logs a time warning for a step past
its budget, asks the app's follow-ups, and ends a session past its time (saving, submitting
and grading the answers as they stand); the `mock_sweep` command does the same for sessions
nobody is looking at. Each of those writes is guarded (a conditional update, or an event
logged once under the session's row lock), so several processes may notice the same moment.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from grading.types import VERDICTS
from mocks.log import (
    ASK_PREFIX,
    PROBE_PREFIX,
    Kind,
    event_append,
    is_mock_follow_up,
    pending_follow_up,
)
from mocks.models import MockEvent, MockSession
from practice import services as flow
from practice.errors import FlowError
from practice.models import StepAnswer, Submission
from practice.scoring import primary_grade
from questionbank import STEP_KEYS, RubricPoint, StepSpec
from questions.models import QuestionRevision

log = logging.getLogger(__name__)

INVITE_SALT = "mocks.services.invite"
SHARE_SALT = "mocks.services.share"
DEFAULT_TOTAL_MINUTES = 45.0
# The steps answered in prose: the app probes each of these once (clarify is the SLO card,
# estimate the worksheet: their checks already say what is missing).
FREE_TEXT_STEPS = ("architecture", "bottlenecks", "tradeoffs")
NOTE_MAX_CHARS = 1000
# Every nudge is a row, a line in the candidate's panel and in the report: far more than an
# interview needs (two a minute for 45 minutes), so a stuck key or a script stops here.
NUDGES_PER_SESSION = 90
FEEDBACK_MAX_CHARS = 2000
# Where the overall feedback is logged (the step key of its events), and its name in URLs.
OVERALL = ""
OVERALL_SLUG = "overall"


class MockError(FlowError):
    """A mock-session request refused; the message is a sentence for whoever asked."""


class AlreadyRunning(MockError):
    """Start refused: the candidate's mock interview of this question still runs (or waits
    for its interviewer). One clock a question at a time; `session` is the one to go back to."""

    def __init__(self, session: MockSession):
        self.session = session
        state = "still running" if session.started_at else "waiting for your interviewer"
        super().__init__(
            f"Your mock interview of this question is {state}: here it is. "
            "End it before you start another."
        )


# --- starting, the clock, the end ----------------------------------------------------------


def mock_session_start(
    *, user: User, revision: QuestionRevision, mode: str, now: datetime | None = None
) -> MockSession:
    """A new attempt with a clock: the question's total and each step's pace from its file.

    A human-mode session gets its invite link at once (`invite_token`) and waits: its clock
    starts when the interviewer joins (`invite_accept`) or the candidate starts alone
    (`start_alone`). With the app it starts now. Raises AlreadyRunning while the
    candidate's mock of this question runs, and LimitExceeded past the daily attempt quota,
    like any new attempt.
    """
    now = now or timezone.now()
    spec = revision.question_spec
    step_minutes = {s.key: float(s.minutes) for s in spec.steps if s.minutes}
    total = float(spec.minutes or sum(step_minutes.values()) or DEFAULT_TOTAL_MINUTES)
    for key in STEP_KEYS:  # a step without a pace gets an even share of the whole
        step_minutes.setdefault(key, round(total / len(STEP_KEYS), 1))
    # A session whose time ran out unnoticed is ended first (submitting its answers), outside
    # the lock below: that is a lot of writing to hold every other Start of this candidate for.
    running = running_session_of(user=user, question_id=revision.question_id, now=now)
    if running is not None:
        raise AlreadyRunning(running)
    with transaction.atomic():
        # Starts by one candidate run one at a time (two tabs pressing Start at once), so
        # the second finds the session the first made. SQLite serialises writes anyway.
        User.objects.select_for_update().filter(pk=user.pk).first()
        running = _not_ended(user=user, question_id=revision.question_id).first()
        if running is not None:
            raise AlreadyRunning(running)
        if mode not in MockSession.Mode.values:
            raise MockError("Choose who interviews you: a person by link, or the app.")
        attempt = flow.attempt_start(user=user, revision=revision)
        session = MockSession.objects.create(
            attempt=attempt,
            mode=mode,
            started_at=now if mode == MockSession.Mode.APP else None,
            total_minutes=total,
            step_minutes=step_minutes,
        )
        event_append(session_id=session.pk, kind=Kind.STEP_OPENED, step_key=STEP_KEYS[0], at=now)
    if mode == MockSession.Mode.HUMAN:
        invite_issue(session=session, now=now)
    return session


def _not_ended(*, user: User, question_id: int):
    """The candidate's sessions of this question not ended, newest first, as stored (one
    whose time ran out unnoticed among them until `session_tick` ends it)."""
    return (
        MockSession.objects.running()
        .filter(attempt__user=user, attempt__revision__question_id=question_id)
        .select_related("attempt")
        .order_by("-pk")
    )


def running_session_of(*, user: User, question_id: int, now: datetime | None = None):
    """The candidate's mock interview of this question that still runs (or waits for its
    interviewer), if any: one clock a question at a time, so Start leads back to it. A session
    whose time ran out unnoticed is ended here (`session_tick`), and is no longer running."""
    for session in _not_ended(user=user, question_id=question_id):
        session_tick(session, now=now)
        if session.ended_at is None:
            return session
    return None


@dataclass
class Clock:
    """Where a session stands at `now` (seconds throughout)."""

    now: datetime
    ended: bool
    total_s: float
    total_left_s: float
    step_key: str
    step_budget_s: float
    step_used_s: float
    used_by_step: dict[str, float] = field(default_factory=dict)
    # False while a session with a person waits for them: the time shown does not run.
    started: bool = True

    @property
    def step_left_s(self) -> float:
        return self.step_budget_s - self.step_used_s

    @property
    def step_over(self) -> bool:
        return self.step_used_s > self.step_budget_s


def step_times(
    events: list[MockEvent], *, started_at: datetime, until: datetime
) -> tuple[str, dict[str, float]]:
    """The step open now and the seconds spent on each step, from the log's "step opened"
    events: the time between one and the next belongs to the first (up to `until`). A step
    opened before the start counts from the start (the wait for the interviewer is no
    step's time)."""
    used = dict.fromkeys(STEP_KEYS, 0.0)
    current, since = STEP_KEYS[0], started_at
    for event in events:
        if event.kind != Kind.STEP_OPENED or event.at > until:
            continue
        at = max(event.at, started_at)
        used[current] += max(0.0, (at - since).total_seconds())
        current, since = event.step_key, at
    used[current] += max(0.0, (until - since).total_seconds())
    return current, used


def session_clock(session: MockSession, *, now: datetime | None = None) -> Clock:
    """The time left for the whole session and for the open step, computed from the stored
    start and the log (never from a browser's clock). A session not started yet has all
    its time left and none used."""
    now = now or timezone.now()
    events = list(session.events.filter(kind=Kind.STEP_OPENED).order_by("seq"))
    total_s = session.total_minutes * 60
    if session.started_at is None:
        current = events[-1].step_key if events else STEP_KEYS[0]
        return Clock(
            now=now,
            ended=session.ended_at is not None,
            total_s=total_s,
            total_left_s=total_s if not session.ended_at else 0.0,
            step_key=current,
            step_budget_s=float(session.step_minutes.get(current, 0)) * 60,
            step_used_s=0.0,
            used_by_step=dict.fromkeys(STEP_KEYS, 0.0),
            started=False,
        )
    end = session.started_at + timedelta(minutes=session.total_minutes)
    until = min(now, session.ended_at or end, end)
    current, used = step_times(events, started_at=session.started_at, until=until)
    return Clock(
        now=now,
        ended=session.ended_at is not None,
        total_s=total_s,
        total_left_s=max(0.0, (end - now).total_seconds()) if not session.ended_at else 0.0,
        step_key=current,
        step_budget_s=float(session.step_minutes.get(current, 0)) * 60,
        step_used_s=used[current],
        used_by_step=used,
    )


def session_tick(session: MockSession, *, now: datetime | None = None) -> Clock:
    """Bring the session up to `now`: end it when its time is up, else warn once for a step
    past its budget. Returns the clock.

    The live pages call this on GET, and it may write: the clock is the server's, and what
    time has made due (a warning, the end with every answer submitted) must show at either
    party's next poll, not at the worker's next sweep a minute later. It is idempotent: a
    warning is logged once, and only one caller wins the end. It never calls the model: the
    app's follow-ups are asked by the worker (`app_follow_up_ask`). A session not started
    yet has nothing due: no time has run."""
    now = now or timezone.now()
    if session.ended_at is None and session.started_at is not None:
        end = session.started_at + timedelta(minutes=session.total_minutes)
        if now >= end:
            # Dated at the end of its time, however late it is noticed (nobody looking,
            # no worker sweeping): the report and the transcript say when the time ran out.
            session_end(session=session, now=end, reason="time")
        else:
            clock = session_clock(session, now=now)
            if clock.step_over:
                minutes = session.step_minutes.get(clock.step_key)
                event_append(
                    session_id=session.pk,
                    kind=Kind.TIME_WARNING,
                    step_key=clock.step_key,
                    payload={"minutes": minutes},
                    once=True,
                    at=now,
                )
    session.refresh_from_db()
    return session_clock(session, now=now)


def session_end(*, session: MockSession, now: datetime | None = None, reason: str) -> bool:
    """End the session: every answer is saved as it stands, submitted and graded. Returns
    whether this call ended it (another process may have been first; then nothing happens).

    The end is marked before the answers are submitted, so the follow-up gate no longer holds
    them back; a crash in between leaves an ended session without its "ended" event, which
    `mock_sweep` finishes.
    """
    now = now or timezone.now()
    won = MockSession.objects.filter(pk=session.pk, ended_at__isnull=True).update(ended_at=now)
    if not won:
        return False
    session.ended_at = now
    _session_finish(session, reason=reason, now=now)
    return True


def _session_finish(session: MockSession, *, reason: str, now: datetime) -> None:
    submitted = answers_submit_as_they_stand(attempt_id=session.attempt_id)
    flow.attempt_touch(session.attempt_id)  # cached step pages withheld feedback until now
    flow.attempt_finish(attempt_id=session.attempt_id, now=now)
    event_append(
        session_id=session.pk,
        kind=Kind.ENDED,
        payload={"reason": reason, "submitted": submitted},
        once=True,
        at=now,
    )


def answers_submit_as_they_stand(*, attempt_id: int) -> int:
    """Submit every answer of the attempt whose latest draft has text and no submission yet
    (graded like any other); returns how many. Safe to run twice: a draft already submitted
    is skipped, and a draft changed under us (another process doing the same) is left."""
    count = 0
    answers = StepAnswer.objects.filter(attempt_id=attempt_id).select_related("attempt")
    for answer in answers.order_by("pk"):
        has_content = answer.text.strip() or any(
            str(v).strip() for k, v in answer.fields.items() if k != "checks"
        )
        if not has_content:
            continue
        if Submission.objects.filter(answer=answer, draft_version=answer.version).exists():
            continue
        try:
            outcome = flow.step_submit(
                answer=answer,
                text=answer.text,
                fields=answer.fields,
                base_version=answer.version,
                enforce_limits=False,
                as_it_stands=True,
            )
        except FlowError as exc:  # stale (another process), or a follow-up still locked
            log.info("not submitted at the end of the session: answer %s: %s", answer.pk, exc)
            continue
        count += outcome.created
    return count


def mock_sweep(*, now: datetime | None = None) -> int:
    """End every running session whose time is up, finish any ended one whose end was
    interrupted, and ask the app's follow-ups that are due (after a grade, the worker asks at
    once; this catches one a crash left); returns how many sessions it ended. For the
    periodic sweep."""
    now = now or timezone.now()
    ended = 0
    for session in MockSession.objects.running().started():  # a waiting one has no time due
        end = session.started_at + timedelta(minutes=session.total_minutes)
        if now >= end:
            ended += session_end(session=session, now=end, reason="time")
        elif session.mode == MockSession.Mode.APP:
            app_follow_up_ask(session=session)
    for session in MockSession.objects.ended().exclude(events__kind=Kind.ENDED):
        _session_finish(session, reason="time", now=now)
    return ended


def start_alone(*, session: MockSession, user: User, now: datetime | None = None) -> bool:
    """The candidate starts the clock of a session whose interviewer has not joined (they
    may still join later). Returns whether this call started it; a session already started
    is left as it is."""
    if user.pk != session.attempt.user_id:
        raise MockError("Only the candidate starts the session.")
    if session.ended_at is not None:
        raise MockError("This session has ended.")
    now = now or timezone.now()
    with transaction.atomic():
        won = MockSession.objects.filter(
            pk=session.pk, started_at__isnull=True, ended_at__isnull=True
        ).update(started_at=now)
        if won:
            event_append(session_id=session.pk, kind=Kind.STARTED, payload={"alone": True}, at=now)
    session.refresh_from_db()
    return bool(won)


def current_step(session: MockSession) -> str:
    """The step the candidate opened last (what a nudge or a follow-up is about)."""
    last = session.events.filter(kind=Kind.STEP_OPENED).order_by("-seq").first()
    return last.step_key if last else STEP_KEYS[0]


def step_open(*, session: MockSession, step_key: str, now: datetime | None = None) -> None:
    """Log the candidate moving to another step (the time per step is read from these)."""
    if step_key not in STEP_KEYS or session.ended_at is not None:
        return
    with transaction.atomic():
        # An UPDATE that changes nothing still takes the row's (SQLite: the database's) write
        # lock, so two polls cannot both log the same move.
        MockSession.objects.filter(pk=session.pk).update(last_seq=F("last_seq"))
        last = session.events.filter(kind=Kind.STEP_OPENED).order_by("-seq").first()
        if last is None or last.step_key != step_key:
            event_append(session_id=session.pk, kind=Kind.STEP_OPENED, step_key=step_key, at=now)


# --- invite and share links ----------------------------------------------------------------


class LinkRefused(MockError):
    """An invite or share link that does not open: the message says why, for the page."""


def _token(salt: str, session_id: int, nonce: str) -> str:
    # Signed (the secret key) but not timestamped: the expiry is the session's own field, so
    # the candidate's page can show the same link again, and a new link or a revocation
    # (a new nonce) turns every earlier one away.
    return signing.dumps({"s": session_id, "n": nonce}, salt=salt, compress=False)


def invite_issue(*, session: MockSession, now: datetime | None = None) -> str:
    """A fresh invite link for a session nobody has joined (earlier links stop working)."""
    if session.mode != MockSession.Mode.HUMAN:
        raise MockError("The app interviews you in this session: there is nobody to invite.")
    if session.interviewer_id is not None:
        raise MockError("An interviewer has already joined this session.")
    if session.ended_at is not None:
        raise MockError("This session has ended.")
    now = now or timezone.now()
    session.invite_nonce = secrets.token_hex(8)
    session.invite_expires_at = now + timedelta(hours=settings.MOCK_INVITE_HOURS)
    session.invite_used_at = None
    session.invite_revoked_at = None
    session.save(
        update_fields=["invite_nonce", "invite_expires_at", "invite_used_at", "invite_revoked_at"]
    )
    return invite_token(session)


def invite_token(session: MockSession, *, now: datetime | None = None) -> str:
    """The live invite link's token, or "" when there is none (revoked, used, expired or never
    made): the candidate's page must not offer a link that would be refused."""
    if not session.invite_nonce or session.invite_used_at or session.invite_revoked_at:
        return ""
    if invite_expired(session, now=now):
        return ""
    return _token(INVITE_SALT, session.pk, session.invite_nonce)


def invite_expired(session: MockSession, *, now: datetime | None = None) -> bool:
    return bool(session.invite_expires_at) and (now or timezone.now()) >= session.invite_expires_at


def invite_revoke(*, session: MockSession, now: datetime | None = None) -> None:
    """Revoke the invite link: it is refused from now on, used or not."""
    MockSession.objects.filter(pk=session.pk).update(
        invite_nonce="", invite_revoked_at=now or timezone.now()
    )


def _unsign(salt: str, token: str) -> dict:
    try:
        data = signing.loads(token, salt=salt)
    except signing.BadSignature:
        raise LinkRefused(
            "This link is not valid: it was changed or cut short. Ask for the link again and "
            "copy it whole."
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("s"), int):
        raise LinkRefused("This link is not valid.")
    return data


def invite_check(
    *, session_id: int, token: str, user: User, now: datetime | None = None
) -> MockSession:
    """The session an invite link would let `user` into, without using the link up.

    Raises LinkRefused, with a sentence for the page, for a changed signature, a link for
    another session, a revoked, used or expired link, the candidate themself, or a session
    that has ended.
    """
    now = now or timezone.now()
    data = _unsign(INVITE_SALT, token)
    if data["s"] != session_id:
        raise LinkRefused("This invite link belongs to another mock session.")
    session = MockSession.objects.select_related("attempt").filter(pk=session_id).first()
    if session is None:
        raise LinkRefused("This mock session no longer exists.")
    if session.invite_revoked_at or data.get("n") != session.invite_nonce:
        raise LinkRefused("This invite link was revoked by the candidate. Ask them for a new one.")
    if session.invite_used_at:
        raise LinkRefused(
            "This invite link has already been used: each link lets one interviewer in, once."
        )
    if invite_expired(session, now=now):
        raise LinkRefused("This invite link has expired. Ask the candidate for a new one.")
    if session.attempt.user_id == user.pk:
        raise LinkRefused(
            "This is your own session: send the link to the person who will interview you."
        )
    if session.ended_at:
        raise LinkRefused("This mock session has ended.")
    return session


def invite_accept(
    *, session_id: int, token: str, user: User, now: datetime | None = None
) -> MockSession:
    """Let `user` in as the interviewer of the session the link names, once (refusals as
    `invite_check`; of two people opening it at the same moment, one gets in)."""
    now = now or timezone.now()
    session = invite_check(session_id=session_id, token=token, user=user, now=now)
    won = MockSession.objects.filter(
        pk=session.pk, invite_used_at__isnull=True, invite_nonce=session.invite_nonce
    ).update(
        invite_used_at=now,
        interviewer=user,
        # The clock starts now, unless the candidate already started without them.
        started_at=Coalesce(F("started_at"), Value(now)),
    )
    if not won:  # someone else opened it at the same moment
        raise LinkRefused(
            "This invite link has already been used: each link lets one interviewer in, once."
        )
    event_append(
        session_id=session.pk, kind=Kind.JOINED, payload={"interviewer": user.get_username()}
    )
    session.refresh_from_db()
    return session


def share_issue(*, session: MockSession) -> str:
    """A read-only link to the session's report (a new one replaces any earlier link); only
    once the session has ended, when the report exists."""
    if session.ended_at is None:
        raise MockError("The report, and a link to it, come when the session ends.")
    session.share_nonce = secrets.token_hex(8)
    session.save(update_fields=["share_nonce"])
    return share_token(session)


def share_token(session: MockSession) -> str:
    return _token(SHARE_SALT, session.pk, session.share_nonce) if session.share_nonce else ""


def share_revoke(*, session: MockSession) -> None:
    MockSession.objects.filter(pk=session.pk).update(share_nonce="")


def share_resolve(token: str) -> MockSession:
    """The session a share link opens; LinkRefused when it is changed or revoked."""
    data = _unsign(SHARE_SALT, token)
    session = MockSession.objects.filter(pk=data["s"]).first()
    if session is None or not session.share_nonce or data.get("n") != session.share_nonce:
        raise LinkRefused("This report link was revoked, or never existed.")
    return session


# --- the interviewer -----------------------------------------------------------------------


def _running(session: MockSession, *, now: datetime | None = None) -> None:
    """Refuse what only a running session takes: one that has ended, or is past its time
    and about to (the next poll or sweep ends it; the candidate can answer nothing now)."""
    if session.ended_at is not None:
        raise MockError("This session has ended.")
    end = session.started_at and session.started_at + timedelta(minutes=session.total_minutes)
    if end and (now or timezone.now()) >= end:
        raise MockError(
            "Time is up for this mock interview, so this was not sent: the session ends now "
            "and the report follows."
        )


def _note(text: str, what: str) -> str:
    text = (text or "").strip()
    if not text:
        raise MockError(f"Write the {what} first.")
    if len(text) > NOTE_MAX_CHARS:
        # As an answer past its limit: how long it is against the limit, and the box (no
        # maxlength to cut a paste short) keeps it to shorten.
        raise MockError(
            f"This {what} is {len(text):,} characters; the limit is {NOTE_MAX_CHARS:,}, so it "
            "was not sent. Shorten it and send it again."
        )
    return text


def nudge_send(*, session: MockSession, text: str) -> MockEvent:
    """A nudge from the interviewer, shown to the candidate and logged."""
    _running(session)
    text = _note(text, "nudge")
    if session.events.filter(kind=Kind.NUDGE).count() >= NUDGES_PER_SESSION:
        raise MockError(
            f"This session has had its {NUDGES_PER_SESSION} nudges, so this one was not sent; "
            "ask a follow-up question instead."
        )
    event = event_append(
        session_id=session.pk,
        kind=Kind.NUDGE,
        step_key=current_step(session),
        payload={"text": text},
    )
    assert event is not None
    return event


def follow_up_ask(*, session: MockSession, text: str) -> MockEvent:
    """An interviewer's own follow-up on the step the candidate is on; the candidate must
    answer it before submitting anything else. One at a time."""
    _running(session)
    text = _note(text, "follow-up question")
    if pending_follow_up(session) is not None:
        raise MockError("The candidate has not answered your last follow-up yet.")
    number = session.events.filter(kind=Kind.FOLLOW_UP_ASKED).count() + 1
    event = event_append(
        session_id=session.pk,
        kind=Kind.FOLLOW_UP_ASKED,
        step_key=current_step(session),
        payload={"follow_up_id": f"{ASK_PREFIX}{number}", "prompt": text, "by": "interviewer"},
    )
    assert event is not None
    return event


def session_submission_ids(session: MockSession) -> set[int]:
    """The submissions made during the session, the end's own included: those logged before
    its "ended" event. The attempt keeps what the candidate submits later; the session's
    scores and report do not count it."""
    events = session.events.filter(kind__in=[Kind.SUBMITTED, Kind.FOLLOW_UP_ANSWERED])
    ended = session.events.filter(kind=Kind.ENDED).values_list("seq", flat=True).first()
    if ended is not None:
        events = events.filter(seq__lt=ended)
    return {e.payload.get("submission_id") for e in events}


def latest_main_submission(session: MockSession, step_key: str) -> Submission | None:
    """The step's last main-answer submission made during the session."""
    return (
        Submission.objects.filter(
            pk__in=session_submission_ids(session),
            answer__step_key=step_key,
            answer__follow_up_id="",
        )
        .order_by("-number")
        .first()
    )


def latest_main_submissions(session: MockSession) -> dict[str, Submission]:
    """`latest_main_submission` of every step at once, by step key (a step with none left
    out), each with its grades and self-check loaded: the same few queries for five steps."""
    rows = (
        Submission.objects.filter(pk__in=session_submission_ids(session), answer__follow_up_id="")
        .select_related("answer", "self_check")
        .prefetch_related("grades")
        .order_by("number")
    )
    return {s.answer.step_key: s for s in rows}  # the highest number last, so it stays


def interviewer_scores(session: MockSession) -> dict[str, dict]:
    """The interviewer's scores by step key ({"verdicts": {point id: verdict}}); the
    communication score under "" ({"communication": verdict})."""
    return {e.step_key: e.payload for e in session.events.filter(kind=Kind.SCORED).order_by("seq")}


def step_score_blind(*, session: MockSession, step_key: str, verdicts: dict[str, str]) -> MockEvent:
    """The interviewer's verdict on each rubric point of a submitted step, given before the
    graders' are shown; once per step (a score changed after seeing the graders' is not
    blind)."""
    if step_key not in STEP_KEYS:
        raise MockError("There is no such step.")
    submission = latest_main_submission(session, step_key)
    if submission is None:
        raise MockError("Score a step once the candidate has submitted it.")
    rubric = session.attempt.revision.question_spec.step(step_key).rubric
    missing = [p.says for p in rubric if verdicts.get(p.id) not in VERDICTS]
    if missing:
        raise MockError(f"Give every rubric point a verdict (missing: {missing[0]}).")
    event = event_append(
        session_id=session.pk,
        kind=Kind.SCORED,
        step_key=step_key,
        payload={
            "verdicts": {p.id: verdicts[p.id] for p in rubric},
            "submission_id": submission.pk,
        },
        once=True,
    )
    if event is None:
        raise MockError("You have already scored this step.")
    return event


def feedback_write(*, session: MockSession, user: User, step_key: str, text: str) -> MockEvent:
    """The interviewer's written feedback on a step (`OVERALL` for the whole session); the
    latest per step counts, an empty text clears it. Only the session's interviewer writes
    it, while the session runs or after its end (feedback is often written right after)."""
    if session.interviewer_id is None or user.pk != session.interviewer_id:
        raise MockError("Only the session's interviewer writes its feedback.")
    if step_key != OVERALL and step_key not in STEP_KEYS:
        raise MockError("There is no such step.")
    text = (text or "").strip()
    if len(text) > FEEDBACK_MAX_CHARS:
        raise MockError(
            f"This feedback is {len(text):,} characters; the limit is {FEEDBACK_MAX_CHARS:,}, "
            "so it was not saved. Shorten it and save it again."
        )
    event = event_append(
        session_id=session.pk, kind=Kind.FEEDBACK, step_key=step_key, payload={"text": text}
    )
    assert event is not None
    return event


def interviewer_feedback(session: MockSession) -> dict[str, str]:
    """The interviewer's latest feedback by step key (`OVERALL` for the whole session);
    cleared ones left out."""
    latest = {
        e.step_key: e.payload.get("text", "")
        for e in session.events.filter(kind=Kind.FEEDBACK).order_by("seq")
    }
    return {key: text for key, text in latest.items() if text}


def communication_score(*, session: MockSession, verdict: str) -> MockEvent:
    """The interviewer's score for communication (only a person can give it); once."""
    if verdict not in VERDICTS:
        raise MockError("Choose hit, partial or miss for communication.")
    event = event_append(
        session_id=session.pk,
        kind=Kind.SCORED,
        step_key="",
        payload={"communication": verdict},
        once=True,
    )
    if event is None:
        raise MockError("You have already scored communication.")
    return event


# --- the app as interviewer ----------------------------------------------------------------


def _graded(submission: Submission | None) -> bool:
    return submission is not None and submission.grade_status in (
        Submission.GradeStatus.DONE,
        Submission.GradeStatus.OFFLINE,
    )


def app_probe_point(step: StepSpec, submission: Submission) -> RubricPoint | None:
    """The rubric point the app's follow-up on a graded submission aims at, or None.

    With an instructor's or the model's verdicts (the primary grade), the heaviest point they
    missed, then the heaviest partial (`weakest_point`). Without them only the offline matcher
    read the answer, and it decides nothing: the heaviest point it found no sentence and no
    word for, and that the candidate did not rate covered in a self-check
    (`open_question_point`), asked by its authored probe, an open question."""
    from grading.probe import open_question_point, weakest_point

    grades = list(submission.grades.all())
    grade = primary_grade(grades)
    if grade is not None and grade.grader in ("instructor", "llm"):
        return weakest_point(step.rubric, grade.points)
    matcher = next((g for g in grades if g.grader == "rubric"), None)
    if matcher is None:
        return None
    own = next((g for g in grades if g.grader == "self"), None)
    ratings = {
        p.get("id"): {"hit": "covered", "partial": "partly"}.get(p.get("verdict"), "not")
        for p in (own.points if own else [])
    }
    answer = flow.grading_text(submission.answer.step_key, submission.text, submission.fields)
    return open_question_point(step.rubric, matcher.points, answer, self_ratings=ratings)


def app_follow_up_due(session: MockSession) -> tuple[str, RubricPoint] | None:
    """The next probe the app should ask, as (step key, rubric point), or None.

    After the authored follow-ups of a step (trade-offs has them), once per free-text step,
    when its latest main submission is graded: the point `app_probe_point` picks. One
    follow-up at a time.
    """
    if pending_follow_up(session) is not None:
        return None
    asked = set(session.events.filter(kind=Kind.FOLLOW_UP_ASKED).values_list("step_key", flat=True))
    spec = session.attempt.revision.question_spec
    for step_key in FREE_TEXT_STEPS:
        if step_key in asked:
            continue
        submission = latest_main_submission(session, step_key)
        if not _graded(submission):
            continue
        step = spec.step(step_key)
        authored = {fu.id for fu in step.follow_ups}
        answered = set(
            Submission.objects.filter(
                answer__attempt_id=session.attempt_id, answer__follow_up_id__in=authored
            ).values_list("answer__follow_up_id", flat=True)
        )
        if authored - answered:
            continue
        point = app_probe_point(step, submission)
        if point is not None:
            return step_key, point
    return None


def app_follow_up_ask(*, session: MockSession) -> MockEvent | None:
    """Ask the probe that is due (`app_follow_up_due`), reworded by the model when it is
    reachable; logged once per step however many processes get here. Called by the worker
    (after a grade of the session's, and in the sweep), never inside a request: rewording
    waits on the model."""
    from grading import GraderConfig
    from grading.health import model_is_up
    from grading.probe import Probe, probe_text, reword_probe

    due = app_follow_up_due(session)
    if due is None:
        return None
    step_key, point = due
    try:
        config = GraderConfig.from_settings(settings.GRADER)
    except ValueError:
        config = GraderConfig()
    submission = latest_main_submission(session, step_key)
    if config.configured and model_is_up(config, cache=cache):
        probe = reword_probe(point, submission.text if submission else "", config=config)
    else:
        probe = Probe(probe_text(point), False, "model unavailable")
    return event_append(
        session_id=session.pk,
        kind=Kind.FOLLOW_UP_ASKED,
        step_key=step_key,
        payload={
            "follow_up_id": f"{PROBE_PREFIX}{point.id}",
            "prompt": probe.text,
            "authored": probe_text(point),
            "point": point.id,
            "reworded": probe.reworded,
            "by": "app",
        },
        once=True,
    )


# --- the candidate's answer to a follow-up -------------------------------------------------


def follow_up_answer(*, session: MockSession, event: MockEvent) -> StepAnswer:
    """The candidate's draft for a follow-up asked in the session (created on first use)."""
    follow_up_id = event.payload.get("follow_up_id", "")
    if not is_mock_follow_up(follow_up_id):
        raise MockError("There is no such follow-up.")
    return flow.answer_open(
        attempt=session.attempt, step_key=event.step_key, follow_up_id=follow_up_id
    )


def follow_up_event(session: MockSession, follow_up_id: str) -> MockEvent:
    event = next(
        (
            e
            for e in session.events.filter(kind=Kind.FOLLOW_UP_ASKED)
            if e.payload.get("follow_up_id") == follow_up_id
        ),
        None,
    )
    if event is None:
        raise MockError("There is no such follow-up.")
    return event
