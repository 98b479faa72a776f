"""The report and the interviewer's live view (polled every few seconds) cost the same number
of queries with one step submitted and scored as with all five: each step's submission, its
grades and the interviewer's scores are read once for the page, not once per step."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from mocks import services as mock
from practice import services as flow
from questions.models import Question

from .conftest import client_for

STEPS = ("clarify", "estimate", "architecture", "bottlenecks", "tradeoffs")
PAGES = ("mock_report", "mock_interview", "mock_interview_events")


def _submit_and_score(session, step_key: str) -> None:
    answer = flow.answer_open(attempt=session.attempt, step_key=step_key)
    outcome = flow.step_submit(
        answer=answer, text=f"An answer to {step_key}: a gateway.", fields={}, base_version=0
    )
    flow.submission_grade(submission_id=outcome.submission.pk)
    rubric = session.attempt.revision.question_spec.step(step_key).rubric
    mock.step_score_blind(
        session=session, step_key=step_key, verdicts={p.id: "hit" for p in rubric}
    )


def _queries(client, name: str, session) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse(name, kwargs={"session_id": session.pk}))
    assert response.status_code == 200, name
    return [q["sql"] for q in queries.captured_queries]


def _session(people, steps: tuple[str, ...], *, ended: bool):
    """A session of the chat question with a person interviewing, `steps` submitted, graded
    and scored by them; ended (its report open) when `ended`."""
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="human")
    mock.invite_accept(
        session_id=session.pk, token=mock.invite_token(session), user=people["interviewer"]
    )
    session.refresh_from_db()
    for step_key in steps:
        _submit_and_score(session, step_key)
    if ended:
        mock.session_end(session=session, reason="candidate")
    return session


@pytest.mark.parametrize("name", PAGES)
def test_a_mock_page_costs_the_same_queries_for_five_scored_steps_as_for_one(people, name):
    client = client_for(people["interviewer"])
    ended = name == "mock_report"
    first = _session(people, STEPS[:1], ended=ended)
    one = len(_queries(client, name, first))
    if not ended:  # one running mock a question: the first ends before the second starts
        mock.session_end(session=first, reason="candidate")
    session = _session(people, STEPS, ended=ended)
    queries = _queries(client, name, session)
    assert len(queries) <= one, f"{name}: {one} queries with 1 step scored, {len(queries)} with 5"
    grade_reads = [q for q in queries if 'FROM "interview_grade"' in q]
    assert len(grade_reads) < len(STEPS), f"{name}: grades read {len(grade_reads)} times"
    # Every step still shows its submission, and its points the interviewer's verdicts.
    steps = client.get(reverse(name, kwargs={"session_id": session.pk})).context["steps"]
    assert [s["key"] for s in steps] == list(STEPS)
    for step in steps:
        assert step["points"] and all(p["human"] == "hit" for p in step["points"])
