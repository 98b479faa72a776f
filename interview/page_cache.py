"""Rendered practice pages, cached per attempt state.

A step page or a feedback panel shows nothing but the attempt's own rows (answers, submissions,
grades), the immutable question revision and the concept notes. `Attempt.state_version` grows,
by database trigger, on every write to those rows, so a page rendered at one state_version is
the page at that version: the key is (attempt, state_version, status, path), and a write of
any kind makes the next read a miss. Concept notes can change on `load_content`; the timeout
bounds that, as the in-process concept cache (`selectors.concepts_by_slug`) already does.

What is per request is put back on each hit: the CSRF token (masked afresh, as Django does
for every response) and the messages framework's queue, whose pages are never cached.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.contrib import messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token

from interview.models import Attempt

TIMEOUT_S = 300
_TOKEN = re.compile(
    rb'(?:"x-csrftoken": "|name="csrfmiddlewaretoken" value=")([A-Za-z0-9]{32,64})"'
)
_SLOT = b"\x00csrf\x00"


def page_key(request: HttpRequest, attempt: Attempt) -> str:
    htmx = "h" if request.headers.get("HX-Request") else "p"
    # started_at too: an id can come back (a rolled-back transaction, a recreated database
    # beside a Redis cache that outlived it), a start time to the microsecond does not.
    return (
        f"page:{attempt.pk}:{attempt.started_at.timestamp()}:{attempt.state_version}:"
        f"{attempt.status}:{htmx}:{request.get_full_path()}"
    )


def respond(
    request: HttpRequest, attempt: Attempt, build: Callable[[], HttpResponse]
) -> HttpResponse:
    """The page `build` would render for this attempt state, from the cache when it holds it."""
    if len(messages.get_messages(request)):
        return build()  # a one-off notice belongs to this response only
    key = page_key(request, attempt)
    stored = cache.get(key)
    if stored is not None:
        status, headers, body = stored
        return HttpResponse(
            body.replace(_SLOT, get_token(request).encode()), status=status, headers=headers
        )
    response = build()
    if response.status_code == 200 and not response.streaming and not response.cookies:
        body = response.content
        tokens = {m.group(1) for m in _TOKEN.finditer(body)}
        for token in tokens:
            body = body.replace(token, _SLOT)
        cache.set(key, (response.status_code, dict(response.headers), body), TIMEOUT_S)
    return response
