"""Rendered practice pages, cached per attempt state.

A step page or a feedback panel shows nothing but the attempt's own rows (answers, submissions,
grades), the immutable question revision and the concept notes. Database triggers keep two
counters: `Attempt.state_version` grows on every write to submissions and grades and on every
answer inserted or deleted; `StepAnswer.row_version` grows on every edit of that answer. The
key is (attempt, state_version, the row_versions of the answers the page shows, status, path),
so a write of any kind to what a page shows makes its next read a miss, while a draft saved on
one step leaves the other steps' pages cached. Concept notes can change on `load_content`;
the timeout bounds that, as the in-process concept cache (`selectors.concepts_by_slug`) does.

What is per request is put back on each hit: the CSRF token (masked afresh, as Django does
for every response) and the messages framework's queue, whose pages are never cached.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from django.contrib import messages
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token

from interview.models import Attempt, StepAnswer
from config.rows import get_values

AnswerKey = tuple[str, str]  # (step key, follow-up id)

TIMEOUT_S = 300
_TOKEN = re.compile(
    rb'(?:"x-csrftoken": "|name="csrfmiddlewaretoken" value=")([A-Za-z0-9]{32,64})"'
)
_SLOT = b"\x00csrf\x00"


def page_key(request: HttpRequest, attempt: Attempt, shows: Collection[AnswerKey] = ()) -> str:
    htmx = "h" if request.headers.get("HX-Request") else "p"
    rows = ""
    if shows:
        versions = {
            (step, follow_up): version
            for step, follow_up, version in get_values(
                StepAnswer, ("step_key", "follow_up_id", "row_version"), attempt_id=attempt.pk
            )
        }
        rows = ".".join(str(versions.get(key, "-")) for key in shows)
    # started_at too: an id can come back (a rolled-back transaction, a recreated database
    # beside a Redis cache that outlived it), a start time to the microsecond does not.
    return (
        f"page:{attempt.pk}:{attempt.started_at.timestamp()}:{attempt.state_version}:{rows}:"
        f"{attempt.status}:{htmx}:{request.get_full_path()}"
    )


def respond(
    request: HttpRequest,
    attempt: Attempt,
    build: Callable[[], HttpResponse],
    shows: Collection[AnswerKey] = (),
) -> HttpResponse:
    """The page `build` would render for this attempt state, from the cache when it holds it.

    `shows` names the answers, as (step, follow-up id), whose drafts the page displays.
    """
    if len(messages.get_messages(request)):
        return build()  # a one-off notice belongs to this response only
    key = page_key(request, attempt, shows)
    stored = caches["pages"].get(key)
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
        caches["pages"].set(key, (response.status_code, dict(response.headers), body), TIMEOUT_S)
    return response
