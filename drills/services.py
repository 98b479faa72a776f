"""Writes: starting drill sets, answering drills, and reviewing the FSRS cards those answers
and the candidate's graded steps decide.

A card is graded from a verdict, never from what the candidate says of themselves: a drill's
from the napkin checker's verdict (`RATINGS`), a concept's from the step's primary verdict
(instructor, model, self-check: practice.scoring.primary_grade) on the rubric points that link
the concept. A drill set is one review of each kind's card, and a question's attempt one review
of each concept's card, rated by its worst answer (`card_review`).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta

from django.contrib.auth.models import User
from django.db import models, transaction
from django.utils import timezone
from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler

from drills import engine
from drills.models import Assignment, Card, ConceptSync, DrillItem, DrillSet
from planner.engine import CheckResult, NapkinError
from practice.extensions import is_extension_follow_up
from practice.models import Attempt, Grade
from practice.scoring import VERDICT_ORDER, primary_grade
from questions.models import Question, QuestionRevision

SET_SIZE = 5
# Fuzzing spreads a cohort's reviews over neighbouring days at random; one candidate's
# schedule must be the same every time it is computed (and tested), so it is off. One learning
# step of a minute: a miss (Again, Hard) is due again at once, for the next set to take up,
# while a right answer goes straight to days. FSRS's default second step (ten minutes) brought
# every kind of a set answered right back "due today" right after the set. A set with a miss
# stays a miss however it ends: it is one review, rated by its worst answer (`card_review`).
ONE_MINUTE = timedelta(minutes=1)
SCHEDULER = Scheduler(
    enable_fuzzing=False, learning_steps=(ONE_MINUTE,), relearning_steps=(ONE_MINUTE,)
)
# The checker's verdict on a drill as an FSRS rating.
RATINGS = {
    "correct": Rating.Good,
    "close": Rating.Hard,
    "not_rounded": Rating.Hard,
    "known_mistake": Rating.Again,
    "wrong_unit": Rating.Again,
    "wrong": Rating.Again,
}
# Tries at a fresh seed before a drill repeats givens the candidate has seen: the small kinds
# (a model × a dtype) run out, and then the givens seen longest ago come back.
FRESH_TRIES = 40


def clock() -> datetime:
    """Now; the one place drills read the time, so a test can fix it."""
    return timezone.now()


def end_of_today(now: datetime) -> datetime:
    """Midnight after `now`, in the site's time zone (UTC)."""
    local = timezone.localtime(now)
    return timezone.make_aware(datetime.combine(local.date() + timedelta(days=1), time.min))


def due_today(cards: models.QuerySet[Card], now: datetime) -> models.QuerySet[Card]:
    """Of `cards`, those due by the end of today, soonest first: what "Due today" lists, and
    what a mixed set takes first, so the two always agree. Cards scheduled from one grade
    share their due time: "pk" keeps them in one order on every database (PostgreSQL returns
    ties in any order)."""
    return cards.filter(due__lt=end_of_today(now)).order_by("due", "pk")


WITHDRAWN_DRILL = (
    "This kind of drill is no longer offered, so it cannot be answered; the rest of the set "
    "goes on."
)


class DrillAnswerError(Exception):
    """An answer that cannot be taken, told in one sentence; `status` is the HTTP status."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def card_review(
    *,
    user: User,
    key: str,
    source: str,
    rating: Rating,
    now: datetime,
    session: str = "",
    answer: str = "",
) -> Card:
    """Review the user's card `key` with `rating` at `now` (a new card when there is none),
    and store FSRS's next state and due date.

    With `session` (a drill set, a question's attempt), the session is one review of the card,
    rated by its worst `answer` so far (any Again: Again, else any Hard: Hard, else Good): the
    first answer of a session reviews the card, and each later one re-rates that review from
    the state before it, at `now`. An answer rated again (an instructor's review of a graded
    step) replaces its rating. A session that another on the same card came between starts a
    review of its own. Without `session`, each call is a review of its own.

    Why one review a session: answers minutes apart in one sitting are not spaced reviews.
    Reviewed one by one, a set's last Good would take a card missed minutes before out of its
    one-minute learning step to days away, and a mostly wrong set would not be due again
    today. Re-rating as each answer comes, rather than once when the set ends, keeps what a
    set left midway had answered, with no "finished" event to wait for."""
    card, _ = Card.objects.select_for_update().get_or_create(
        user=user, key=key, defaults={"source": source, "due": now, "state": {}}
    )
    ratings: dict[str, int] = {}
    base = card.state
    held = card.session_base or {}
    # A session's record without its ratings or its state before (only a hand-edited row) is
    # no session to go on with: the answer starts a review of its own.
    if session and card.session == session and held.get("ratings") and "state" in held:
        # Undo the session's review before rating it again.
        ratings = dict(held["ratings"])
        base = held["state"]
        card.reviews -= 1
        card.lapses -= min(ratings.values()) == Rating.Again
    ratings[answer] = int(rating)
    rated = Rating(min(ratings.values()))
    state = FsrsCard.from_dict(base) if base else FsrsCard(due=now)
    state, _log = SCHEDULER.review_card(state, rated, now)
    card.session = session
    card.session_base = {"state": base, "ratings": ratings} if session else {}
    card.state = state.to_dict()
    card.due = state.due
    card.last_review = now
    card.reviews += 1
    card.lapses += rated == Rating.Again
    card.save()
    return card


def _kinds_for_set(user: User, now: datetime) -> list[str]:
    """Five kinds for a mixed set: those due today (`due_today`, soonest first), then kinds
    never drilled, then the rest by due date."""
    drill_cards = Card.objects.owned_by(user).filter(source=Card.Source.DRILL)
    due = [c.subject for c in due_today(drill_cards, now) if c.subject in engine.AVAILABLE]
    cards = {c.subject: c for c in drill_cards.order_by("due", "pk")}
    fresh = [k for k in engine.AVAILABLE if k not in cards]
    later = [k for k in cards if k in engine.AVAILABLE and k not in due]
    return (due + fresh + later)[:SET_SIZE]


def _seen_fingerprints(user: User, kind: str) -> set[str]:
    """The givens of `kind` the user has been shown: every drill of theirs stored."""
    return set(
        DrillItem.objects.owned_by(user).filter(kind=kind).values_list("fingerprint", flat=True)
    )


def _fresh_drill(user: User, kind: str, taken: set[str]) -> engine.Drill:
    """A drill of `kind` with givens the user has not had (in `taken` or stored), drawing a
    new random seed each try; after FRESH_TRIES, the last one drawn."""
    seen = _seen_fingerprints(user, kind)
    drill = None
    for _ in range(FRESH_TRIES):
        drill = engine.drill_generate(kind, secrets.randbelow(2**53))
        if drill.fingerprint not in seen and drill.fingerprint not in taken:
            break
    assert drill is not None
    return drill


def drill_set_check(*, kind: str = "", seed: int | None = None) -> None:
    """engine.DrillError for a set that drill_set_start would refuse: an unknown or
    unavailable kind, or a seed out of range."""
    if kind:
        engine.drill_kind(kind)
    if seed is not None:
        engine.seed_check(seed)


@transaction.atomic
def drill_set_start(
    *, user: User, kind: str = "", seed: int | None = None, now: datetime | None = None
) -> DrillSet:
    """Start a set of five drills: all of `kind` when given (a due card, a recommendation),
    else a mix (`_kinds_for_set`). With `seed`, the first drill is that seed's (reproducible);
    the rest are fresh. A seed whose givens the user has been shown before is a replay
    (`DrillItem.replay`): checked, but no review of the kind's card. Raises engine.DrillError
    as drill_set_check does."""
    now = now or clock()
    drill_set_check(kind=kind, seed=seed)
    concept_cards_sync(user=user)
    kinds = [kind] * SET_SIZE if kind else _kinds_for_set(user, now)
    drill_set = DrillSet.objects.create(user=user, created_at=now, focus=kind)
    taken: set[str] = set()
    items = []
    for position, k in enumerate(kinds, start=1):
        replay = False
        if position == 1 and seed is not None:
            drill = engine.drill_generate(k, seed)  # asked for: the same givens again is fine
            replay = (
                DrillItem.objects.owned_by(user)
                .filter(kind=k, fingerprint=drill.fingerprint)
                .exists()
            )
        else:
            drill = _fresh_drill(user, k, taken)
        taken.add(drill.fingerprint)
        items.append(
            DrillItem(
                drill_set=drill_set,
                user=user,
                position=position,
                kind=k,
                seed=drill.seed,
                fingerprint=drill.fingerprint,
                replay=replay,
            )
        )
    DrillItem.objects.bulk_create(items)
    return drill_set


def drill_item_answer(*, item: DrillItem, answer: str, now: datetime | None = None) -> CheckResult:
    """Check `answer` to `item` with the napkin checker, store the verdict and review the
    kind's card with it (a replay reviews none). DrillAnswerError for an empty, overlong or
    unreadable answer, one already given (409), one to a drill after one of its set still to
    answer (409), or one of a kind no longer offered (410); nothing is stored for any."""
    now = now or clock()
    answer = answer.strip()
    if not answer:
        raise DrillAnswerError("Write an answer first, e.g. 2 * 28 * 4 * 128 * 2 B in KiB.")
    if len(answer) > 500:
        raise DrillAnswerError("An answer is at most 500 characters: one expression.")
    try:
        drill = engine.drill_generate(item.kind, item.seed)
    except engine.DrillError:
        raise DrillAnswerError(WITHDRAWN_DRILL, 410) from None
    try:
        result = engine.drill_check(drill, answer)
    except NapkinError as error:
        raise DrillAnswerError(f"That answer could not be read: {error.message}") from None
    with transaction.atomic():
        locked = DrillItem.objects.select_for_update().get(pk=item.pk)
        if locked.is_answered:
            # Most often from a second tab: the set goes on, so the page shows its verdict.
            raise DrillAnswerError(
                "This drill was already answered, perhaps in another tab; its verdict is "
                "shown below.",
                409,
            )
        # The page offers one drill at a time, the first still to answer; an answer posted to
        # a later one (a script, a hand-made form) would review its card out of turn.
        before = (
            DrillItem.objects.filter(
                drill_set_id=item.drill_set_id,
                position__lt=locked.position,
                verdict="",
                kind__in=engine.AVAILABLE,  # a kind no longer offered is skipped, as on the page
            )
            .order_by("position")
            .first()
        )
        if before is not None:
            raise DrillAnswerError(
                f"Answer drill {before.position} first: a set's drills are answered in "
                "order, so this answer was not taken.",
                409,
            )
        item.answer = answer
        item.verdict = result.verdict
        item.mistake = result.mistake or ""
        item.hint = result.hint
        item.value = result.value
        item.expected = drill.expected
        item.answered_at = now
        item.save(
            update_fields=["answer", "verdict", "mistake", "hint", "value", "expected",
                           "answered_at"]
        )  # fmt: skip
        if locked.replay:
            return result
        card_review(
            user=item.user,
            key=f"drill:{item.kind}",
            source=Card.Source.DRILL,
            rating=RATINGS[result.verdict],
            now=now,
            session=f"set:{item.drill_set_id}",
            answer=str(item.pk),
        )
    return result


# ---------------------------------------------------------------------------------------------
# Assignments from instructors


class AssignmentError(ValueError):
    """An assignment that cannot be made, told in one sentence."""


class AlreadyAssigned(AssignmentError):
    """The candidate already has the same work open (not done, not withdrawn, started or
    not): `assignment` is that one, kept as it is."""

    def __init__(self, assignment: Assignment) -> None:
        super().__init__("That is already assigned and not done yet.")
        self.assignment = assignment


class DueDateError(AssignmentError):
    """A due date refused: told at the form's date field."""


# What a date field sends: the digits 0-9 only, year-month-day. date.fromisoformat alone
# would also take "20261210", week dates ("2026-W50-4") and other scripts' digits.
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
# Bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): in a note they
# reorder the page's own words printed after it ("Due today, Mon Dec 7" shown mirrored), and
# a note needs none of them to read right: the pages isolate it (<bdi>) in its own direction.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def note_clean(text: str) -> str:
    """A note as it is kept: without bidi controls, trimmed, at most 300 characters."""
    return _BIDI_CONTROLS.sub("", text).strip()[:300]


def a_year_after(day: date) -> date:
    """The same day a year later (28 February for a 29th): the furthest a due date may be.
    A year is already longer than any course; a date past it is a slip of the year (2062
    for 2026), not a plan."""
    try:
        return day.replace(year=day.year + 1)
    except ValueError:
        return day.replace(year=day.year + 1, day=28)


def today(now: datetime | None = None) -> date:
    """Today in the site's time zone (UTC): the day due dates are counted in."""
    return timezone.localdate(now or clock())


def due_date_parse(text: str, *, now: datetime | None = None) -> date | None:
    """The due date typed in the assign form (year-month-day, as a date field sends it), or
    None for none. DueDateError for anything else, a day before today (UTC) or more than a
    year ahead (`a_year_after`)."""
    text = text.strip()
    if not text:
        return None
    if not _ISO_DATE.fullmatch(text):
        raise DueDateError(
            "A due date is a day written year-month-day, such as 2026-12-10, or leave it "
            "empty: nothing was assigned."
        )
    try:
        due_on = date.fromisoformat(text)
    except ValueError:
        # Written right, but no such day (a 30 February, a 13th month).
        raise DueDateError(
            f"{text} is no day of the calendar: choose another, or leave it empty. Nothing "
            "was assigned."
        ) from None
    due_date_check(due_on, now=now)
    return due_on


def due_date_check(due_on: date | None, *, now: datetime | None = None) -> None:
    """DueDateError for a due date before today (UTC) or past the same day next year."""
    if due_on is None:
        return
    first = today(now)
    last = a_year_after(first)
    if due_on < first:
        raise DueDateError(
            f"{due_on:%a %b} {due_on.day}, {due_on.year} is in the past: choose today "
            f"(UTC) or a later day, or leave it empty. Nothing was assigned."
        )
    if due_on > last:
        raise DueDateError(
            f"A due date is at most a year ahead, by {last:%b} {last.day}, {last.year}: "
            "choose an earlier day, or leave it empty. Nothing was assigned."
        )


@transaction.atomic
def assignment_create(
    *,
    instructor: User,
    candidate: User,
    kind: str = "",
    question_slug: str = "",
    note: str = "",
    due_on: date | None = None,
    now: datetime | None = None,
) -> Assignment:
    """Assign `candidate` five drills of `kind` or the published question `question_slug`
    (exactly one), due by the end of `due_on` (UTC) if given. The caller checks that
    `instructor` is one. AssignmentError for neither, both, an unknown or unavailable kind,
    or an unknown question; DueDateError for a due date in the past or too far ahead;
    AlreadyAssigned when the candidate has the same kind or question open (not done, not
    withdrawn, started or not), from anyone (nothing added): work started and left half
    done is still outstanding, so a second copy would only list it twice.

    The candidate's row is locked while the open assignments are read and the new one is
    written, so two posts at once (a double Enter) add one: on PostgreSQL the second waits
    for the lock; on SQLite every transaction takes the write lock when it begins
    (settings' IMMEDIATE mode)."""
    if bool(kind) == bool(question_slug):
        raise AssignmentError("Choose a drill set or a question to assign: nothing was assigned.")
    due_date_check(due_on, now=now)
    question = None
    if kind:
        try:
            engine.drill_kind(kind)
        except engine.DrillError as error:
            raise AssignmentError(str(error)) from None
    else:
        question = Question.objects.filter(
            slug=question_slug, current_revision__isnull=False
        ).first()
        if question is None:
            raise AssignmentError(f"No published question “{question_slug[:80]}”.")
    User.objects.select_for_update().get(pk=candidate.pk)
    same = Assignment.objects.for_candidate(candidate).open()
    same = list(
        (same.filter(kind=kind) if kind else same.filter(question=question)).order_by(
            "created_at", "pk"
        )
    )
    # One done already (from the bank or /drills/, not its button) is no longer open.
    done = assignments_done(same)
    existing = next((a for a in same if a.pk not in done), None)
    if existing is not None:
        raise AlreadyAssigned(existing)
    return Assignment.objects.create(
        instructor=instructor,
        candidate=candidate,
        kind=kind,
        question=question,
        note=note_clean(note),
        due_on=due_on,
        created_at=now or clock(),
    )


def assignments_done(assignments: Iterable[Assignment]) -> dict[int, Attempt | DrillSet]:
    """The work that completes each assignment, however the candidate started it (its button,
    the bank, a recommendation, /drills/), done since it was assigned (or started, if that
    is earlier by its clock): a question's first attempt finished since then (previews
    aside), or a kind's first set started for that kind since then with every drill answered.
    {assignment id: attempt or set}; two queries at most, whatever the number of assignments
    and candidates."""
    assignments = list(assignments)

    def since(a: Assignment) -> datetime:
        return min(a.created_at, a.started_at or a.created_at)

    questions = [a for a in assignments if a.question_id]
    kinds = [a for a in assignments if a.kind]
    work: list[tuple[Assignment, list]] = []
    if questions:
        attempts = list(
            Attempt.objects.filter(
                user_id__in={a.candidate_id for a in questions},
                is_preview=False,
                status=Attempt.Status.FINISHED,
                revision__question_id__in={a.question_id for a in questions},
                finished_at__gte=min(since(a) for a in questions),
            )
            .annotate(question_id=models.F("revision__question_id"))
            .only("pk", "user_id", "finished_at")
            .order_by("finished_at", "pk")
        )
        for a in questions:
            work.append((a, [t for t in attempts if t.user_id == a.candidate_id
                             and t.question_id == a.question_id
                             and t.finished_at >= since(a)]))  # fmt: skip
    if kinds:
        sets = list(
            DrillSet.objects.filter(
                user_id__in={a.candidate_id for a in kinds},
                focus__in={a.kind for a in kinds},
                created_at__gte=min(since(a) for a in kinds),
            )
            .annotate(
                drills=models.Count("items"),
                unanswered=models.Count("items", filter=models.Q(items__verdict="")),
            )
            .filter(drills__gt=0, unanswered=0)
            .order_by("created_at", "pk")
        )
        for a in kinds:
            mine = [s for s in sets if s.user_id == a.candidate_id and s.focus == a.kind
                    and s.created_at >= since(a)]  # fmt: skip
            # The set its button started comes first when it is the one finished.
            mine.sort(key=lambda s: s.pk != a.drill_set_id)
            work.append((a, mine))
    return {a.pk: found[0] for a, found in work if found}


@transaction.atomic
def assignment_start(*, assignment: Assignment, now: datetime | None = None) -> Assignment:
    """The candidate starts their assignment: a drill assignment starts a set of five of its
    kind (kept on the assignment); a question assignment is marked started (the caller opens
    the question). Starting again returns it as it is: the set already made, not a second.
    AssignmentError for a question no longer published, or a drill kind no longer offered
    that was not started yet (nothing is changed)."""
    now = now or clock()
    # Only the assignment row is locked: its question is a nullable join, which PostgreSQL
    # cannot lock FOR UPDATE.
    locked = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("question")
        .get(pk=assignment.pk)
    )
    if locked.question is not None and locked.question.current_revision_id is None:
        raise AssignmentError(
            "That question is no longer published, so the assignment cannot be opened; "
            "ask your instructor for another."
        )
    # Withdrawn is told first, started or not: a page opened before the withdrawal still
    # offers its button, and its work is no longer assigned.
    if locked.withdrawn_at is not None:
        raise AssignmentError(
            "Your instructor withdrew that assignment, so there is nothing to start: what you "
            "did of it stays yours."
        )
    # A drill assignment whose set is gone (deleted) starts a new one: its button is the
    # candidate's only way back to the work.
    if locked.started_at is not None and not (locked.kind and locked.drill_set_id is None):
        return locked
    if locked.kind and locked.kind not in engine.AVAILABLE:
        raise AssignmentError(
            "That kind of drill is no longer offered, so the assignment cannot be started; "
            "ask your instructor for another."
        )
    if locked.kind:
        locked.drill_set = drill_set_start(user=locked.candidate, kind=locked.kind, now=now)
    locked.started_at = locked.started_at or now
    locked.save(update_fields=["started_at", "drill_set"])
    return locked


class WithdrawRefused(AssignmentError):
    """An assignment that can no longer be withdrawn: `reason` is "withdrawn" (already) or
    "done" (the work was done, however it was started), and `when` the moment that
    happened."""

    def __init__(self, reason: str, when: datetime) -> None:
        super().__init__(f"Not withdrawn: {reason}.")
        self.reason = reason
        self.when = when


@transaction.atomic
def assignment_withdraw(
    *, instructor: User, candidate: User, assignment_id: int, now: datetime | None = None
) -> Assignment:
    """`instructor` withdraws the assignment `assignment_id` they gave `candidate`: it is
    marked withdrawn (kept, so their list shows it) and no longer offered. Only the
    instructor who gave it may: Assignment.DoesNotExist for any other (the view's 404), as
    for no such assignment. WithdrawRefused, nothing changed, for one already withdrawn or
    done already however it was started. Work started and left undone may be withdrawn
    (the way to change its due date or note, or to call it off): what the candidate did of
    it stays theirs.

    The row is locked while it is checked and marked, as assignment_start locks it while it
    starts: a Start that arrives after the withdrawal is refused, never a new set made for
    a withdrawn assignment."""
    locked = Assignment.objects.select_for_update(of=("self",)).get(
        pk=assignment_id, candidate_id=candidate.pk, instructor_id=instructor.pk
    )
    if locked.withdrawn_at is not None:
        raise WithdrawRefused("withdrawn", locked.withdrawn_at)
    work = assignments_done([locked]).get(locked.pk)
    if work is not None:
        if isinstance(work, Attempt):
            when = work.finished_at
        else:  # a set is done at its last answer
            when = work.items.aggregate(last=models.Max("answered_at"))["last"]
        raise WithdrawRefused("done", when)
    locked.withdrawn_at = now or clock()
    locked.save(update_fields=["withdrawn_at"])
    return locked


# ---------------------------------------------------------------------------------------------
# Concept cards from graded steps


def _concept_ratings(revision: QuestionRevision, step_key: str, follow_up: str, grade: Grade):
    """(concept slug, rating) for each concept the graded part links: by the verdicts of the
    rubric points that link it (a miss: Again, a partial: Hard, else Good), and for concepts
    linked by the step alone by the grade's score (< 0.5 Again, < 0.8 Hard, else Good)."""
    spec = revision.question_spec.step(step_key)
    part = spec.follow_up(follow_up) if follow_up else spec
    verdicts = {p.get("id"): p.get("verdict") for p in grade.points or []}
    by_concept: dict[str, list[str]] = {}
    for point in part.rubric:
        for slug in point.concepts:
            by_concept.setdefault(slug, []).append(verdicts.get(point.id, ""))
    out = []
    for slug, seen in by_concept.items():
        if "miss" in seen:
            out.append((slug, Rating.Again))
        elif "partial" in seen:
            out.append((slug, Rating.Hard))
        else:
            out.append((slug, Rating.Good))
    by_score = Rating.Again if grade.score < 0.5 else Rating.Hard if grade.score < 0.8 else None
    for slug in part.concepts:
        if slug not in by_concept:
            out.append((slug, by_score or Rating.Good))
    return out


def concept_cards_sync(*, user: User) -> int:
    """Review the user's concept cards with every primary verdict stored since the last sync
    (in the order the grades were written): a concept missed makes a card, and later verdicts
    on it review that card. A verdict of a mock interview still running waits until it ends.
    Returns how many verdicts were read. Called when grading ends (the worker) and when a
    drill set starts."""
    with transaction.atomic():
        ConceptSync.objects.get_or_create(user=user)
        # Locked: two workers syncing one candidate at once would review a verdict twice.
        sync = ConceptSync.objects.select_for_update().get(user=user)
        return _concept_cards_read(user, sync)


def _concept_cards_read(user: User, sync: ConceptSync) -> int:
    """concept_cards_sync's work, inside its transaction with `sync` locked."""
    grades = list(
        Grade.objects.filter(
            pk__gt=sync.last_grade_id,
            submission__answer__attempt__user_id=user.pk,
            submission__answer__attempt__is_preview=False,
        )
        .select_related(
            "submission__answer__attempt__revision", "submission__answer__attempt__mock"
        )
        .order_by("pk")
    )
    if not grades:
        return 0
    siblings: dict[int, list[Grade]] = {}
    for g in Grade.objects.filter(submission_id__in={g.submission_id for g in grades}):
        siblings.setdefault(g.submission_id, []).append(g)
    read = 0
    last = sync.last_grade_id
    for grade in grades:
        attempt = grade.submission.answer.attempt
        if _mock_running(attempt):
            break  # read from here once the interview has ended
        last = grade.pk
        if grade.grader not in VERDICT_ORDER:
            continue
        # Only a verdict that counts when it is written: an instructor's review after the
        # model's counts again; a self-check written under a model's grade does not.
        earlier = [g for g in siblings.get(grade.submission_id, []) if g.pk <= grade.pk]
        main = primary_grade(earlier)
        if main is None or main.pk != grade.pk:
            continue
        answer = grade.submission.answer
        if is_extension_follow_up(answer.follow_up_id):
            continue
        try:
            ratings = _concept_ratings(
                attempt.revision, answer.step_key, answer.follow_up_id, grade
            )
        except LookupError:
            continue
        read += 1
        _review_concepts(
            user,
            ratings,
            when=grade.created_at,
            session=f"attempt:{attempt.pk}",
            answer=str(grade.submission_id),
        )
    ConceptSync.objects.filter(pk=sync.pk).update(last_grade_id=last)
    return read


def _mock_running(attempt) -> bool:
    """Whether the attempt is a mock interview still running (its candidate sees no verdict
    until the end). The mocks app adds `attempt.mock`; drills read it without importing it."""
    mock = getattr(attempt, "mock", None) if hasattr(attempt, "mock") else None
    return mock is not None and mock.ended_at is None


def _review_concepts(
    user: User,
    ratings: Iterable[tuple[str, Rating]],
    *,
    when: datetime,
    session: str,
    answer: str,
) -> None:
    """Review the concepts' cards with one graded answer's ratings. The attempt is the session
    (`card_review`): a concept missed in one step stays due when a later step gets it."""
    ratings = list(ratings)
    existing = set(
        Card.objects.owned_by(user)
        .filter(key__in=[f"concept:{slug}" for slug, _ in ratings])
        .values_list("key", flat=True)
    )
    for slug, rating in ratings:
        key = f"concept:{slug}"
        # A concept becomes a card when it is missed; one never missed needs no schedule.
        if key in existing or rating == Rating.Again:
            card_review(
                user=user,
                key=key,
                source=Card.Source.CONCEPT,
                rating=rating,
                now=when,
                session=session,
                answer=answer,
            )
