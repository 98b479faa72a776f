"""Reads: a drill set as its page shows it, the cards due, what to practise next, and the
candidate's progress (verdicts over time per step and per concept, drills included).

Progress reads plain ORM rows, bounded by time: the last PROGRESS_WEEKS weeks, one query for
the question verdicts (values, no model instances) and one aggregate for the drill answers,
whatever the size of the candidate's history.
"""

from __future__ import annotations

import bisect
import csv
import heapq
import io
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db.models import Count, Q, Subquery
from django.urls import reverse
from django.utils import timezone

from drills import engine, services
from drills.models import Assignment, Card, DrillItem, DrillSet
from drills.services import SET_SIZE, clock
from practice.bank import bank_order, estimated_minutes
from practice.extensions import is_extension_follow_up
from practice.models import Attempt, Grade
from practice.scoring import (
    STEP_CHECKS,
    VERDICT_ORDER,
    attempts_scored_submissions,
    overall_score,
    points_credit,
    primary_grade,
    score_label,
    submission_score,
)
from practice.selectors import self_check_waiting
from practice.step_page import step_url
from questionbank import RubricPoint
from questions import selectors as question_selectors
from questions.models import QuestionRevision

PROGRESS_WEEKS = 12
WEAK_BELOW = 0.7  # a concept whose mean verdict is below this is weak
WEAKEST_SHOWN = 3
QUESTIONS_SHOWN = 3  # questions named under each weakest concept; its note lists the rest
# A drill verdict as a score, so drills and graded steps share one scale.
DRILL_SCORES = {
    "correct": 1.0,
    "close": 0.5,
    "not_rounded": 0.5,
    "known_mistake": 0.0,
    "wrong_unit": 0.0,
    "wrong": 0.0,
}
STEP_KEYS = tuple(question_selectors.STEP_TITLES)


# ---------------------------------------------------------------------------------------------
# Drill sets


@dataclass
class ItemView:
    item: DrillItem
    drill: engine.Drill | None  # None: its kind is no longer offered (nothing to redraw)
    title: str


def _item_view(item: DrillItem) -> ItemView:
    kind = engine.KINDS.get(item.kind)
    if kind is None or not kind.available:
        # Withdrawn from the catalogue since the set was made: its stored answer and verdict
        # still show, but it cannot be redrawn or answered.
        return ItemView(item, None, kind.title if kind else item.kind)
    return ItemView(item, engine.drill_generate(item.kind, item.seed), kind.title)


def drill_set_view(*, user: User, set_id: int) -> tuple[DrillSet, list[ItemView]]:
    """The user's drill set and its drills, each redrawn from its seed (`drill` None for a
    kind no longer offered). DrillSet.DoesNotExist for another candidate's set (the view's
    404)."""
    drill_set = DrillSet.objects.owned_by(user).get(pk=set_id)
    return drill_set, [_item_view(item) for item in drill_set.items.all()]


@dataclass(frozen=True)
class RecentSet:
    drill_set: DrillSet
    title: str  # the kind it was started for, or "Mixed drills"
    answered: int
    correct: int
    size: int


def recent_sets(*, user: User, limit: int = 5) -> list[RecentSet]:
    """The user's latest sets, each with what tells it from the others on the list: its kind
    and how far it got (two sets started in one minute read the same by their time alone)."""
    sets = DrillSet.objects.owned_by(user).annotate(
        size=Count("items"),
        answered=Count("items", filter=~Q(items__verdict="")),
        correct=Count("items", filter=Q(items__verdict="correct")),
    )[:limit]
    return [
        RecentSet(
            s,
            # A kind gone from the catalogue keeps its key; "" was a mixed set.
            engine.KINDS[s.focus].title if s.focus in engine.KINDS else s.focus or "Mixed drills",
            s.answered,
            s.correct,
            s.size,
        )
        for s in sets
    ]


def drill_item_owned(*, user: User, set_id: int, position: int) -> DrillItem:
    return (
        DrillItem.objects.owned_by(user)
        .select_related("user")
        .get(drill_set__pk=set_id, position=position)  # __pk: an out-of-range id finds nothing
    )


# ---------------------------------------------------------------------------------------------
# Cards and the recommendation


@dataclass
class DueCard:
    card: Card
    title: str
    url: str  # a concept's note, or "" for a drill kind (started by a POST)
    kind: str  # the drill kind, "" for a concept


def cards_due(*, user: User, now: datetime | None = None) -> list[DueCard]:
    """The user's cards due by the end of today, soonest first (`services.due_today`, as a
    mixed set takes them)."""
    now = now or clock()
    cards = list(services.due_today(Card.objects.owned_by(user), now))
    concepts = question_selectors.concepts_by_slug(
        {c.subject for c in cards if c.source == Card.Source.CONCEPT}
    )
    out = []
    for card in cards:
        if card.source == Card.Source.DRILL:
            kind = engine.KINDS.get(card.subject)
            if kind is None or not kind.available:
                continue
            out.append(DueCard(card, kind.title, "", card.subject))
        elif card.subject in concepts:
            url = reverse("concept", args=[card.subject])
            out.append(DueCard(card, concepts[card.subject].title, url, ""))
    return out


@dataclass
class Recommendation:
    """One thing to practise next: what, a sentence saying why, and how to start it (a POST
    of `kind` to start a set, or a link)."""

    title: str
    sentence: str
    kind: str = ""  # a drill kind: the button starts five of it
    url: str = ""  # else a page to open
    action: str = ""  # the button's or link's words

    @property
    def action_about(self) -> str:
        """What the button starts, read out after its words ("Open the question: Design a
        chat API"), since the page has other buttons with the same words; "" when the
        words already say it."""
        return "" if self.title.startswith(self.action) else self.title


def _minutes(drills: int) -> int:
    return max(1, round(drills * engine.SECONDS_PER_DRILL / 60))


def _drill_sentence(kind: engine.DrillKind, recent: list[DrillItem]) -> str:
    missed = [i for i in recent if i.verdict != "correct"]
    plan = f"{SET_SIZE} drills, about {_minutes(SET_SIZE)} minutes."
    if not missed:
        return f"{kind.skill}: due for review; {plan}"
    mistakes = Counter(i.mistake for i in missed if engine.mistake_phrase(i.mistake))
    mistake, count = mistakes.most_common(1)[0] if mistakes else ("", len(missed))
    what = engine.mistake_phrase(mistake)
    if len(recent) == 1:
        said = f"your last answer {what}" if what else "your last answer was off"
    else:
        # The count is of the answers that made the mistake named, not of every miss, out of
        # every answer of this kind in the last set (a set holds SET_SIZE drills at most).
        said = f"{count} of your {len(recent)} answers in your last set " + (
            what or ("was off" if count == 1 else "were off")
        )
    return f"{kind.skill}: {said}; {plan}"


def recommendation(*, user: User, now: datetime | None = None) -> Recommendation:
    """What to practise next, in this order: an answer of theirs waiting for their
    self-check (unfinished, and unscored until rated), a due drill kind the candidate
    recently got wrong (the most missed of their answers in the last set of that kind), a due
    concept card, the weakest concept, a question not started yet (easiest first, as the bank
    lists them), any due drill kind, and else a mixed set."""
    now = now or clock()
    waiting = self_check_waiting(user=user)
    if waiting is not None:
        answer, revision = waiting.submission.answer, waiting.attempt.revision
        part = question_selectors.STEP_TITLES.get(answer.step_key, answer.step_key)
        if answer.follow_up_id:
            part = f"a follow-up of {part}"
        return Recommendation(
            f"Rate your answer: {revision.title}",
            f"No model graded your answer to {part} in “{revision.title}”, so it has no score "
            "until you rate it against the rubric and the reference; it takes a minute or two.",
            url=step_url(waiting.attempt, answer.step_key, answer.follow_up_id) + "#self-check",
            action="Rate your answer",
        )
    due = cards_due(user=user, now=now)
    due_kinds = [d for d in due if d.kind]
    recent = _recent_answers(user, [d.kind for d in due_kinds])
    scored = []
    for d in due_kinds:
        answers = recent.get(d.kind, [])
        missed = sum(i.verdict != "correct" for i in answers)
        if missed:
            scored.append((-missed / len(answers), d.card.due, d))
    if scored:
        d = min(scored, key=lambda s: (s[0], s[1]))[2]
        kind = engine.KINDS[d.kind]
        return Recommendation(
            kind.skill,
            _drill_sentence(kind, recent[d.kind]),
            kind=d.kind,
            action=f"Start {SET_SIZE} drills",
        )
    concept_cards = [d for d in due if not d.kind]
    if concept_cards:
        d = concept_cards[0]
        return Recommendation(
            d.title,
            f"{d.title}: you missed it in a scored answer and it is due for review; read the "
            "note, then answer a question that uses it again.",
            url=d.url,
            action="Read the note",
        )
    weak = weakest_concepts(user=user, now=now, limit=1)
    if weak:
        w = weak[0]
        return Recommendation(
            w.title,
            f"{w.title}: your verdicts on it average {w.mean:.0%} over {w.count} "
            f"{'answer' if w.count == 1 else 'answers'} in the last {PROGRESS_WEEKS} weeks; "
            "read the note, then try a question that uses it.",
            url=w.url,
            action="Read the note",
        )
    started = set(
        Attempt.objects.owned_by(user)
        .filter(is_preview=False)
        .values_list("revision__question_id", flat=True)
    )
    # A question assigned and not done is offered above, by its own button or link.
    started |= set(
        Assignment.objects.for_candidate(user)
        .open()
        .filter(question__isnull=False)
        .values_list("question_id", flat=True)
    )
    # In the bank's own order, easiest first: a new candidate starts on the intro question.
    for revision in sorted(question_selectors.question_list(), key=bank_order):
        if revision.question_id not in started:
            minutes = estimated_minutes(revision)  # as the bank shows it
            pace = f", about {minutes:g} minutes" if minutes else ""
            return Recommendation(
                revision.title,
                f"You have not tried “{revision.title}” yet: five steps{pace}.",
                url=reverse("question", args=[revision.question.slug]),
                action="Open the question",
            )
    if due_kinds:
        kind = engine.KINDS[due_kinds[0].kind]
        return Recommendation(
            kind.skill, _drill_sentence(kind, []), kind=kind.key, action=f"Start {SET_SIZE} drills"
        )
    return Recommendation(
        "A mixed set of drills",
        f"Nothing is due: a mixed set keeps the numbers fresh; {SET_SIZE} drills, about "
        f"{_minutes(SET_SIZE)} minutes.",
        action=f"Start {SET_SIZE} drills",
    )


def _recent_answers(user: User, kinds: list[str]) -> dict[str, list[DrillItem]]:
    """The answers of each kind in the last set that has one (the set of the newest answer of
    that kind), newest first: every answer of a set counts, so a miss early in a set of five
    is not left out of the count the sentence names (one query per kind, each bounded by the
    set's SET_SIZE drills)."""
    out = {}
    for kind in kinds:
        answered = DrillItem.objects.owned_by(user).filter(kind=kind, answered_at__isnull=False)
        last_set = answered.order_by("-answered_at", "-pk").values("drill_set_id")[:1]
        out[kind] = list(
            answered.filter(drill_set_id=Subquery(last_set))
            .order_by("-answered_at", "-pk")
            .only("verdict", "mistake")[:SET_SIZE]
        )
    return out


# ---------------------------------------------------------------------------------------------
# Progress


@dataclass
class Cell:
    """The verdicts of one row in one week: their mean score, how many, and how many were
    self-checked, from mock interviews, or drills."""

    week: date | None  # None: the whole window
    total: float = 0.0
    count: int = 0
    self_checked: int = 0
    mock: int = 0
    drills: int = 0

    @property
    def mean(self) -> float | None:
        return round(self.total / self.count, 3) if self.count else None

    def add(self, score: float, *, grader: str = "", mock: bool = False, n: int = 1) -> None:
        """Count `n` verdicts of `score` by `grader` ("drill" for the napkin checker)."""
        self.total += score * n
        self.count += n
        self.self_checked += n * (grader == "self")
        self.mock += n * mock
        self.drills += n * (grader == "drill")


@dataclass
class Row:
    key: str
    title: str
    url: str = ""
    cells: list[Cell] = field(default_factory=list)
    overall: Cell = field(default_factory=lambda: Cell(None))


@dataclass(frozen=True)
class Verdict:
    """One submission's primary verdict, as the progress page counts it: `score` is the
    submission's score as its scorecard has it (`practice.scoring.submission_score`: the
    primary grade blended with the step's own check), `label` who and what scored it,
    `points` the primary grade's verdict on each rubric point, (point id, "hit" | "partial" |
    "miss"), empty when that grade holds none."""

    submitted_at: datetime
    step_key: str
    follow_up_id: str
    revision_id: int
    question_slug: str
    grader: str
    score: float
    mock: bool
    label: str = ""
    points: tuple[tuple[str, str], ...] = ()


@dataclass
class _Grade:
    grader: str  # practice.scoring reads only these two
    score: float


def weeks_window(now: datetime) -> list[date]:
    """The Mondays of the last PROGRESS_WEEKS weeks, oldest first, this week last."""
    today = timezone.localtime(now).date()
    monday = today - timedelta(days=today.weekday())
    return [monday - timedelta(weeks=n) for n in range(PROGRESS_WEEKS - 1, -1, -1)]


def question_verdicts(*, user: User, since: datetime | None = None) -> list[Verdict]:
    """Every primary verdict (instructor, model, self-check) on the user's submissions since
    `since` (all when None), oldest first; preview attempts, running mock interviews and a
    mock interview's own follow-ups are left out. One query of plain values."""
    return _verdicts_by_user([user.pk], since=since).get(user.pk, [])


def _verdicts_by_user(user_ids: list[int], *, since: datetime | None) -> dict[int, list[Verdict]]:
    """`question_verdicts` of each of `user_ids`, by user id (a user with none left out), in
    one query however many users."""
    grades = Grade.objects.filter(
        submission__answer__attempt__user_id__in=user_ids,
        submission__answer__attempt__is_preview=False,
        # The step's own checks too (the SLO card, the napkin-math checker): a submission's
        # score blends them in, as on its scorecard.
        grader__in=(*VERDICT_ORDER, *(check.grader for check in STEP_CHECKS.values())),
    )
    if since is not None:
        grades = grades.filter(submission__submitted_at__gte=since)
    rows = grades.values_list(
        "submission_id",
        "grader",
        "score",
        "submission__submitted_at",
        "submission__answer__step_key",
        "submission__answer__follow_up_id",
        "submission__answer__attempt__revision_id",
        "submission__answer__attempt__revision__question__slug",
        "submission__answer__attempt__mock__id",
        "submission__answer__attempt__mock__ended_at",
        "submission__answer__attempt__user_id",
        "points",
    )
    by_submission: dict[int, list[tuple]] = defaultdict(list)
    for row in rows:
        by_submission[row[0]].append(row)
    out: dict[int, list[Verdict]] = defaultdict(list)
    for group in by_submission.values():
        grades = [_Grade(r[1], r[2]) for r in group]
        main = primary_grade(grades)
        if main is None:
            continue
        row = next(r for r in group if r[1] == main.grader)
        _, grader, _, at, step, follow_up, revision_id, slug, mock_id, ended, user_id, points = row
        score = submission_score(step, grades)
        if mock_id is not None and ended is None:
            continue  # a running mock interview shows no verdict yet
        if is_extension_follow_up(follow_up):
            continue
        out[user_id].append(
            Verdict(
                at,
                step,
                follow_up,
                revision_id,
                slug,
                grader,
                score,
                mock_id is not None,
                score_label(step, grades),
                _point_verdicts(points),
            )
        )
    for verdicts in out.values():
        verdicts.sort(key=lambda v: v.submitted_at)
    return out


def _point_verdicts(points: object) -> tuple[tuple[str, str], ...]:
    """A grade's stored `points` as (point id, verdict) pairs; entries without both left out."""
    if not isinstance(points, list):
        return ()
    return tuple(
        (p["id"], p["verdict"])
        for p in points
        if isinstance(p, dict)
        and isinstance(p.get("id"), str)
        and isinstance(p.get("verdict"), str)
    )


# Per concept a part links: its rubric points that link it, or () when only the part does.
PartLinks = dict[str, tuple[RubricPoint, ...]]


def _part_concepts(revisions: dict[int, QuestionRevision]) -> dict[tuple, PartLinks]:
    """(revision id, step, follow-up) -> each concept that part links, itself or through its
    rubric points, with the points that link it (see `_concept_score`)."""
    out: dict[tuple, PartLinks] = {}
    for rid, revision in revisions.items():
        for step in revision.question_spec.steps:
            for part, fid in ((step, ""), *((f, f.id) for f in step.follow_ups)):
                linked: dict[str, list[RubricPoint]] = {s: [] for s in part.concepts}
                for point in part.rubric:
                    for slug in point.concepts:
                        linked.setdefault(slug, []).append(point)
                out[(rid, step.key, fid)] = {s: tuple(p) for s, p in linked.items()}
    return out


def _concept_score(verdict: Verdict, points: tuple[RubricPoint, ...]) -> float:
    """What one verdict on a part scores for a concept the part links, on the scale of its
    score: where rubric points of the part link the concept, the weighted credit of their
    verdicts in the primary grade (`points_credit`, as the grade's own score counts them), so
    a point the candidate missed counts against its concepts and not the rest of the step's;
    the part's score for a concept only the part links, and where the primary grade holds no
    per-point verdicts at all. The step's own check (the napkin checker, the SLO card) is not
    blended in: a concept is the idea its points name, and the drills measure the
    arithmetic."""
    if not points or not verdict.points:
        return verdict.score
    return points_credit(points, dict(verdict.points))


def _questions_by_concept() -> dict[str, list[QuestionRevision]]:
    out: dict[str, list[QuestionRevision]] = defaultdict(list)
    for revision in question_selectors.question_list():
        slugs = set()
        for step in revision.question_spec.steps:
            for part in (step, *step.follow_ups):
                slugs |= set(part.concepts)
                for point in part.rubric:
                    slugs |= set(point.concepts)
        for slug in slugs:
            out[slug].append(revision)
    return out


@dataclass
class Progress:
    weeks: list[date]
    steps: list[Row]
    concepts: list[Row]
    drills: list[Row]
    weakest: list[WeakConcept]
    verdict_count: int
    drill_count: int


@dataclass
class WeakConcept:
    slug: str
    title: str
    url: str
    mean: float
    count: int
    questions: list[tuple[str, str]]  # (title, url)

    @property
    def questions_shown(self) -> list[tuple[str, str]]:
        """The first QUESTIONS_SHOWN of `questions`: a concept used by most of the bank
        would list every title in one run-on paragraph; its note lists them all."""
        return self.questions[:QUESTIONS_SHOWN]

    @property
    def questions_more(self) -> int:
        """How many of `questions` are not in `questions_shown`."""
        return max(len(self.questions) - QUESTIONS_SHOWN, 0)


def _rows(keys_titles: list[tuple[str, str, str]], weeks: list[date]) -> dict[str, Row]:
    return {key: Row(key, title, url, [Cell(w) for w in weeks]) for key, title, url in keys_titles}


def progress(*, user: User, now: datetime | None = None, with_weakest: bool = True) -> Progress:
    """The candidate's verdicts over the last PROGRESS_WEEKS weeks, week by week: per step of
    the framework (each submission's score as its scorecard has it: the primary verdict,
    blended with the step's own check where it has one), per concept (each verdict on a
    part that links the concept, scored by the part's rubric points that link it where any
    do, else as the part's score: see `_concept_score`; and each drill of a kind that
    practises it), and per drill kind (the checker's verdicts as DRILL_SCORES). Self-checked
    and mock verdicts are counted as such in every cell. Without `with_weakest`, `weakest` is
    left empty (it reads the question bank to name the questions that use each weak concept)."""
    return progress_many(users=[user], now=now, with_weakest=with_weakest)[user.pk]


def progress_many(
    *, users: list[User], now: datetime | None = None, with_weakest: bool = False
) -> dict[int, Progress]:
    """`progress` of each of `users`, by user id, read in the same three queries however
    many users (the instructor's list of candidates)."""
    now = now or clock()
    weeks = weeks_window(now)
    start = timezone.make_aware(datetime.combine(weeks[0], time.min))
    bounds = [timezone.make_aware(datetime.combine(w, time.min)) for w in weeks]
    bounds.append(bounds[-1] + timedelta(weeks=1))
    user_ids = [u.pk for u in users if u.pk is not None]
    verdicts = _verdicts_by_user(user_ids, since=start)
    revisions = QuestionRevision.objects.in_bulk(
        {v.revision_id for each in verdicts.values() for v in each}
    )
    parts = _part_concepts(revisions)
    # One query: per user, kind and verdict, a count per week (conditional aggregates on the
    # (user, answered_at) index), so 10,000 answers cost the database, not Python.
    per_week = {
        f"w{i}": Count("id", filter=Q(answered_at__gte=bounds[i], answered_at__lt=bounds[i + 1]))
        for i in range(len(weeks))
    }
    aggregates: dict[int, list[dict]] = defaultdict(list)
    for a in (
        DrillItem.objects.filter(user_id__in=user_ids)
        .filter(answered_at__gte=start, answered_at__lt=bounds[-1])
        .values("user_id", "kind", "verdict")
        .annotate(**per_week)
    ):
        aggregates[a["user_id"]].append(a)
    return {
        u.pk: _progress_of(
            verdicts.get(u.pk, []), aggregates[u.pk], parts, weeks, bounds, with_weakest
        )
        for u in users
    }


def _progress_of(
    verdicts: list[Verdict],
    aggregates: list[dict],
    parts: dict[tuple, PartLinks],
    weeks: list[date],
    bounds: list[datetime],
    with_weakest: bool,
) -> Progress:
    """One user's Progress from their verdicts and drill aggregates (see progress_many)."""
    steps = _rows([(k, question_selectors.STEP_TITLES[k], "") for k in STEP_KEYS], weeks)
    concept_cells: dict[str, Row] = {}

    def concept_row(slug: str) -> Row:
        if slug not in concept_cells:
            concept_cells[slug] = Row(slug, slug, "", [Cell(w) for w in weeks])
        return concept_cells[slug]

    for v in verdicts:
        i = bisect.bisect_right(bounds, v.submitted_at) - 1
        if not 0 <= i < len(weeks):
            continue
        links = parts.get((v.revision_id, v.step_key, v.follow_up_id), {})
        scored = [(steps[v.step_key], v.score)]
        scored += [(concept_row(s), _concept_score(v, links[s])) for s in sorted(links)]
        for row, score in scored:
            row.cells[i].add(score, grader=v.grader, mock=v.mock)
            row.overall.add(score, grader=v.grader, mock=v.mock)

    kinds = [k for k in engine.drill_kinds() if k.available]
    drills = _rows([(k.key, k.title, "") for k in kinds], weeks)
    drill_count = 0
    for a in aggregates:
        if a["kind"] not in drills:
            continue
        score = DRILL_SCORES.get(a["verdict"], 0.0)
        concept = engine.KINDS[a["kind"]].concept
        for i in range(len(weeks)):
            n = a[f"w{i}"]
            if not n:
                continue
            for row in (drills[a["kind"]], concept_row(concept)):
                row.cells[i].add(score, grader="drill", n=n)
                row.overall.add(score, grader="drill", n=n)
            drill_count += n

    concepts = question_selectors.concepts_by_slug(set(concept_cells))
    for slug, row in concept_cells.items():
        if slug in concepts:
            row.title = concepts[slug].title
            row.url = reverse("concept", args=[slug])
    concept_rows = sorted(concept_cells.values(), key=lambda r: (r.overall.mean or 0, r.title))
    return Progress(
        weeks=weeks,
        steps=list(steps.values()),
        concepts=concept_rows,
        drills=list(drills.values()),
        weakest=_weakest(concept_rows) if with_weakest else [],
        verdict_count=len(verdicts),
        drill_count=drill_count,
    )


def _weakest(rows: list[Row], limit: int = WEAKEST_SHOWN) -> list[WeakConcept]:
    weak = [r for r in rows if r.url and r.overall.count and r.overall.mean < WEAK_BELOW]
    weak.sort(key=lambda r: (r.overall.mean, -r.overall.count))
    if not weak:
        return []
    questions = _questions_by_concept()
    return [
        WeakConcept(
            r.key,
            r.title,
            r.url,
            r.overall.mean,
            r.overall.count,
            [(q.title, reverse("question", args=[q.question.slug])) for q in questions[r.key]],
        )
        for r in weak[:limit]
    ]


def weakest_concepts(*, user: User, now: datetime | None = None, limit: int = 1) -> list:
    return progress(user=user, now=now).weakest[:limit]


# ---------------------------------------------------------------------------------------------
# Assignments and the instructor's view of candidates


@dataclass
class AssignmentView:
    """An assignment as the candidate's pages offer it: what, who set it, and the button (a
    link back to the work once started)."""

    assignment: Assignment
    title: str
    # Who gave it and their note: typed by people, so the templates isolate each (<bdi>).
    who: str
    note: str
    action: str
    # What the button starts, read out after its words: the page has other buttons with them.
    about: str = ""
    # "Due Thu Dec 10", "Due today, Mon Dec 7", "Overdue: it was due Fri Dec 4", or "".
    due: str = ""
    overdue: bool = False
    # Where a started one goes on (its set, its question's page): a link, not the start form.
    url: str = ""
    # How far a started drill set got: "2 of 5 answered", or "".
    progress: str = ""

    @property
    def after_note(self) -> str:
        """The full stop after the quoted note: none when the note ends its own sentence
        (“Read chapter 3.”, not “Read chapter 3.”.)."""
        return "" if self.note.rstrip().endswith((".", "!", "?", "…")) else "."


def day_words(day: date, today: date) -> str:
    """A day as the drill pages print one, with its weekday: "Thu Dec 10", and the year when
    it is not this one ("Mon Jan 4, 2027")."""
    words = f"{day:%a %b} {day.day}"
    return words if day.year == today.year else f"{words}, {day.year}"


def due_words(due_on: date | None, today: date) -> tuple[str, bool]:
    """(what to print of a due date, whether it is past): due by the end of that day (UTC),
    so overdue from the next. In words, so it reads without the colour that marks it."""
    if due_on is None:
        return "", False
    if due_on < today:
        return f"Overdue: it was due {day_words(due_on, today)}", True
    if due_on == today:
        return f"Due today, {day_words(due_on, today)}", False
    return f"Due {day_words(due_on, today)}", False


def _giver_name(assignment: Assignment) -> str:
    """Who gave an assignment, as the pages name them: their full name, else username."""
    return assignment.instructor.get_full_name() or assignment.instructor.username


def _assignment_title(assignment: Assignment, titles: dict[int, str]) -> str:
    """What was assigned, in words; a question no longer published by its slug (`titles`
    holds the published ones), so `assignment.question` must be loaded with it."""
    if assignment.kind:
        kind = engine.KINDS.get(assignment.kind)
        return f"{SET_SIZE} drills: {kind.title if kind else assignment.kind}"
    return titles.get(assignment.question_id) or f"“{assignment.question.slug}”"


def assignment_title(assignment: Assignment) -> str:
    """What one assignment gives, in words: "5 drills: TTFT from prefill", or the
    question's title (its slug in quotes once unpublished)."""
    titles = _question_titles([assignment]) if assignment.question_id else {}
    return _assignment_title(assignment, titles)


def _question_titles(assignments: list[Assignment]) -> dict[int, str]:
    return {
        r.question_id: r.title
        for r in question_selectors.question_list()
        if r.question_id in {a.question_id for a in assignments}
    }


def assignments_open(
    *, user: User, now: datetime | None = None, question_id: int | None = None
) -> list[AssignmentView]:
    """The assignments `user` is still to do, newest first (ten at most): neither done
    (services.assignments_done, however the work was done) nor withdrawn, started or not. One
    not started has its one-click action (views.assignment_start); a started one a link back
    to the work (its set, with how far it got, or its question's page). Each has its due
    date. A drill kind no longer offered or a question no longer published is left out;
    with `question_id`, only that question's. Three queries at most, plus the question list
    when a question is assigned."""
    today = services.today(now)
    assignments = Assignment.objects.for_candidate(user).open()
    if question_id is not None:
        assignments = assignments.filter(question_id=question_id)
    assignments = list(
        assignments.filter(
            Q(kind__in=engine.AVAILABLE) | Q(kind="", question__current_revision__isnull=False)
        )
        .select_related("instructor", "question")
        .annotate(answered=Count("drill_set__items", filter=~Q(drill_set__items__verdict="")))
        # Meta.ordering is not applied to a query that groups (the count): newest first.
        .order_by("-created_at", "-pk")
    )
    done = services.assignments_done(assignments)
    assignments = [a for a in assignments if a.pk not in done][:10]
    titles = _question_titles(assignments) if any(a.question_id for a in assignments) else {}
    out = []
    for a in assignments:
        title = _assignment_title(a, titles)
        who = _giver_name(a)
        kind = engine.KINDS.get(a.kind)
        about = kind.title if kind else title
        due, overdue = due_words(a.due_on, today)
        url = progress = ""
        if a.started_at is None:
            action = f"Start {SET_SIZE} drills" if a.kind else "Open the question"
        elif a.kind:
            action = f"Continue the {SET_SIZE} drills"
            if a.drill_set_id:  # else its button makes the set again
                url = reverse("drills:set", args=[a.drill_set_id])
                progress = f"{a.answered} of {SET_SIZE} answered"
        else:
            action = "Continue the question"
            url = reverse("question", args=[a.question.slug])
        out.append(AssignmentView(a, title, who, a.note, action, about, due, overdue, url,
                                  progress))  # fmt: skip
    return out


def assignment_of_set(drill_set: DrillSet, now: datetime | None = None) -> AssignmentView | None:
    """The assignment whose button started `drill_set`, as its page heads it (who gave it,
    the note, the due date), or None for a set started otherwise or for an assignment
    withdrawn since (it has left the candidate's pages; the set stays theirs). One query."""
    a = (
        Assignment.objects.open()
        .filter(drill_set=drill_set, candidate_id=drill_set.user_id)
        .select_related("instructor")
        .first()
    )
    if a is None:
        return None
    title = assignment_title(a)
    who = _giver_name(a)
    due, overdue = due_words(a.due_on, services.today(now))
    return AssignmentView(a, title, who, a.note, "", due=due, overdue=overdue)


def assignment_view_done(a: Assignment) -> AssignmentView:
    """A done assignment as the page of the work that did it names it: what, and from whom
    (`a.instructor` and `a.question` loaded)."""
    who = _giver_name(a)
    return AssignmentView(a, assignment_title(a), who, a.note, "")


def candidates_queryset():
    """Everyone an instructor watches: active users who are neither instructors nor
    superusers (accounts.instructors), by username."""
    from accounts.instructors import INSTRUCTORS_GROUP

    return (
        User.objects.filter(is_active=True, is_superuser=False)
        .exclude(groups__name=INSTRUCTORS_GROUP)
        .order_by("username")
    )


CANDIDATES_PER_PAGE = 20


@dataclass
class CandidateSummary:
    """One candidate on the instructor's list: their weakest concepts with each one's mean
    verdict and count (progress's own rows), and how much they did."""

    user: User
    weakest: list[Row]
    verdict_count: int
    drill_count: int
    open_assignments: int


def candidate_summaries(*, page: int | str = 1, now: datetime | None = None) -> Page:
    """A page of CANDIDATES_PER_PAGE candidates, each a CandidateSummary read by `progress`
    (the same figures the candidate sees): weakest concepts are the WEAKEST_SHOWN concept
    rows with the lowest mean verdict, below WEAK_BELOW."""
    now = now or clock()
    paginator = Paginator(candidates_queryset(), CANDIDATES_PER_PAGE)
    result = paginator.get_page(page)
    users = list(result.object_list)
    waiting = list(Assignment.objects.open().filter(candidate__in=users))
    done = services.assignments_done(waiting)
    open_counts = Counter(a.candidate_id for a in waiting if a.pk not in done)
    summaries = []
    progresses = progress_many(users=users, now=now)
    for user in users:
        data = progresses[user.pk]
        weak = [
            r for r in data.concepts if r.url and r.overall.count and r.overall.mean < WEAK_BELOW
        ][:WEAKEST_SHOWN]
        summaries.append(
            CandidateSummary(user, weak, data.verdict_count, data.drill_count,
                             open_counts.get(user.pk, 0))
        )  # fmt: skip
    result.object_list = summaries
    return result


def candidate_for_instructor(*, candidate_id: int) -> User:
    """The candidate `candidate_id`; User.DoesNotExist for anyone else (an instructor, an
    inactive user, nobody): the view's 404."""
    return candidates_queryset().get(pk=candidate_id)


@dataclass
class AssignmentStatus:
    assignment: Assignment
    title: str
    # "Not started", "Started Mar 2", "3 of 5 answered, 2 right", "Done: 5 of 5 answered, 4
    # right", "Finished Mar 3: 64% overall", "Withdrawn Mar 4"
    status: str
    # As the candidate reads it (due_words), "" for none or once done or withdrawn.
    due: str = ""
    overdue: bool = False
    # Whether the instructor looking may withdraw it: they gave it, and it is not done or
    # withdrawn (services.assignment_withdraw).
    withdrawable: bool = False
    # Who gave it, when another instructor did: only they may withdraw it.
    given_by: str = ""


def assignments_given(
    *, candidate: User, viewer: User | None = None, now: datetime | None = None
) -> list[AssignmentStatus]:
    """Every assignment `candidate` was given, newest first, with how far it got, however the
    candidate started the work (services.assignments_done): a question assignment is
    finished once the candidate finishes an attempt of it, with that attempt's overall
    score; a drill assignment shows its set's tally; a withdrawn one says when. Each one
    not done or withdrawn shows its due date, overdue once past; `viewer`, the instructor
    looking, may withdraw the ones they gave that are not done. The instructor
    cannot open a candidate's scorecard, so none is linked."""
    today = services.today(now)
    assignments = list(
        Assignment.objects.for_candidate(candidate).select_related(
            "drill_set", "question", "instructor"
        )[:50]
    )
    done = services.assignments_done(assignments)
    finished = {pk: work for pk, work in done.items() if isinstance(work, Attempt)}
    scored = attempts_scored_submissions([attempt.pk for attempt in finished.values()])
    titles = _question_titles(assignments) if any(a.question_id for a in assignments) else {}
    # A drill assignment shows the set that did it, else the set its button started.
    set_of = {
        a.pk: done[a.pk].pk if a.pk in done else a.drill_set_id
        for a in assignments
        if a.kind and (a.pk in done or a.drill_set_id)
    }
    sets = set(set_of.values())
    tallies = {
        row["drill_set"]: row
        for row in DrillItem.objects.filter(drill_set__in=sets)
        .values("drill_set")
        .annotate(
            answered=Count("id", filter=~Q(verdict="")),
            right=Count("id", filter=Q(verdict="correct")),
        )
    }
    out = []
    for a in assignments:
        if a.withdrawn_at is not None:
            withdrawn = timezone.localtime(a.withdrawn_at)
            status = f"Withdrawn {withdrawn:%b} {withdrawn.day}"
        elif a.pk not in done and a.started_at is None:
            status = "Not started"
            if a.kind and a.kind not in engine.AVAILABLE:
                status += ": this kind of drill is no longer offered"
            elif not a.kind and a.question.current_revision_id is None:
                status += ": the question is no longer published"
        elif set_of.get(a.pk) in tallies:
            t = tallies[set_of[a.pk]]
            status = f"{t['answered']} of {SET_SIZE} answered, {t['right']} right"
            if a.pk in done:  # as the candidate's set page says it: "Assignment done"
                status = f"Done: {status}"
        elif a.pk in finished:
            attempt = finished[a.pk]
            when = timezone.localtime(attempt.finished_at)
            overall = overall_score(scored.get(attempt.pk, []))
            status = f"Finished {when:%b} {when.day}: " + (
                f"{round(overall * 100)}% overall" if overall is not None else "not scored yet"
            )
        else:
            started = timezone.localtime(a.started_at)
            status = f"Started {started:%b} {started.day}"
        due, overdue = ("", False)
        if a.withdrawn_at is None and a.pk not in done:
            due, overdue = due_words(a.due_on, today)
        mine = viewer is not None and a.instructor_id == viewer.pk
        withdrawable = mine and a.withdrawn_at is None and a.pk not in done
        given_by = "" if mine else _giver_name(a)
        out.append(AssignmentStatus(a, _assignment_title(a, titles), status, due, overdue,
                                    withdrawable, given_by))  # fmt: skip
    return out


def assignment_choices() -> list[tuple[str, str]]:
    """(value, label) for the assign form: "drill:<kind>" for each available kind, then
    "question:<slug>" for each published question, by its title as the list shows it."""
    kinds = [(f"drill:{k.key}", f"{SET_SIZE} drills: {k.title}")
             for k in engine.drill_kinds() if k.available]  # fmt: skip
    questions = [(f"question:{r.question.slug}", f"Question: {r.title}")
                 for r in sorted(question_selectors.question_list(),
                                 key=lambda r: (r.title.casefold(), r.question.slug))]  # fmt: skip
    return kinds + questions


# ---------------------------------------------------------------------------------------------
# Export


CSV_HEADER = ["when", "source", "item", "step", "verdict_by", "score", "verdict", "mistake"]


def progress_csv(*, user: User) -> Iterator[str]:
    """The user's whole record as CSV lines: every primary verdict on a submission (source
    "question" or "mock") and every drill answered (source "drill"), merged oldest first."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(row: list) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        return buffer.getvalue()

    yield line(CSV_HEADER)

    def verdict_rows() -> Iterator[list]:
        for v in question_verdicts(user=user):
            step = v.step_key + (f"/{v.follow_up_id}" if v.follow_up_id else "")
            yield [
                v.submitted_at,
                "mock" if v.mock else "question",
                v.question_slug,
                step,
                v.label,
                f"{v.score:.3f}",
                "",
                "",
            ]

    def drill_rows() -> Iterator[list]:
        items = (
            DrillItem.objects.owned_by(user)
            .filter(answered_at__isnull=False)
            .order_by("answered_at", "pk")
            .values_list("answered_at", "kind", "verdict", "mistake")
        )
        for at, kind, verdict, mistake in items.iterator(chunk_size=2000):
            yield [
                at,
                "drill",
                kind,
                "estimate",
                "Napkin checker",
                f"{DRILL_SCORES.get(verdict, 0.0):.3f}",
                verdict,
                mistake,
            ]

    # Both come oldest first: merged, the whole record is in the order it happened.
    for row in heapq.merge(verdict_rows(), drill_rows(), key=lambda r: r[0]):
        yield line([row[0].isoformat(), *row[1:]])


__all__ = [
    "DRILL_SCORES",
    "assignment_choices",
    "assignments_given",
    "assignments_open",
    "candidate_for_instructor",
    "candidate_summaries",
    "PROGRESS_WEEKS",
    "Progress",
    "Recommendation",
    "cards_due",
    "drill_set_view",
    "progress",
    "progress_csv",
    "progress_many",
    "question_verdicts",
    "recommendation",
]
