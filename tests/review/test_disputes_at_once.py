"""Two disputes sent at the same moment (two tabs) with one left of the day's: the count and
the write are one step per user, so the second is refused instead of both passing the count."""

from __future__ import annotations

import threading
import time

import pytest
from django.contrib.auth.models import User
from django.db import connection

from rate_limits import LimitExceeded
from review import services
from review.models import GradeDispute
from tests.conftest import _store

from .conftest import make_submission


@pytest.mark.django_db(transaction=True)
def test_two_disputes_at_once_with_one_left_store_one(core_content, settings, monkeypatch):
    _store(core_content)
    settings.GRADE_DISPUTES_PER_DAY = 1
    candidate = User.objects.create_user("candidate")
    subs = [
        make_submission(user=candidate, grades={"llm": (0.2, {"arch-gateway": "miss"})})
        for _ in range(2)
    ]
    counted = services.disputes_used_today

    def slow_count(user_id: int) -> int:
        used = counted(user_id)
        time.sleep(0.3)  # between the count and the write: room for the other tab's dispute
        return used

    monkeypatch.setattr(services, "disputes_used_today", slow_count)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def send(submission) -> None:
        try:
            barrier.wait()
            services.grade_dispute(
                user=candidate, submission=submission, reason="The gateway is in my first line."
            )
            outcomes.append("stored")
        except LimitExceeded:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(sub,)) for sub in subs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["refused", "stored"]
    assert GradeDispute.objects.filter(user=candidate).count() == 1
