"""Nothing of the grading leaks while a mock interview runs, and the interviewer stays blind
until they score: the history, the napkin checker, the live transcript and, after the end,
the interviewer's own view of the report. Also: a second tab's polls do not move the
candidate, and an app-mode session has nobody to invite."""

import pytest
from django.urls import reverse

from mocks import services as mock
from mocks.log import Kind
from mocks.models import MockSession
from practice import services as flow
from practice.models import Submission
from tests.mocks.test_mock_live import ARCHITECTURE, live, url  # noqa: F401 (fixture)


def submit(session, step_key, text, follow_up_id=""):
    answer = flow.answer_open(attempt=session.attempt, step_key=step_key, follow_up_id=follow_up_id)
    outcome = flow.step_submit(answer=answer, text=text, fields={}, base_version=answer.version)
    flow.submission_grade(submission_id=outcome.submission.pk)
    return outcome.submission


def test_history_shows_a_running_session_without_its_scores_or_misses(live):  # noqa: F811
    session, them, _ = live
    submit(session, "architecture", ARCHITECTURE)
    page = them.get(reverse("history")).content.decode()
    assert "mock interview" in page
    rubric = session.attempt.revision.question_spec.step("architecture").rubric
    assert not any(p.says in page for p in rubric)  # no "most missed" rubric text
    mock.session_end(session=session, reason="ended early")
    # After the end, once the candidate self-checks (no model graded it), misses are listed.
    from practice.models import SelfCheck
    from practice.self_check import self_check_save

    submission = Submission.objects.get(answer__attempt=session.attempt)
    ratings = dict.fromkeys((p.id for p in rubric), SelfCheck.Rating.NOT)
    self_check_save(submission=submission, ratings=ratings, wrong_ideas={}, base_version=0)
    page = them.get(reverse("history")).content.decode()
    assert any(p.says in page for p in rubric)


def test_the_napkin_checker_answers_after_the_session(live):  # noqa: F811
    session, them, _ = live
    check = reverse("attempt_check", kwargs={"attempt_id": session.attempt_id})
    data = {"quantity": "tpot_floor", "expression": "W / (eta * bw)"}
    refused = them.post(check, data)
    assert refused.status_code == 422
    assert "checked at the end" in refused.content.decode()
    mock.session_end(session=session, reason="ended early")
    assert them.post(check, data).status_code == 200


def test_the_interviewer_sees_no_follow_up_grade_before_scoring_the_step(live):  # noqa: F811
    session, them, us = live
    mock.follow_up_ask(session=session, text="How does the router pick a replica?")
    submit(session, "architecture", "By a hash of the prompt prefix.", "mock:ask-1")
    page = us.get(url("mock_interview", session)).content.decode()
    assert "By a hash of the prompt prefix." in page
    # Offline only the matcher read it: no score, and not even that until they score.
    assert "(graded" not in page and "self-check)" not in page
    submit(session, "architecture", ARCHITECTURE)
    rubric = session.attempt.revision.question_spec.step("architecture").rubric
    mock.step_score_blind(
        session=session, step_key="architecture", verdicts={p.id: "hit" for p in rubric}
    )
    page = us.get(url("mock_interview", session)).content.decode()
    # Offline, and asked in the session: nowhere to self-check it, and the page says so.
    assert "(not scored: no model graded it, and a question asked in the session has no " in page


def test_after_the_end_the_interviewer_reads_the_graders_only_for_steps_they_scored(live):  # noqa: F811
    session, them, us = live
    submit(session, "clarify", "We design for the 50 QPS peak, p99 TTFT under 300 ms.")
    submit(session, "architecture", ARCHITECTURE)
    rubric = session.attempt.revision.question_spec.step("clarify").rubric
    mock.step_score_blind(
        session=session, step_key="clarify", verdicts={p.id: "hit" for p in rubric}
    )
    mock.session_end(session=session, reason="ended early")
    ours = us.get(url("mock_report", session)).content.decode()
    assert "You have not scored this step" in ours  # architecture
    assert ours.count("mock-compare") == 4  # clarify and the three steps nobody submitted
    md = us.get(url("mock_report_md", session)).content.decode()
    assert "Architecture: not scored by you yet" in md
    # The candidate reads every grader's verdicts, and the interviewer can still score blind.
    theirs = them.get(url("mock_report", session)).content.decode()
    assert "You have not scored this step" not in theirs and theirs.count("mock-compare") == 5
    arch = session.attempt.revision.question_spec.step("architecture").rubric
    mock.step_score_blind(
        session=session, step_key="architecture", verdicts={p.id: "miss" for p in arch}
    )
    assert "You have not scored" not in us.get(url("mock_report", session)).content.decode()


def test_a_second_tab_polling_another_step_does_not_move_the_candidate(live):  # noqa: F811
    session, them, _ = live
    them.get(url("mock_panel", session) + "?step=architecture")  # a step page loads
    last = session.events.order_by("-seq").first().seq
    them.get(url("mock_panel", session) + f"?step=clarify&after={last}")  # an old tab polls
    opened = list(session.events.filter(kind=Kind.STEP_OPENED).values_list("step_key", flat=True))
    assert opened == ["clarify", "architecture"]
    assert mock.current_step(session) == "architecture"


def test_an_app_session_has_nobody_to_invite(content_loaded):
    from django.contrib.auth.models import User

    from questions.models import Question

    user = User.objects.create(username="solo")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=user, revision=revision, mode=MockSession.Mode.APP)
    with pytest.raises(mock.MockError, match="nobody to invite"):
        mock.invite_issue(session=session)
    assert not Submission.objects.exists()
