"""Addresses that a page's forms post to, as a person meets them: posted to after the session
expired, or opened in the browser (a reload, a bookmark, an old log-in's `next`). The step
pages and the drill sets answer both the same way."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, QueryDict
from django.shortcuts import redirect, render


def form_post(
    back: Callable[..., str],
    *,
    owner_page: Callable[..., str],
    typed: Callable[[QueryDict], list[tuple[str, str]]] | None = None,
):
    """login_required and require_POST for an address that the forms of the page
    `back(**url arguments)` post to.

    Signed out (the session expired while the page was open), a request goes to the log-in
    page and on to `back`. htmx follows that redirect itself: requests.js sees where it
    landed and says so in the page, which keeps what was typed. A form posted without htmx
    to an address with `typed` (the post's (label, text) rows) gets instead a page with that
    text to copy and a link to sign in again in a new tab: the redirect would drop it.

    A GET or HEAD goes to `owner_page(request, **url arguments)`, which raises Http404 for
    what the user does not own (the address takes posts only, and Django's 405 is a blank
    page); any other method is a 405."""

    def decorator(view):
        @wraps(view)
        def wrapped(request: HttpRequest, **kwargs) -> HttpResponse:
            if request.method not in ("GET", "HEAD", "POST"):
                return HttpResponseNotAllowed(["POST"])
            if not request.user.is_authenticated:
                if typed is None or request.method != "POST" or request.htmx:
                    return redirect_to_login(back(**kwargs))
                rows = [
                    {"label": label, "value": text, "rows": min(16, text.count("\n") + 2)}
                    for label, text in typed(request.POST)
                ]
                context = {"typed": rows, "back": back(**kwargs)}
                return render(request, "interview/session_expired.html", context, status=403)
            if request.method != "POST":
                return redirect(owner_page(request, **kwargs))
            return view(request, **kwargs)

        return wrapped

    return decorator
