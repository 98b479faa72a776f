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

from accounts.instructors import instructor_grant
from authoring.services import problem_report_create
from drills import services as drills
from mocks import services as mock
from mocks.models import MockSession
from practice import services as flow
from practice.models import Grade
from questions.models import Concept, Question


def _named_patterns(
    patterns, namespace: str = "", outer: tuple[str, ...] = ()
) -> list[tuple[str, list[str]]]:
    """(URL name with its namespace, parameter names) of every named pattern; a nested
    pattern takes the parameters of the routes it is included under too."""
    found = []
    for p in patterns:
        params = [*outer, *(getattr(p.pattern, "converters", {}) or p.pattern.regex.groupindex)]
        if isinstance(p, URLResolver):
            if p.namespace == "admin":
                continue  # Django's own admin, not our views
            inner = f"{namespace}{p.namespace}:" if p.namespace else namespace
            found += _named_patterns(p.url_patterns, inner, tuple(params))
        elif isinstance(p, URLPattern) and p.name:
            found.append((namespace + p.name, params))
    return found


@pytest.fixture
def signed_in(client, content_loaded, django_capture_on_commit_callbacks):
    """An instructor (so the authoring and review pages answer, not 404) who is also
    practising: an attempt, a graded submission, a problem report and a mock session."""
    user = User.objects.create_user("cand", password="cand-Passphrase-1")
    instructor_grant(user)
    client.force_login(user)
    question = Question.objects.get(slug="chat-api-50qps")
    attempt = flow.attempt_start(user=user, revision=question.current_revision)
    follow_up = question.current_revision.question_spec.step("tradeoffs").follow_ups[0].id
    answer = flow.answer_open(attempt=attempt, step_key="tradeoffs", follow_up_id=follow_up)
    with django_capture_on_commit_callbacks(execute=False):
        outcome = flow.step_submit(answer=answer, text="Scale out.", fields={}, base_version=0)
    flow.submission_grade(submission_id=outcome.submission.pk)
    report = problem_report_create(
        user=user, attempt=attempt, step_key="clarify", message="A typo.", share_answer=False
    )
    # One running mock a question: the ended one (a share link needs one) ends first.
    ended = mock.mock_session_start(
        user=user, revision=question.current_revision, mode=MockSession.Mode.APP
    )
    mock.session_end(session=ended, reason="ended early")
    session = mock.mock_session_start(
        user=user, revision=question.current_revision, mode=MockSession.Mode.HUMAN
    )
    drill_set = drills.drill_set_start(user=user, seed=1)
    candidate = User.objects.create_user("other-cand", password="cand-Passphrase-2")
    assignment = drills.assignment_create(instructor=user, candidate=candidate, kind="weights")
    return {
        "attempt_id": attempt.pk,
        "submission_id": outcome.submission.pk,
        "step": "tradeoffs",
        "follow_up": follow_up,
        "question_slug": question.slug,
        "concept_slug": Concept.objects.first().slug,
        "number": question.current_revision.number,
        "grade_id": Grade.objects.filter(submission=outcome.submission).first().pk,
        "report_id": report.pk,
        "session_id": session.pk,
        "invite_token": mock.invite_token(session),
        "share_token": mock.share_issue(session=ended),
        "set_id": drill_set.pk,
        "position": 1,
        "candidate_id": candidate.pk,
        "assignment_id": assignment.pk,
    }


def _kwargs(name: str, params: list[str], rows: dict) -> dict:
    values = {
        **rows,
        "slug": rows["concept_slug" if "concept" in name else "question_slug"],
        "token": rows["share_token" if "shared" in name else "invite_token"],
    }
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
    for prefix in ("/author/", "/review/", "/mock/", "/drills/", "/simulator/"):
        assert any(u.startswith(prefix) for u in checked), prefix
