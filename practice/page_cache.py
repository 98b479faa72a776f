"""Rendered practice pages, cached per attempt state.

A step page or a feedback panel shows nothing but the attempt's own rows (answers, submissions,
grades), the immutable question revision and the concept notes. Two counters say when those
rows change, both bumped by the writes in `practice.services`: `Attempt.state_version` on every
answer created and every submission or grade written, `StepAnswer.row_version` on every edit
of that answer. The key is (attempt, state_version, the row_versions of the answers the page
shows, status, path), so a write to what a page shows makes its next read a miss, while a
draft saved on one step leaves the other steps' pages cached. Concept notes can change on
`load_content`; the timeout bounds that, as the in-process concept cache
(`selectors.concepts_by_slug`) does.

What is per request stays out of the cached copy: pages are rendered (`render`) with a
placeholder where the CSRF token goes, and every response, cached or not, gets this request's
token there (masked afresh, as Django does for every response). A request with a message
from the messages framework is rendered and never cached.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection

from django.contrib import messages
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render as render_page

from practice.models import Attempt, StepAnswer

AnswerKey = tuple[str, str]  # (step key, follow-up id)

TIMEOUT_S = 300
# Where a page rendered for the cache has its CSRF token. Letters only, so escaping leaves it
# as it is; if a candidate types it into their own answer, their own page shows their token.
CSRF_SLOT = "csrfTokenSlotQ7vXk2"


def render(request: HttpRequest, template: str, context: dict) -> HttpResponse:
    """`django.shortcuts.render`, with the CSRF token left as a slot for `respond` to fill."""
    return render_page(request, template, {**context, "csrf_token": CSRF_SLOT})


def page_key(request: HttpRequest, attempt: Attempt, shows: Collection[AnswerKey] = ()) -> str:
    htmx = "h" if request.htmx else "p"
    rows = ""
    if shows:
        versions = {
            (step, follow_up): version
            for step, follow_up, version in StepAnswer.objects.filter(
                attempt_id=attempt.pk
            ).values_list("step_key", "follow_up_id", "row_version")
        }
        rows = ".".join(str(versions.get(key, "-")) for key in shows)
    # started_at too: an id can come back (a rolled-back transaction, a recreated database
    # beside a cache that outlived it), a start time to the microsecond does not. The path
    # goes in as a digest: its query string is the client's to make as long and as odd as it
    # likes, and a key stays within what every cache backend takes (memcached: 250 characters).
    path = hashlib.sha256(request.get_full_path().encode()).hexdigest()
    return (
        f"page:{attempt.pk}:{attempt.started_at.timestamp()}:{attempt.state_version}:{rows}:"
        f"{attempt.status}:{htmx}:{path}"
    )


def _with_token(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    if not response.streaming:
        response.content = response.content.replace(CSRF_SLOT.encode(), get_token(request).encode())
    return response


def respond(
    request: HttpRequest,
    attempt: Attempt,
    build: Callable[[], HttpResponse],
    shows: Collection[AnswerKey] = (),
) -> HttpResponse:
    """The page `build` would render for this attempt state, from the cache when it holds it.

    `build` renders with `render` above. `shows` names the answers, as (step, follow-up id),
    whose drafts the page displays.
    """
    if len(messages.get_messages(request)):
        return _with_token(request, build())  # a one-off notice belongs to this response only
    key = page_key(request, attempt, shows)
    stored = caches["pages"].get(key)
    if stored is not None:
        status, headers, body = stored
        return _with_token(request, HttpResponse(body, status=status, headers=headers))
    response = build()
    if response.status_code == 200 and not response.streaming and not response.cookies:
        stored = (response.status_code, dict(response.headers), response.content)
        caches["pages"].set(key, stored, TIMEOUT_S)
    return _with_token(request, response)
