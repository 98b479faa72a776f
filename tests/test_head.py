"""Every page that answers GET answers HEAD with the same status (Django's require_safe).

The test walks the URL list rather than naming views, so a view added later with a GET-only
decorator is caught too. Each URL is asked with the shipped content loaded, as a signed-in
candidate with an attempt, a submission and an open follow-up, so the parameters resolve to
real rows; HEAD goes first, so a page cached by the GET cannot answer for the view.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from interview import flow
from interview.models import Concept, Question


def _named_patterns(patterns, namespace: str = "") -> list[tuple[str, list[str]]]:
    """(URL name with its namespace, parameter names) of every named pattern."""
    found = []
    for p in patterns:
        if isinstance(p, URLResolver):
            if p.namespace == "admin":
                continue  # Django's own admin, not our views
            inner = f"{namespace}{p.namespace}:" if p.namespace else namespace
            found += _named_patterns(p.url_patterns, inner)
        elif isinstance(p, URLPattern) and p.name:
            params = list(getattr(p.pattern, "converters", {}) or p.pattern.regex.groupindex)
            found.append((namespace + p.name, params))
    return found


@pytest.fixture
def signed_in(client, content_loaded, django_capture_on_commit_callbacks):
    user = User.objects.create_user("cand", password="cand-Passphrase-1")
    client.force_login(user)
    question = Question.objects.get(slug="chat-api-50qps")
    attempt = flow.attempt_start(user=user, revision=question.current_revision)
    follow_up = question.current_revision.question_spec.step("tradeoffs").follow_ups[0].id
    answer = flow.answer_open(attempt=attempt, step_key="tradeoffs", follow_up_id=follow_up)
    with django_capture_on_commit_callbacks(execute=False):
        outcome = flow.step_submit(answer=answer, text="Scale out.", fields={}, base_version=0)
    return {
        "attempt_id": attempt.pk,
        "submission_id": outcome.submission.pk,
        "step": "tradeoffs",
        "follow_up": follow_up,
        "question_slug": question.slug,
        "concept_slug": Concept.objects.first().slug,
    }


def _kwargs(name: str, params: list[str], rows: dict) -> dict:
    values = {**rows, "slug": rows["concept_slug" if "concept" in name else "question_slug"]}
    return {p: values[p] for p in params}


def test_every_get_url_answers_head_with_the_same_status(client, signed_in):
    checked = []
    for name, params in _named_patterns(get_resolver().url_patterns):
        url = reverse(name, kwargs=_kwargs(name, params, signed_in))
        head = client.head(url).status_code
        get = client.get(url).status_code
        if get == 405:
            continue  # a POST-only endpoint
        assert head == get, f"{url}: HEAD {head}, GET {get}"
        checked.append(url)
    # The walk really reached the pages: the public ones, the practice ones, the planner's.
    for url in ("/", "/history/", "/planner/", "/accounts/signup/", "/healthz"):
        assert url in checked
    assert any("/follow-ups/" in u for u in checked)
    assert any("/feedback/" in u for u in checked)
