"""Failed log-ins lock out an account from an address, and an address across accounts.

django-axes counts failures per parameter set in AXES_LOCKOUT_PARAMETERS but compares them all
with one limit. One account from one address deserves few guesses (5); one address across many
accounts (password spraying, a flood of random names) deserves more, since a classroom shares
a NAT address, but still a bound (20).

A locked-out address is also noted in the shared cache, where `AddressLockoutMiddleware`
refuses its next log-ins before sessions, CSRF, the database or the password hasher run: a
flood then costs a cache read per guess and signed-in candidates keep their request slots.
"""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from rate_limits import client_address


def _address_key(address: str | None) -> str:
    return f"lockout:address:{address or '-'}"


class AccountLockoutHandler(AxesDatabaseHandler):
    """axes' database handler with one failure limit per lock-out parameter set.

    axes locks out when `get_failures` reaches AXES_FAILURE_LIMIT (the smallest limit), both
    when it records a failure and when it checks a new log-in. So each set's failures are
    scaled to that limit: with limits (5, 20) an address's failures count a quarter each.
    """

    def _failures_per_set(self, request, credentials: dict | None) -> list[int]:
        return [
            attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        ]

    def get_failures(self, request, credentials: dict | None = None) -> float:
        smallest = min(settings.LOCKOUT_LIMITS)
        failures = self._failures_per_set(request, credentials)
        limits = settings.LOCKOUT_LIMITS
        return max(n * smallest / limit for n, limit in zip(failures, limits, strict=True))

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        super().user_login_failed(sender, credentials, request=request, **kwargs)
        if request is None:
            return
        address_failures = self._failures_per_set(request, credentials)[-1]
        if address_failures >= settings.LOCKOUT_LIMITS[-1]:
            cool_off = get_cool_off(request)
            timeout = int(cool_off.total_seconds()) if cool_off else None
            cache.set(_address_key(request.axes_ip_address), True, timeout)


class AddressLockoutMiddleware:
    """Refuse a locked-out address's log-in posts first, after a cache read, with the same page
    axes shows (AXES_LOCKOUT_TEMPLATE). It runs before sessions and authentication, so the page
    is rendered for a signed-out visitor."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.login_path = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST":
            if self.login_path is None:
                self.login_path = reverse("login")
            if request.path == self.login_path and cache.get(_address_key(client_address(request))):
                request.user = AnonymousUser()
                return render(request, settings.AXES_LOCKOUT_TEMPLATE, status=429)
        return self.get_response(request)
