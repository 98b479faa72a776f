"""A question's own follow-ups (trade-offs has them), answered during a mock interview, reach
everyone who reads the session: the interviewer's live view shows each as it saves, the
transcript logs its question and answer, the report keeps both beside the step, the replay
steps through their versions, and the session page says they remain once every step is in."""

from __future__ import annotations

import pytest
from django.urls import reverse

from mocks import report as mock_report
from mocks import services as mock
from practice import services as flow
from tests.mocks.conftest import client_for

MAIN = "Scale out replicas behind the router; batch keeps its own pool."
FOLLOW_UP_ANSWER = "Rerun the fleet formula: about 92 instances, so roughly a hundred GPUs."


def submit(session, step_key, text, follow_up_id=""):
    answer = flow.answer_open(attempt=session.attempt, step_key=step_key, follow_up_id=follow_up_id)
    outcome = flow.step_submit(answer=answer, text=text, fields={}, base_version=answer.version)
    flow.submission_grade(submission_id=outcome.submission.pk)
    return outcome.submission


def draft(session, step_key, text, follow_up_id=""):
    answer = flow.answer_open(attempt=session.attempt, step_key=step_key, follow_up_id=follow_up_id)
    return flow.draft_save(answer=answer, text=text, fields={}, base_version=answer.version)


@pytest.fixture
def follow_up(joined_session):
    """The trade-offs step's first authored follow-up (its id and prompt)."""
    fu = joined_session.attempt.revision.question_spec.step("tradeoffs").follow_ups[0]
    return fu


@pytest.fixture
def answered(joined_session, follow_up):
    """The trade-offs answer submitted, then its first follow-up drafted and submitted."""
    session = joined_session
    mock.step_open(session=session, step_key="tradeoffs")
    submit(session, "tradeoffs", MAIN)
    draft(session, "tradeoffs", "Rerun the fleet formula.", follow_up.id)
    submit(session, "tradeoffs", FOLLOW_UP_ANSWER, follow_up.id)
    return session


def test_the_interviewer_sees_the_follow_up_and_its_answer_as_it_saves(joined_session, follow_up):
    session = joined_session
    mock.step_open(session=session, step_key="tradeoffs")
    submit(session, "tradeoffs", MAIN)
    draft(session, "tradeoffs", "Rerun the fleet formula, about 92.", follow_up.id)
    page = client_for(session.interviewer).get(
        reverse("mock_interview", kwargs={"session_id": session.pk})
    )
    html = page.content.decode()
    assert follow_up.prompt in html
    assert "Rerun the fleet formula, about 92." in html
    # The polled part carries it too (the page swaps it in without a reload).
    live = client_for(session.interviewer).get(
        reverse("mock_interview_events", kwargs={"session_id": session.pk})
    )
    assert "Rerun the fleet formula, about 92." in live.content.decode()


def test_the_transcript_logs_the_follow_up_question_and_answer(answered, follow_up):
    rows = mock_report.transcript(answered)
    texts = [r["text"] for r in rows]
    asked = next(i for i, t in enumerate(texts) if follow_up.prompt in t)
    answer = next(i for i, t in enumerate(texts) if FOLLOW_UP_ANSWER in t)
    assert asked < answer
    assert MAIN not in " ".join(texts)  # the step's own answer is no transcript entry


def test_the_report_keeps_the_follow_up_question_and_answer(answered, follow_up):
    mock.session_end(session=answered, reason="candidate")
    client = client_for(answered.attempt.user)
    html = client.get(reverse("mock_report", kwargs={"session_id": answered.pk})).content.decode()
    step = html[html.index('id="step-tradeoffs-h"') :]
    step = step[: step.index("</section>")]
    assert follow_up.prompt in step and FOLLOW_UP_ANSWER in step
    md = client.get(reverse("mock_report_md", kwargs={"session_id": answered.pk})).content
    md = md.decode()
    section = md[md.index("## Trade-offs") : md.index("## Transcript")]
    assert follow_up.prompt in section and FOLLOW_UP_ANSWER in section
    assert FOLLOW_UP_ANSWER in md[md.index("## Transcript") :]


def test_the_replay_steps_through_the_follow_up_answers(answered, follow_up):
    context = mock_report.replay_context(answered, step_key="tradeoffs", version=None)
    last = context["versions"][-1]
    assert last["text"] == MAIN  # the step's own answer as it stood
    assert [(f["prompt"], f["text"]) for f in last["follow_ups"]] == [
        (follow_up.prompt, FOLLOW_UP_ANSWER)
    ]
    # The draft before the submission is a version of its own, the step's answer beside it.
    drafted = [v for v in context["versions"] if v["follow_up_id"] == follow_up.id]
    assert [v["follow_ups"][0]["text"] for v in drafted][0] == "Rerun the fleet formula."
    assert all(v["text"] == MAIN for v in drafted)
    steps = {s["key"]: s["count"] for s in context["steps"]}
    assert steps["tradeoffs"] == len(context["versions"]) >= 3
    page = client_for(answered.attempt.user).get(
        reverse("mock_replay", kwargs={"session_id": answered.pk}) + "?step=tradeoffs"
    )
    assert follow_up.prompt in page.content.decode()


def test_the_session_page_says_the_follow_ups_remain(joined_session, follow_up):
    session = joined_session
    for key in ("clarify", "estimate", "architecture", "bottlenecks", "tradeoffs"):
        submit(session, key, f"An answer to {key}.")
    client = client_for(session.attempt.user)
    url = reverse("mock_session", kwargs={"session_id": session.pk})
    html = client.get(url).content.decode()
    assert "end the session when you are ready" in html  # ending is still allowed
    assert "Every step is submitted: end the session" not in html
    follow_ups = session.attempt.revision.question_spec.step("tradeoffs").follow_ups
    assert len(follow_ups) >= 2
    assert f"and {len(follow_ups)} of the question's follow-ups remain (" in html
    for number, fu in enumerate(follow_ups, 1):
        submit(session, "tradeoffs", "An answer.", fu.id)
        html = client.get(url).content.decode()
        if number == len(follow_ups) - 1:  # one left: the verb agrees
            assert "and 1 of the question's follow-ups remains (" in html
    assert "Every step is submitted: end the session when you are ready." in html
    assert "follow-ups remain" not in html
