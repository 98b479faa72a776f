"""Disputes sent at the same moment with one left of the day's: the count and the write are
one step per user, so of two grades disputed from two tabs the second is refused instead of
both passing the count, and a double click on one grade stores one dispute and refuses
neither post."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User

from rate_limits import LimitExceeded
from review import services
from review.models import GradeDispute
from tests.conftest import _store, at_once

from .conftest import make_submission


def _at_once(subs, candidate, monkeypatch) -> list[str]:
    """Dispute each of `subs` in a thread of its own, all at once, with room between each
    one's count and its write for the others; returns the outcomes."""
    counted = services.disputes_used_today

    def slow_count(user_id: int) -> int:
        used = counted(user_id)
        time.sleep(0.3)  # between the count and the write: room for the other post
        return used

    monkeypatch.setattr(services, "disputes_used_today", slow_count)

    def send(submission):
        def dispute():
            services.grade_dispute(
                user=candidate, submission=submission, reason="The gateway is in my first line."
            )
            return "stored"

        return dispute

    outcomes = ["refused" if isinstance(o, LimitExceeded) else o for o in at_once(*map(send, subs))]
    return sorted(outcomes)


@pytest.fixture
def candidate(core_content, settings):
    _store(core_content)
    settings.GRADE_DISPUTES_PER_DAY = 1
    return User.objects.create_user("candidate")


def _graded(candidate):
    return make_submission(user=candidate, grades={"llm": (0.2, {"arch-gateway": "miss"})})


@pytest.mark.django_db(transaction=True)
def test_two_disputes_at_once_with_one_left_store_one(candidate, monkeypatch):
    assert _at_once([_graded(candidate), _graded(candidate)], candidate, monkeypatch) == [
        "refused",
        "stored",
    ]
    assert GradeDispute.objects.filter(user=candidate).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_double_click_on_the_last_dispute_of_the_day_is_stored_once(candidate, monkeypatch):
    submission = _graded(candidate)
    assert _at_once([submission, submission], candidate, monkeypatch) == ["stored", "stored"]
    assert GradeDispute.objects.filter(user=candidate).count() == 1
