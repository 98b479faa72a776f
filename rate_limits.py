"""Per-client rate limits, daily quotas and CPU budgets, counted in the cache every process
shares.

The one limiter for the site: the practice views count per signed-in user, the planner's
public pages per user or per address, sign-ups per address. A client is any stable string
(`client_key`, `address_client`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager

from axes.helpers import get_client_ip_address
from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

# The clock the rate windows are counted by; tests pin it so that a burst falls in one window.
clock = time.time


class LimitExceeded(Exception):
    """A limit was hit; the message is a sentence for the user."""


def user_client(user_id: int) -> str:
    """The client key of a signed-in user."""
    return f"user:{user_id}"


def client_address(request: HttpRequest) -> str:
    """The client's address, with settings.TRUSTED_PROXY_COUNT proxies in front of us.

    With none, the TCP peer: X-Forwarded-For is whatever the client wrote, and trusting it
    would let anyone pick a fresh bucket for every request. Behind N proxies, each appends the
    address it received from, so the client is the Nth entry from the right; entries further
    left are the client's own words. axes reads the address here (AXES_CLIENT_IP_CALLABLE).
    """
    peer = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    if not proxies:
        return peer
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [a for a in forwarded if a]
    # Fewer entries than proxies: a request that skipped a proxy; the peer is all we know.
    return forwarded[-proxies] if len(forwarded) >= proxies else peer


def address_client(request: HttpRequest) -> str:
    """The client key of the connecting address, as log-in throttling computes it."""
    return f"addr:{get_client_ip_address(request) or ''}"


def client_key(request: HttpRequest) -> str:
    """Who a request counts against: the signed-in user, else the connecting address."""
    if request.user.is_authenticated:
        return user_client(request.user.pk)
    return address_client(request)


def _spend(key: str, amount: int, window_s: int) -> int:
    """Add `amount` to the counter `key` (created for `window_s` seconds); the new total."""
    # add() only creates the key if missing, so the window starts at the first event.
    cache.add(key, 0, timeout=window_s)
    try:
        return cache.incr(key, amount)
    except ValueError:  # expired between add and incr
        cache.set(key, amount, timeout=window_s)
        return amount


def _count(*, client: str, action: str, window_s: int, amount: int = 1) -> int:
    """Count `amount` of `action` by `client` in the current clock window of `window_s`."""
    window = int(clock() // window_s)
    key = f"rate:{action.replace(' ', '_')}:{client}:{window_s}:{window}"
    return _spend(key, amount, window_s + 30)


def check_rate(*, client: str, action: str, per_minute: int) -> None:
    """Refuse more than `per_minute` of `action` by one client within a clock minute.

    Raises LimitExceeded, whose message names the action ("worksheet evaluation" reads as
    "... 240 worksheet evaluations a minute").
    """
    if _count(client=client, action=action, window_s=60) > per_minute:
        raise LimitExceeded(
            f"You are going faster than {per_minute} {action}s a minute. "
            "Wait a minute and try again; your answer is saved."
        )


def check_hourly_rate(*, client: str, action: str, per_hour: int) -> None:
    """Refuse more than `per_hour` of `action` by one client within a clock hour."""
    if _count(client=client, action=action, window_s=3600) > per_hour:
        raise LimitExceeded(
            f"There have been more than {per_hour} {action}s from here this hour. "
            "Please try again in an hour."
        )


def check_daily_quota(
    *,
    client: str,
    action: str,
    per_day: int,
    advice: str = "Your answer is saved; submit it again tomorrow (UTC) to have it graded.",
) -> None:
    """Refuse more than `per_day` of `action` by one client in a UTC day; `advice` says what
    to do instead."""
    day = time.strftime("%Y%m%d", time.gmtime())
    count = _spend(f"quota:{action.replace(' ', '_')}:{client}:{day}", 1, 60 * 60 * 26)
    if count > per_day:
        raise LimitExceeded(f"You have used today's {per_day} {action}s. {advice}")


@contextmanager
def cpu_budget(*, client: str, subprocess: bool = False) -> Iterator[None]:
    """Run the block only if `client` has CPU time left this minute, and charge what it used.

    A request count does not bound work: one worksheet can cost a thousand times another. So
    each evaluation is charged the CPU time its thread spent (`time.thread_time`, which a
    sleeping or blocked request does not move) against settings.CPU_SECONDS_PER_MINUTE per
    client, shared by the planner and the practice worksheet. Raises LimitExceeded before the
    block runs when the budget is spent; the block that overspends it still completes.

    `subprocess`: the block's work runs in a child process the thread waits on (Graphviz
    laying out a diagram), which the thread's CPU time does not see: charge the wall-clock
    time the block took instead.
    """
    clock = time.monotonic if subprocess else time.thread_time
    budget_us = settings.CPU_SECONDS_PER_MINUTE * 1_000_000
    if _count(client=client, action="cpu", window_s=60, amount=0) >= budget_us:
        raise LimitExceeded(
            "You have used this minute's share of the server's time (a few very large "
            "calculations, simulations or diagrams in a row). Wait a minute and try again; "
            "nothing you wrote is lost."
        )
    started = clock()
    try:
        yield
    finally:
        # At least a microsecond: every evaluation costs something, however coarse the clock.
        spent_us = max(1, math.ceil((clock() - started) * 1_000_000))
        _count(client=client, action="cpu", window_s=60, amount=spent_us)


@contextmanager
def calculation_budget(
    request: HttpRequest, *, action: str, subprocess: bool = False
) -> Iterator[None]:
    """A calculation a candidate asks for by typing (a napkin check, a worksheet, a drill
    answer, a diagram preview): at most settings.NAPKIN_RATE_PER_MINUTE of `action` a minute,
    and run within the client's CPU budget (`cpu_budget`). Raises LimitExceeded."""
    client = client_key(request)
    check_rate(client=client, action=action, per_minute=settings.NAPKIN_RATE_PER_MINUTE)
    with cpu_budget(client=client, subprocess=subprocess):
        yield
