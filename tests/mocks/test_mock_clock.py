"""A mock session's clock is the server's: a step past its budget is nudged once, and at the
end the answers are saved as they stand, submitted and graded."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from mocks import services as mock
from mocks.log import Kind, pending_follow_up
from mocks.models import MockEvent, MockSession
from practice import services as flow
from practice.models import Attempt, Grade, StepAnswer, Submission
from questions.models import Question

ARCHITECTURE_DRAFT = (
    "Clients go through an API gateway that handles auth and rate limits, then a prefix-aware "
    "router in front of ten vLLM replicas of Qwen2.5-7B-AWQ. We autoscale on the summed queue "
    "depth, vllm:num_requests_waiting, rather than on GPU utilisation"
)


@pytest.fixture
def session(content_loaded):
    user = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=user, revision=revision, mode="human")
    mock.start_alone(session=session, user=user)  # the clock runs from here
    return session


def write_draft(session, step_key, text, follow_up_id=""):
    answer = flow.answer_open(attempt=session.attempt, step_key=step_key, follow_up_id=follow_up_id)
    return flow.draft_save(answer=answer, text=text, fields={}, base_version=answer.version)


def kinds(session):
    return list(session.events.order_by("seq").values_list("kind", "step_key"))


def test_the_budget_comes_from_the_question_file(session):
    assert session.total_minutes == 45
    assert session.step_minutes["clarify"] == 5
    assert session.step_minutes["architecture"] == 12
    clock = mock.session_clock(session, now=session.started_at + timedelta(minutes=1))
    assert clock.step_key == "clarify"
    assert clock.step_left_s == 4 * 60
    assert clock.total_left_s == 44 * 60


def test_time_per_step_is_read_from_the_steps_opened(session):
    t0 = session.started_at
    mock.step_open(session=session, step_key="architecture", now=t0 + timedelta(minutes=3))
    mock.step_open(session=session, step_key="architecture", now=t0 + timedelta(minutes=4))
    clock = mock.session_clock(session, now=t0 + timedelta(minutes=10))
    assert clock.step_key == "architecture"
    assert clock.used_by_step["clarify"] == 3 * 60
    assert clock.used_by_step["architecture"] == 7 * 60
    # Opening the same step again is not a new step.
    assert kinds(session).count((Kind.STEP_OPENED, "architecture")) == 1


def test_a_step_past_its_budget_is_warned_once(session):
    t0 = session.started_at
    mock.session_tick(session, now=t0 + timedelta(minutes=4))
    assert not session.events.filter(kind=Kind.TIME_WARNING).exists()
    mock.session_tick(session, now=t0 + timedelta(minutes=5, seconds=1))
    mock.session_tick(session, now=t0 + timedelta(minutes=6))
    warnings = session.events.filter(kind=Kind.TIME_WARNING)
    assert [(w.step_key, w.payload["minutes"]) for w in warnings] == [("clarify", 5)]
    assert session.ended_at is None


def test_at_the_end_the_answers_as_they_stand_are_submitted_and_graded(session):
    t0 = session.started_at
    mock.step_open(session=session, step_key="architecture", now=t0 + timedelta(minutes=1))
    write_draft(session, "architecture", ARCHITECTURE_DRAFT)
    write_draft(session, "bottlenecks", "")  # opened, nothing written: nothing to submit
    mock.follow_up_ask(session=session, text="What does the router key on?")
    write_draft(session, "architecture", "The system prompt's hash.", "mock:ask-1")

    clock = mock.session_tick(session, now=t0 + timedelta(minutes=45))

    session.refresh_from_db()
    assert clock.ended and session.ended_at == t0 + timedelta(minutes=45)
    main = Submission.objects.get(answer__step_key="architecture", answer__follow_up_id="")
    assert main.text == ARCHITECTURE_DRAFT
    asked = Submission.objects.get(answer__follow_up_id="mock:ask-1")
    assert asked.text == "The system prompt's hash."
    assert not Submission.objects.filter(answer__step_key="bottlenecks").exists()
    assert session.attempt.__class__.objects.get(pk=session.attempt_id).status == "finished"
    ended = session.events.get(kind=Kind.ENDED)
    assert ended.payload == {"reason": "time", "submitted": 2}

    for submission in Submission.objects.all():
        flow.submission_grade(submission_id=submission.pk)
    grade = Grade.objects.get(submission=main, grader="rubric")
    verdicts = {p["id"]: p["verdict"] for p in grade.points}
    assert verdicts["arch-prefix-router"] == verdicts["arch-autoscale-queue"] == "hit"


def test_a_session_nobody_looked_at_ends_at_its_time_not_when_it_is_noticed(session):
    """With no worker sweeping and nobody on the pages, the end is noticed late (the
    candidate coming back hours later): it is still dated at the end of the 45 minutes, in
    the session, the attempt and the transcript."""
    from mocks import report as mock_report

    t0 = session.started_at
    deadline = t0 + timedelta(minutes=45)
    write_draft(session, "architecture", ARCHITECTURE_DRAFT)
    mock.session_tick(session, now=t0 + timedelta(hours=3))

    session.refresh_from_db()
    assert session.ended_at == deadline
    assert Attempt.objects.get(pk=session.attempt_id).finished_at == deadline
    assert session.events.get(kind=Kind.ENDED).at == deadline
    ended = [t for t in mock_report.transcript(session) if t["kind"] == Kind.ENDED]
    assert [t["at"] for t in ended] == ["45:00"]
    assert mock.mock_sweep(now=t0 + timedelta(hours=4)) == 0


def test_the_sweep_dates_the_end_at_the_time_too(session):
    t0 = session.started_at
    assert mock.mock_sweep(now=t0 + timedelta(minutes=45, seconds=50)) == 1
    session.refresh_from_db()
    assert session.ended_at == t0 + timedelta(minutes=45)


def test_the_end_happens_once_and_a_later_tick_changes_nothing(session):
    t0 = session.started_at
    write_draft(session, "clarify", "Peak 50 QPS.")
    assert mock.session_end(session=session, now=t0 + timedelta(minutes=45), reason="time")
    assert not mock.session_end(session=session, now=t0 + timedelta(minutes=46), reason="time")
    mock.session_tick(session, now=t0 + timedelta(minutes=50))
    assert Submission.objects.count() == 1
    assert session.events.filter(kind=Kind.ENDED).count() == 1
    # Drafts after the end are not in the log: the session is over.
    answer = StepAnswer.objects.get(step_key="clarify")
    flow.draft_save(answer=answer, text="later", fields={}, base_version=answer.version)
    assert not session.events.filter(kind=Kind.DRAFT_SAVED, payload__text="later").exists()


def test_the_sweep_ends_a_session_nobody_polls(session):
    write_draft(session, "architecture", ARCHITECTURE_DRAFT)
    assert mock.mock_sweep(now=session.started_at + timedelta(minutes=10)) == 0
    assert mock.mock_sweep(now=session.started_at + timedelta(minutes=45, seconds=1)) == 1
    assert Submission.objects.get().text == ARCHITECTURE_DRAFT


def test_the_sweep_finishes_an_end_that_was_interrupted(session):
    write_draft(session, "architecture", ARCHITECTURE_DRAFT)
    # The end was marked, then the process died before submitting anything.
    type(session).objects.filter(pk=session.pk).update(ended_at=timezone.now())
    mock.mock_sweep()
    mock.mock_sweep()
    assert Submission.objects.get().text == ARCHITECTURE_DRAFT
    assert session.events.filter(kind=Kind.ENDED).count() == 1


def test_an_interviewer_follow_up_is_answered_before_anything_else_is_submitted(session):
    answer = write_draft(session, "clarify", "Peak 50 QPS.")
    event = mock.follow_up_ask(session=session, text="Which percentile matters?")
    with pytest.raises(flow.FlowError, match="follow-up first"):
        flow.step_submit(answer=answer, text=answer.text, fields={}, base_version=answer.version)
    assert StepAnswer.objects.get(pk=answer.pk).text == "Peak 50 QPS."  # the draft is kept
    fu = mock.follow_up_answer(session=session, event=event)
    flow.step_submit(answer=fu, text="p99 TTFT.", fields={}, base_version=fu.version)
    assert pending_follow_up(session) is None
    assert session.events.filter(kind=Kind.FOLLOW_UP_ANSWERED).count() == 1
    answer.refresh_from_db()
    outcome = flow.step_submit(
        answer=answer, text=answer.text, fields={}, base_version=answer.version
    )
    assert outcome.created


def test_drafts_of_a_running_session_are_logged_with_their_text(session):
    write_draft(session, "architecture", "first")
    write_draft(session, "architecture", "first and second")
    drafts = MockEvent.objects.filter(session=session, kind=Kind.DRAFT_SAVED)
    assert [d.payload["text"] for d in drafts] == ["first", "first and second"]
    assert list(drafts.values_list("seq", flat=True)) == sorted(
        drafts.values_list("seq", flat=True)
    )


def test_a_plain_attempt_logs_nothing(content_loaded):
    user = User.objects.create(username="plain")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    flow.draft_save(answer=answer, text="x", fields={}, base_version=0)
    assert not MockEvent.objects.exists()
    assert Attempt.objects.get().status == "active"


def test_the_candidate_sees_the_time_nudge_and_the_end_on_a_reload(session):
    """Driven through the candidate's panel: the clock is the server's, so moving the stored
    start back is moving time forward, for every tab and process alike."""
    from django.test import Client
    from django.urls import reverse

    from mocks.models import MockSession

    client = Client()
    client.force_login(session.attempt.user)
    panel = reverse("mock_panel", kwargs={"session_id": session.pk}) + "?step=clarify"
    write_draft(session, "clarify", "Peak 50 QPS, p99 TTFT 300 ms.")
    html = client.get(panel).content.decode()
    assert "Time check" not in html
    # The page counts down from the server's figures: clarify's 5 minutes, the whole 45.
    seconds = [int(s) for s in re.findall(r'data-seconds-left="(\d+)"', html)]
    assert 2690 <= seconds[0] <= 2700 and 290 <= seconds[1] <= 300

    MockSession.objects.filter(pk=session.pk).update(
        started_at=session.started_at - timedelta(minutes=6)
    )
    html = client.get(panel).content.decode()
    assert "Time check: you are past the 5 minutes planned for Clarify" in html
    assert client.get(panel).content.decode().count("Time check") == 1  # logged once

    MockSession.objects.filter(pk=session.pk).update(
        started_at=session.started_at - timedelta(minutes=46)
    )
    html = client.get(panel).content.decode()
    assert "The session has ended" in html
    submitted = Submission.objects.get(answer__step_key="clarify")
    assert submitted.text == "Peak 50 QPS, p99 TTFT 300 ms."
    flow.submission_grade(submission_id=submitted.pk)
    assert Grade.objects.filter(submission=submitted, grader="rubric").exists()


@pytest.mark.django_db(transaction=True)
def test_events_written_at_once_get_distinct_numbers_and_a_warning_is_logged_once(
    content_loaded,
):
    import threading

    from django.db import connection

    user = User.objects.create(username="racer")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=user, revision=revision, mode="human")
    mock.start_alone(session=session, user=user)
    late = session.started_at + timedelta(minutes=6)  # past clarify's 5 minutes
    failures = []

    def poll(i):
        try:
            mock.nudge_send(session=session, text=f"nudge {i}")
            mock.session_tick(MockSession.objects.get(pk=session.pk), now=late)
        except Exception as exc:  # noqa: BLE001 - any crash fails the test below
            failures.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=poll, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    seqs = list(MockEvent.objects.filter(session=session).values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert MockEvent.objects.filter(session=session, kind=Kind.NUDGE).count() == 4
    assert MockEvent.objects.filter(session=session, kind=Kind.TIME_WARNING).count() == 1


def test_past_the_end_nothing_more_is_saved_even_before_anything_ends_the_session(session):
    """No poll and no sweep ran yet: the server's clock still refuses a save and a submit,
    and the end then submits the answer as it stood at the deadline."""
    answer = write_draft(session, "architecture", ARCHITECTURE_DRAFT)
    MockSession.objects.filter(pk=session.pk).update(
        started_at=timezone.now() - timedelta(minutes=46)
    )
    with pytest.raises(flow.FlowError, match="Time is up"):
        flow.draft_save(answer=answer, text="typed late", fields={}, base_version=answer.version)
    with pytest.raises(flow.FlowError, match="Time is up"):
        flow.step_submit(answer=answer, text="typed late", fields={}, base_version=answer.version)
    assert not Submission.objects.exists()
    assert mock.mock_sweep() == 1
    assert Submission.objects.get().text == ARCHITECTURE_DRAFT


def test_the_end_submits_as_it_stands_so_the_open_tab_is_not_told_of_another_tab(session):
    """The end submits each draft as it stands, without saving it again: the candidate's tab,
    still open on the version it loaded, is not one version behind (its next keystroke was
    refused as "changed in another tab"). What it saves after the end is plain practice: kept,
    and out of the session's log."""
    answer = write_draft(session, "architecture", ARCHITECTURE_DRAFT)
    tab_version = answer.version
    mock.session_end(session=session, reason="ended")
    answer.refresh_from_db()
    assert answer.version == tab_version
    assert Submission.objects.get().draft_version == tab_version
    flow.draft_save(answer=answer, text="typed late", fields={}, base_version=tab_version)
    answer.refresh_from_db()
    assert answer.text == "typed late"
    assert not session.events.filter(kind=Kind.DRAFT_SAVED, payload__text="typed late").exists()


def test_every_worker_sweeps_sessions_past_their_time(session):
    from config.worker import housekeeping

    write_draft(session, "architecture", ARCHITECTURE_DRAFT)
    MockSession.objects.filter(pk=session.pk).update(
        started_at=timezone.now() - timedelta(minutes=46)
    )
    housekeeping()
    session.refresh_from_db()
    assert session.ended_at is not None
    assert Submission.objects.get().text == ARCHITECTURE_DRAFT
