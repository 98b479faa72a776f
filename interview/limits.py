"""Per-user rate limits and daily quotas, counted in the cache that all processes share."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache


class LimitExceeded(Exception):
    """A limit was hit; the message is a sentence for the user."""


def _bump(key: str, window_s: int) -> int:
    # add() only creates the key if missing, so the window starts at the first event.
    cache.add(key, 0, timeout=window_s)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=window_s)
        return 1


def check_rate(*, user_id: int, action: str, per_minute: int) -> None:
    """Refuse more than `per_minute` of `action` by one user within a minute."""
    window = int(time.time() // 60)
    count = _bump(f"rate:{action.replace(' ', '_')}:{user_id}:{window}", 90)
    if count > per_minute:
        raise LimitExceeded(
            f"You are going faster than {per_minute} {action}s a minute. "
            "Wait a minute and try again; your answer is saved."
        )


def check_daily_quota(*, user_id: int, action: str, per_day: int) -> None:
    """Refuse more than `per_day` of `action` by one user in a UTC day."""
    day = time.strftime("%Y%m%d", time.gmtime())
    count = _bump(f"quota:{action}:{user_id}:{day}", 60 * 60 * 26)
    if count > per_day:
        raise LimitExceeded(
            f"You have used today's {per_day} gradings. Your answer is saved; submit it again "
            "tomorrow (UTC) to have it graded."
        )


def grading_limits(user_id: int) -> None:
    check_rate(user_id=user_id, action="submission", per_minute=settings.GRADING_RATE_PER_MINUTE)
    check_daily_quota(user_id=user_id, action="grading", per_day=settings.GRADING_DAILY_QUOTA)
