"""Per-client rate limits and daily quotas, counted in the cache every process shares.

The one limiter for the site: the practice views count per signed-in user, the planner's
public worksheet per user or per address. A client is any stable string (`client_key`).
"""

from __future__ import annotations

import time

from django.core.cache import cache
from django.http import HttpRequest


class LimitExceeded(Exception):
    """A limit was hit; the message is a sentence for the user."""


def user_client(user_id: int) -> str:
    """The client key of a signed-in user."""
    return f"user:{user_id}"


def client_key(request: HttpRequest) -> str:
    """Who a request counts against: the signed-in user, else the connecting address."""
    if request.user.is_authenticated:
        return user_client(request.user.pk)
    # REMOTE_ADDR only: X-Forwarded-For is whatever the client says unless a proxy we run
    # rewrites it, and trusting it would let anyone pick a fresh rate-limit bucket.
    return f"addr:{request.META.get('REMOTE_ADDR', '')}"


def _bump(key: str, window_s: int) -> int:
    # add() only creates the key if missing, so the window starts at the first event.
    cache.add(key, 0, timeout=window_s)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=window_s)
        return 1


def check_rate(*, client: str, action: str, per_minute: int) -> None:
    """Refuse more than `per_minute` of `action` by one client within a clock minute.

    Raises LimitExceeded, whose message names the action ("worksheet evaluation" reads as
    "... 240 worksheet evaluations a minute").
    """
    window = int(time.time() // 60)
    count = _bump(f"rate:{action.replace(' ', '_')}:{client}:{window}", 90)
    if count > per_minute:
        raise LimitExceeded(
            f"You are going faster than {per_minute} {action}s a minute. "
            "Wait a minute and try again; your answer is saved."
        )


def check_daily_quota(*, client: str, action: str, per_day: int) -> None:
    """Refuse more than `per_day` of `action` by one client in a UTC day."""
    day = time.strftime("%Y%m%d", time.gmtime())
    count = _bump(f"quota:{action.replace(' ', '_')}:{client}:{day}", 60 * 60 * 26)
    if count > per_day:
        raise LimitExceeded(
            f"You have used today's {per_day} {action}s. Your answer is saved; submit it again "
            "tomorrow (UTC) to have it graded."
        )
