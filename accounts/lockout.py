"""Failed log-ins lock out an account from an address, and an address across accounts.

django-axes counts failures per parameter set in AXES_LOCKOUT_PARAMETERS but compares them all
with one limit. One account from one address deserves few guesses (5); one address across many
accounts (password spraying, a flood of random names) deserves more, since a classroom shares
a NAT address, but still a bound (20): each refused guess then costs a few queries instead of a
password hash, so a flood cannot take every request slot from signed-in users.
"""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.db.models import Sum


class AccountLockoutHandler(AxesDatabaseHandler):
    """axes' database handler with one failure limit per lock-out parameter set.

    axes locks out when `get_failures` reaches AXES_FAILURE_LIMIT (the smallest limit), both
    when it records a failure and when it checks a new log-in. So each set's failures are
    scaled to that limit: with limits (5, 20) an address's failures count a quarter each.
    """

    def get_failures(self, request, credentials: dict | None = None) -> float:
        attempts_per_set = self.get_user_attempts(request, credentials)
        smallest = min(settings.LOCKOUT_LIMITS)
        scaled = [
            (attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0) * smallest / limit
            for attempts, limit in zip(attempts_per_set, settings.LOCKOUT_LIMITS, strict=True)
        ]
        return max(scaled, default=0)
