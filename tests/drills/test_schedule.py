"""The FSRS schedule of a practice session: a drill set reviews each kind's card once, rated by
the set's worst answer of that kind, and a question's attempt reviews each concept's card once,
rated by its worst verdict on that concept; a miss in a session keeps the card due today
however the session ends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from fsrs import Card as FsrsCard
from fsrs import Rating

from drills import engine, selectors, services
from drills.models import Card, DrillSet
from practice.models import Attempt, Grade
from tests.drills.factories import graded_submission, revision_of

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
KIND = "kv_per_token"
# Llama-3.1-8B with FP8 KV: 32 layers, 32 query heads, 8 KV heads, 64 KiB a token.
SEED = 7
RIGHT = "2*layers*kv_heads*head_dim*kv_bytes in KiB"
QUERY_HEADS = "2*layers*q_heads*head_dim*kv_bytes in KiB"  # a known mistake
WRONG_UNIT = "320 ms"
GB_FOR_GIB = "64 kB"  # a known mistake
WRONG = "1 KiB"
CLOSE = "63.3 KiB"


@pytest.fixture
def candidate(db):
    return User.objects.create_user("scheduled", password="a-long-Passphrase-42")


def _kv_set(user, now: datetime = NOW) -> DrillSet:
    """A set of five KV-bytes drills, all with Llama-3.1-8B's givens (so each answer's
    verdict is known)."""
    drill_set = services.drill_set_start(user=user, kind=KIND, now=now)
    drill_set.items.update(seed=SEED)
    return drill_set


def _answer(drill_set: DrillSet, answers: list[str], start: datetime = NOW) -> list[str]:
    """Answer the set's drills in order, a minute apart; the verdicts."""
    verdicts = []
    for minute, (item, answer) in enumerate(zip(drill_set.items.all(), answers, strict=False)):
        when = start + timedelta(minutes=minute)
        verdicts.append(services.drill_item_answer(item=item, answer=answer, now=when).verdict)
    return verdicts


def _card(user) -> Card:
    return Card.objects.get(user=user, key=f"drill:{KIND}")


def _due_today(user, now: datetime) -> set[str]:
    return {d.card.key for d in selectors.cards_due(user=user, now=now)}


def test_a_mostly_wrong_set_that_ends_right_leaves_its_kind_due_today(candidate):
    """Right, two known mistakes and a wrong unit, then right: the last Good moved the card
    out of learning, days away, though the set was mostly wrong."""
    verdicts = _answer(_kv_set(candidate), [RIGHT, QUERY_HEADS, WRONG_UNIT, GB_FOR_GIB, RIGHT])
    assert verdicts == ["correct", "known_mistake", "wrong_unit", "known_mistake", "correct"]
    card = _card(candidate)
    last = NOW + timedelta(minutes=4)
    assert card.due <= last + timedelta(minutes=1)  # due again at once
    assert (card.reviews, card.lapses) == (1, 1)  # one review for the set, rated Again
    assert f"drill:{KIND}" in _due_today(candidate, last + timedelta(hours=1))


@pytest.mark.parametrize(
    ("answers", "rating"),
    [
        ([RIGHT] * 5, Rating.Good),
        ([RIGHT, CLOSE, RIGHT, RIGHT, RIGHT], Rating.Hard),
        ([RIGHT, QUERY_HEADS, WRONG_UNIT, GB_FOR_GIB, RIGHT], Rating.Again),
        ([WRONG] * 5, Rating.Again),
    ],
    ids=["all-right", "one-close", "mostly-wrong", "all-wrong"],
)
def test_a_set_is_one_review_rated_by_its_worst_answer(candidate, answers, rating):
    _answer(_kv_set(candidate), answers)
    last = NOW + timedelta(minutes=4)
    expected, _ = services.SCHEDULER.review_card(FsrsCard(due=NOW), rating, last)
    card = _card(candidate)
    assert card.due == expected.due
    assert card.reviews == 1


def test_an_all_right_set_is_due_days_later(candidate):
    _answer(_kv_set(candidate), [RIGHT] * 5)
    assert _card(candidate).due >= NOW + timedelta(days=2)
    assert not _due_today(candidate, NOW + timedelta(hours=1))


def test_an_all_wrong_set_is_due_now(candidate):
    _answer(_kv_set(candidate), [WRONG] * 5)
    card = _card(candidate)
    assert card.due <= NOW + timedelta(minutes=5)
    assert (card.reviews, card.lapses) == (1, 1)
    assert f"drill:{KIND}" in _due_today(candidate, NOW + timedelta(minutes=10))


def test_a_set_left_midway_keeps_what_was_answered(candidate):
    drill_set = _kv_set(candidate)
    _answer(drill_set, [RIGHT])
    assert _card(candidate).due >= NOW + timedelta(days=2)  # right so far: days away
    services.drill_item_answer(item=drill_set.items.get(position=2), answer=WRONG, now=NOW)
    # The miss re-rates the set's one review; the set is then left, and the card is due.
    card = _card(candidate)
    assert card.due <= NOW + timedelta(minutes=1)
    assert (card.reviews, card.lapses) == (1, 1)


def test_the_next_set_is_a_review_of_its_own(candidate):
    _answer(_kv_set(candidate), [WRONG] * 5)
    later = NOW + timedelta(minutes=30)
    _answer(_kv_set(candidate, later), [RIGHT] * 5, start=later)
    card = _card(candidate)
    assert (card.reviews, card.lapses) == (2, 1)
    assert card.due >= later + timedelta(days=1)  # relearnt: out of today
    assert not _due_today(candidate, later + timedelta(hours=1))


def test_a_session_record_without_its_ratings_starts_a_review_of_its_own(candidate):
    drill_set = _kv_set(candidate)
    _answer(drill_set, [WRONG])
    Card.objects.filter(user=candidate).update(session_base={})  # a hand-edited row
    item = drill_set.items.all()[1]
    later = NOW + timedelta(minutes=1)
    assert services.drill_item_answer(item=item, answer=RIGHT, now=later).verdict == "correct"
    assert _card(candidate).reviews == 2


def test_a_mixed_set_reviews_each_kind_once(candidate):
    drill_set = services.drill_set_start(user=candidate, now=NOW)
    for item in drill_set.items.all():
        drill = engine.drill_generate(item.kind, item.seed)
        services.drill_item_answer(item=item, answer=f"{drill.expected} {drill.unit}", now=NOW)
    cards = Card.objects.filter(user=candidate)
    assert len(cards) == services.SET_SIZE
    assert all(c.reviews == 1 and c.due >= NOW + timedelta(days=2) for c in cards)


# ---------------------------------------------------------------------------------------------
# Concept cards: one review per attempt


def _concept_in_two_steps() -> tuple[str, str, str]:
    """A concept that rubric points of two steps of the chat question link, and the steps."""
    spec = revision_of().question_spec
    steps_of: dict[str, list[str]] = {}
    for step in spec.steps:
        for point in step.rubric:
            for slug in point.concepts:
                if step.key not in steps_of.setdefault(slug, []):
                    steps_of[slug].append(step.key)
    slug, steps = next((s, k) for s, k in steps_of.items() if len(k) >= 2)
    return slug, steps[0], steps[1]


def _points(step_key: str, concept: str, verdict: str) -> list[dict]:
    """Every rubric point of the step hit, but those linking `concept` given `verdict`."""
    step = revision_of().question_spec.step(step_key)
    return [{"id": p.id, "verdict": verdict if concept in p.concepts else "hit"}
            for p in step.rubric]  # fmt: skip


def test_a_concept_missed_in_one_step_stays_due_when_a_later_step_gets_it(content_loaded):
    """A miss in Estimate and a hit in Architecture minutes later: the hit graduated the
    card, days away, so the concept just missed was not due."""
    user = User.objects.create_user("concepts", password="a-long-Passphrase-42")
    concept, first, second = _concept_in_two_steps()
    attempt = Attempt.objects.create(user=user, revision=revision_of())
    graded_submission(user=user, at=NOW, step=first, grades={"llm": 0.4}, attempt=attempt,
                      points=_points(first, concept, "miss"))  # fmt: skip
    later = NOW + timedelta(minutes=10)
    graded_submission(user=user, at=later, step=second, grades={"llm": 1.0}, attempt=attempt,
                      points=_points(second, concept, "hit"))  # fmt: skip
    assert services.concept_cards_sync(user=user) == 2
    assert f"concept:{concept}" in _due_today(user, later + timedelta(hours=1))
    card = Card.objects.get(user=user, key=f"concept:{concept}")
    assert (card.reviews, card.lapses) == (1, 1)
    # The next attempt that gets it right is a review of its own, and relearns it.
    again = NOW + timedelta(hours=2)
    graded_submission(user=user, at=again, step=second, grades={"llm": 1.0},
                      points=_points(second, concept, "hit"))  # fmt: skip
    services.concept_cards_sync(user=user)
    card.refresh_from_db()
    assert card.reviews == 2
    assert f"concept:{concept}" not in _due_today(user, again + timedelta(hours=1))


def test_an_instructors_review_replaces_the_models_verdict_on_that_answer(content_loaded):
    """The model missed the concept; an instructor's review of the same answer says it was
    there: the attempt's one review is rated by the instructor's verdict."""
    user = User.objects.create_user("reviewed", password="a-long-Passphrase-42")
    concept, first, _second = _concept_in_two_steps()
    submission = graded_submission(user=user, at=NOW, step=first, grades={"llm": 0.2},
                                   points=_points(first, concept, "miss"))  # fmt: skip
    services.concept_cards_sync(user=user)
    key = f"concept:{concept}"
    assert key in _due_today(user, NOW + timedelta(minutes=5))
    review = Grade.objects.create(submission=submission, grader="instructor", score=1.0,
                                  points=_points(first, concept, "hit"))  # fmt: skip
    Grade.objects.filter(pk=review.pk).update(created_at=NOW + timedelta(minutes=1))
    assert services.concept_cards_sync(user=user) == 1
    card = Card.objects.get(user=user, key=key)
    assert (card.reviews, card.lapses) == (1, 0)
    assert key not in _due_today(user, NOW + timedelta(minutes=5))
