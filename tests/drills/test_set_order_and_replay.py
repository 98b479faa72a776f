"""What a mixed set takes (what "Due today" lists first), answers taken in the set's order
only, and a replay of givens already shown checked without a review of the kind's card."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client

from drills import engine, selectors, services
from drills.models import Card, DrillItem

NOW = datetime(2026, 3, 2, 10, 17, 51, tzinfo=UTC)


@pytest.fixture
def candidate(db):
    return User.objects.create_user("ordered", password="a-long-Passphrase-42")


def _card(user, kind: str, due: datetime) -> Card:
    return Card.objects.create(
        user=user, key=f"drill:{kind}", source=Card.Source.DRILL, due=due, state={}
    )


def _right(item: DrillItem) -> str:
    drill = engine.drill_generate(item.kind, item.seed)
    return f"{drill.expected!r} {drill.unit}".strip()


# ---------------------------------------------------------------------------------------------
# A mixed set and "Due today"


def test_a_mixed_set_takes_what_due_today_lists_first_then_new_kinds(candidate):
    """A KV card due 35 seconds after the set started was listed as due today, yet the set
    took only cards due already and put kinds never tried ahead of it."""
    _card(candidate, "kv_per_token", NOW + timedelta(seconds=35))  # later today
    _card(candidate, "weights", NOW - timedelta(hours=1))  # overdue
    _card(candidate, "ttft", NOW + timedelta(hours=13))  # 23:17 today
    _card(candidate, "n_gpu", NOW + timedelta(days=3))  # not today
    listed = [d.kind for d in selectors.cards_due(user=candidate, now=NOW)]
    assert listed == ["weights", "kv_per_token", "ttft"]
    drill_set = services.drill_set_start(user=candidate, now=NOW)
    kinds = list(drill_set.items.order_by("position").values_list("kind", flat=True))
    never_tried = [k for k in engine.AVAILABLE
                   if k not in {"kv_per_token", "weights", "ttft", "n_gpu"}]  # fmt: skip
    assert kinds == listed + never_tried[:2]


def test_a_mixed_set_takes_cards_due_later_after_the_new_kinds(candidate):
    for kind in engine.AVAILABLE[:7]:
        _card(candidate, kind, NOW + timedelta(days=2 + engine.AVAILABLE.index(kind)))
    drill_set = services.drill_set_start(user=candidate, now=NOW)
    kinds = list(drill_set.items.order_by("position").values_list("kind", flat=True))
    assert kinds == [*engine.AVAILABLE[7:], *engine.AVAILABLE[:3]]


# ---------------------------------------------------------------------------------------------
# One drill at a time


def test_an_answer_to_a_later_drill_is_refused_while_an_earlier_one_is_open(candidate):
    drill_set = services.drill_set_start(user=candidate, kind="n_inst", now=NOW)
    third = drill_set.items.get(position=3)
    with pytest.raises(services.DrillAnswerError, match="Answer drill 1 first") as error:
        services.drill_item_answer(item=third, answer=_right(third), now=NOW)
    assert error.value.status == 409
    third.refresh_from_db()
    assert not third.is_answered
    assert not Card.objects.filter(user=candidate).exists()


def test_a_direct_post_out_of_order_is_a_409_that_stores_nothing(candidate):
    """The page says "Answer the drill above first"; a post to drill 3 while drill 1 was
    open was taken (200) and reviewed the card."""
    client = Client()
    client.force_login(candidate)
    set_url = client.post("/drills/sets/", {"kind": "n_inst"})["Location"]
    services.drill_item_answer(
        item=DrillItem.objects.get(user=candidate, position=1), answer="3", now=NOW
    )
    reviews = Card.objects.get(user=candidate).reviews
    for headers in ({}, {"HX-Request": "true"}):
        response = client.post(f"{set_url}drills/3/answer/", {"answer": "3"}, headers=headers)
        assert response.status_code == 409
        body = response.content.decode()
        assert "Answer drill 2 first: a set&#x27;s drills are answered in order" in body
        # No verdict to move to: focus stays in the box of the drill to answer.
        assert re.search(r'<input [^>]*id="answer-2"[^>]*autofocus', body)
        assert body.count("autofocus") == 1
    assert not DrillItem.objects.filter(user=candidate, position__gt=1, verdict__gt="").exists()
    assert Card.objects.get(user=candidate).reviews == reviews


def test_a_drill_of_a_kind_no_longer_offered_does_not_hold_up_the_rest(candidate, monkeypatch):
    drill_set = services.drill_set_start(user=candidate, now=NOW)
    first, second, third = drill_set.items.order_by("position")[:3]
    services.drill_item_answer(item=first, answer="1", now=NOW)
    monkeypatch.setattr(engine, "AVAILABLE", tuple(k for k in engine.AVAILABLE
                                                   if k != second.kind))  # fmt: skip
    services.drill_item_answer(item=third, answer="1", now=NOW)
    third.refresh_from_db()
    assert third.is_answered


# ---------------------------------------------------------------------------------------------
# A replay by seed


def test_a_replay_of_givens_already_shown_is_checked_but_not_counted(candidate):
    """The worked solution of a drill shows its seed; replaying it and typing the answer
    remembered was rated Good and pushed the card days away."""
    first_set = services.drill_set_start(user=candidate, kind="weights", now=NOW)
    seen = first_set.items.get(position=1)
    services.drill_item_answer(item=seen, answer="1 GiB", now=NOW)  # a miss: due again at once
    card = Card.objects.get(user=candidate, key="drill:weights")
    before = (card.due, card.reviews, card.lapses, card.state)
    later = NOW + timedelta(minutes=5)
    replay_set = services.drill_set_start(user=candidate, kind="weights", seed=seen.seed, now=later)
    replayed = replay_set.items.get(position=1)
    assert replayed.replay and replayed.fingerprint == seen.fingerprint
    result = services.drill_item_answer(item=replayed, answer=_right(replayed), now=later)
    assert result.verdict == "correct"
    replayed.refresh_from_db()
    assert replayed.verdict == "correct"  # checked and kept
    card.refresh_from_db()
    assert (card.due, card.reviews, card.lapses, card.state) == before
    assert "drill:weights" in {d.card.key for d in selectors.cards_due(user=candidate, now=later)}
    # The rest of the set is fresh givens, and counts as ever.
    rest = replay_set.items.filter(position__gt=1)
    assert not any(i.replay for i in rest)
    services.drill_item_answer(item=rest[0], answer=_right(rest[0]), now=later)
    card.refresh_from_db()
    assert card.reviews == before[1] + 1


def test_the_set_page_says_a_replay_is_not_counted(candidate):
    seen = services.drill_set_start(user=candidate, kind="weights", now=NOW).items.first()
    services.drill_item_answer(item=seen, answer="1 GiB", now=NOW)
    client = Client()
    client.force_login(candidate)
    set_url = client.post("/drills/sets/", {"kind": "weights", "seed": str(seen.seed)})["Location"]
    page = client.get(set_url).content.decode()
    sentence = "A replay: checked, not counted in your schedule."
    assert page.count(sentence) == 1
    assert page.index(sentence) < page.index('id="drill-2"')


def test_a_seed_never_seen_counts_as_a_normal_drill(candidate):
    drill_set = services.drill_set_start(user=candidate, kind="weights", seed=12345, now=NOW)
    first = drill_set.items.get(position=1)
    assert not first.replay
    services.drill_item_answer(item=first, answer=_right(first), now=NOW)
    card = Card.objects.get(user=candidate, key="drill:weights")
    assert card.reviews == 1 and card.due >= NOW + timedelta(days=2)
    client = Client()
    client.force_login(candidate)
    page = client.get(f"/drills/sets/{drill_set.pk}/").content.decode()
    assert "A replay" not in page
