"""What the pages say about grading matches what happens to the answers.

- An interviewer's own question on clarify, answered in the panel and read offline by the
  keyword matcher alone, was reported "not scored yet: awaiting the candidate's self-check",
  though there is nowhere to self-check it once the panel is gone; and it carried an SLO-card
  grade of 0 although the answer has no card.
- After the end the step page's panel said the answers "are being graded" while the report
  said they awaited the candidate's self-check.
- In app mode the session page said the app may probe "a written step", but it probes only
  the steps `mocks.services.FREE_TEXT_STEPS` names.
"""

from html import unescape

import pytest
from django.urls import reverse

from mocks import services as mock
from mocks.report import NO_SELF_CHECK
from practice import services as flow
from practice.models import Grade, Submission
from practice.step_page import step_url
from questions import selectors
from tests.mocks.test_mock_live import ARCHITECTURE, live, url  # noqa: F401 (fixture)
from tests.mocks.test_mock_privacy import submit

ASKED = "What do clients send as max_tokens today?"
REPLY = "Most clients send max_tokens=4096 by default; we'd cap at 2048 for standard tier."


def test_an_interviewers_question_read_offline_promises_no_self_check(live):  # noqa: F811
    session, them, us = live
    mock.follow_up_ask(session=session, text=ASKED)
    reply = submit(session, "clarify", REPLY, "mock:ask-1")
    assert not Grade.objects.filter(submission=reply, grader="slo").exists()
    mock.session_end(session=session, reason="ended early")

    for client in (them, us):
        page = unescape(client.get(url("mock_report", session)).content.decode())
        line = next(row for row in page.split("\n") if REPLY in row and "Answer (" in row)
        assert NO_SELF_CHECK in line and "awaiting" not in line
        md = client.get(url("mock_report_md", session)).content.decode()
        assert f"({NO_SELF_CHECK})" in md
        assert "Answer (Clarify the requirements)" in md
        assert "awaiting the candidate's self-check)" not in md


def test_after_the_end_the_panel_says_the_step_waits_for_the_self_check(live):  # noqa: F811
    session, them, _ = live
    submit(session, "architecture", ARCHITECTURE)  # read by the matcher alone: no model here
    mock.session_end(session=session, reason="ended early")
    panel = them.get(url("mock_panel", session) + "?step=architecture").content.decode()
    assert "being graded" not in panel
    link = step_url(session.attempt, "architecture") + "#self-check"
    assert f'<a href="{link}">rate it in your self-check</a>' in panel


def test_after_the_end_the_panel_says_a_queued_answer_is_being_graded(live):  # noqa: F811
    session, them, _ = live
    answer = flow.answer_open(attempt=session.attempt, step_key="bottlenecks")
    flow.draft_save(answer=answer, text="The KV cache fills.", fields={}, base_version=0)
    mock.session_end(session=session, reason="ended early")  # submits it; no worker runs here
    assert Submission.objects.get(answer=answer).grade_status == "queued"
    panel = them.get(url("mock_panel", session) + "?step=bottlenecks").content.decode()
    assert "This step's answer is being graded." in panel
    assert "self-check" not in panel


@pytest.mark.django_db
def test_the_app_mode_page_names_the_steps_the_app_probes(content_loaded):
    from django.contrib.auth.models import User
    from django.test import Client

    from questions.models import Question

    user = User.objects.create(username="alone")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=user, revision=revision, mode="app")
    client = Client()
    client.force_login(user)
    page = client.get(reverse("mock_session", kwargs={"session_id": session.pk})).content.decode()
    note = page.split('id="app-probes"')[1].split("</p>")[0]
    assert "a written step" not in note
    probed = [selectors.STEP_TITLES[k] for k in mock.FREE_TEXT_STEPS]
    assert [f"<strong>{t}</strong>" in note for t in probed] == [True] * len(probed)
    unprobed = set(selectors.STEP_TITLES.values()) - set(probed)
    assert not any(t in note for t in unprobed)
