"""The grading task as the worker runs it: whatever the model server sends, a grade is stored.

Submissions go through the practice flow (`step_submit` enqueues the task on commit) and a
real django-tasks database worker runs the queue in this process, against FakeChatServer (a
real HTTP server) scripted to misbehave. Each case must end, within one retry cycle of the
client, in a stored offline grade labelled with the reason, the submission "offline" with a
later re-grade queued, and no task row left RUNNING.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from grading import grade_offline
from grading.fake_server import FakeChatServer, ScriptedReply, error_reply, grade_content
from practice import feedback
from practice import services as flow
from practice.models import Grade, Submission
from questions.models import Question

ANSWER = (
    "Clients go through an API gateway that handles auth and rate limits, then a prefix-aware "
    "router in front of ten vLLM replicas. We autoscale on the summed queue depth, "
    "vllm:num_requests_waiting, rather than on GPU utilisation."
)
GENERIC = "I would use some servers for this system here. It should work fine."
TASK = "practice.services.grade_submission"


@pytest.fixture
def model_server(settings):
    """A fake model server the app is configured to grade with: one retry, 1 s timeout."""
    with FakeChatServer() as server:
        settings.GRADER = {
            **settings.GRADER,
            "GRADER_BASE_URL": server.base_url,
            "GRADER_MAX_RETRIES": "1",
            "GRADER_TIMEOUT_S": "1",
        }
        yield server


def submit(text: str, step_key: str = "architecture") -> Submission:
    """Submit an answer through the flow; the grading task is enqueued on commit."""
    user = User.objects.create_user(f"cand-{User.objects.count()}", password="Passphrase-1")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key=step_key)
    outcome = flow.step_submit(answer=answer, text=text, fields={}, base_version=answer.version)
    return outcome.submission


def run_worker() -> None:
    """Run every task that is due, as `manage.py db_worker --batch` does, then return."""
    Worker(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="test-worker",
        excluded_queue_names=[],
    ).run()


def tasks_for(submission: Submission) -> list[DBTaskResult]:
    return [
        t
        for t in DBTaskResult.objects.filter(task_path=TASK).order_by("enqueued_at")
        if t.args_kwargs.get("args") == [submission.pk]
    ]


MALFORMED = {
    # A proxy or a dying server cuts the body off: the client retries once, then gives up.
    "cut-off body": (
        lambda request: ScriptedReply(content=grade_content([]), cut_at=60),
        "reply cut off",
        2,
    ),
    "non-JSON body": (
        lambda request: ScriptedReply(raw_body="<html><body>502 Bad Gateway</body></html>"),
        "not JSON",
        1,
    ),
    "JSON of another shape": (
        lambda request: ScriptedReply(raw_body='{"choices": "none today"}'),
        "no choices",
        1,
    ),
    "output not in the schema": (
        lambda request: ScriptedReply(content='{"verdicts": "all good"}'),
        "no list of points",
        1,
    ),
    "HTTP 500": (lambda request: error_reply(500, "engine crashed"), "HTTP 500", 2),
    "hang past the timeout": (
        lambda request: ScriptedReply(content=grade_content([]), delay_s=3),
        "timed out",
        2,
    ),
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_broken_reply_ends_in_a_labelled_offline_grade(content_loaded, model_server, case):
    responder, reason_part, requests_sent = MALFORMED[case]
    model_server.responder = responder
    submission = submit(ANSWER)

    run_worker()

    submission.refresh_from_db()
    assert submission.grade_status == Submission.GradeStatus.OFFLINE
    [grade] = Grade.objects.filter(submission=submission)
    assert grade.grader == "rubric" and grade.score > 0
    assert reason_part in grade.fallback_reason
    # Retries capped: the client's one retry at most, and the next try is a later task. The
    # cap is what is held: on a loaded machine a hang's retry is not always sent.
    assert 1 <= len(model_server.requests) <= requests_sent
    first, *later = tasks_for(submission)
    assert first.status == "SUCCESSFUL" and first.return_value == "offline"
    assert [t.status for t in later] == ["READY"]
    assert not DBTaskResult.objects.filter(status="RUNNING").exists()


@pytest.mark.django_db(transaction=True)
def test_a_lenient_model_cannot_pass_a_generic_answer(content_loaded, model_server):
    def every_point_hit(request):
        ids = request["response_format"]["json_schema"]["schema"]["properties"]["points"]
        ids = ids["items"]["properties"]["id"]["enum"]
        quote = "I would use some servers for this system here."
        return ScriptedReply(
            content=grade_content(
                [{"id": i, "evidence": quote, "verdict": "hit", "comment": "ok"} for i in ids]
            )
        )

    model_server.responder = every_point_hit
    submission = submit(GENERIC)
    run_worker()
    submission.refresh_from_db()
    assert submission.grade_status == Submission.GradeStatus.DONE
    assert Grade.objects.get(submission=submission, grader="llm").score == 0.0


@pytest.mark.django_db(transaction=True)
def test_a_large_disagreement_is_stored_for_review_and_shown_with_both_scores(
    content_loaded, model_server
):
    # The model finds the router and the queue in words the offline phrases cannot see.
    router = (
        "Conversations that open with the same instructions are steered to the GPU box that "
        "already holds that opening in its KV memory."
    )
    queue = "We grow the fleet when the line of unanswered calls gets long, not on GPU load."
    engine = "Prefill of the shared opening happens once per GPU and is then reused from memory."
    text = f"{router} {queue} {engine}"
    evidence = {
        "arch-prefix-router": router,
        "arch-autoscale-queue": queue,
        "arch-prefix-caching": engine,
    }

    def finds_paraphrases(request):
        ids = request["response_format"]["json_schema"]["schema"]["properties"]["points"]
        ids = ids["items"]["properties"]["id"]["enum"]
        return ScriptedReply(
            content=grade_content(
                [
                    {
                        "id": i,
                        "evidence": evidence.get(i, ""),
                        "verdict": "hit" if i in evidence else "miss",
                        "comment": "c",
                    }
                    for i in ids
                ]
            )
        )

    model_server.responder = finds_paraphrases
    submission = submit(text)
    run_worker()
    submission.refresh_from_db()
    grades = {g.grader: g for g in Grade.objects.filter(submission=submission)}
    assert grades["llm"].score == pytest.approx(6 / 11, abs=1e-3)
    assert grades["rubric"].score == 0.0
    assert submission.needs_review
    assert "the model scored 55%" in submission.review_reason
    assert "offline rubric grader 0%" in submission.review_reason

    context = feedback.feedback_context(
        attempt=submission.answer.attempt, answer=submission.answer, submission=submission
    )
    assert context["disagreement"] == submission.review_reason
    assert context["grades"]["llm"].score > context["grades"]["rubric"].score


@pytest.mark.django_db(transaction=True)
def test_graders_that_agree_leave_nothing_to_review(content_loaded, model_server):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    offline = grade_offline(revision.question_spec.step("architecture"), ANSWER)

    def agrees_with_the_rubric(request):
        return ScriptedReply(content=grade_content([p.to_dict() for p in offline.points]))

    model_server.responder = agrees_with_the_rubric
    submission = submit(ANSWER)
    run_worker()
    submission.refresh_from_db()
    assert submission.grade_status == Submission.GradeStatus.DONE
    assert Grade.objects.get(submission=submission, grader="llm").score == offline.score
    assert not submission.review_reason and not submission.needs_review


@pytest.mark.django_db
def test_malformed_grader_settings_end_offline_with_the_reason_and_no_retry(
    content_loaded, settings, django_capture_on_commit_callbacks
):
    settings.GRADER = {
        **settings.GRADER,
        "GRADER_BASE_URL": "http://127.0.0.1:9/v1",
        "GRADER_TIMEOUT_S": "soon",
    }
    with django_capture_on_commit_callbacks(execute=False):
        submission = submit(ANSWER)
    result = flow.submission_grade(submission_id=submission.pk)
    assert result.grade_status == Submission.GradeStatus.OFFLINE
    grade = Grade.objects.get(submission=submission)
    assert "GRADER_TIMEOUT_S" in grade.fallback_reason
    assert not tasks_for(submission)  # a retry cannot fix the settings


def _every_point_hit_with_nul_characters(request):
    ids = request["response_format"]["json_schema"]["schema"]["properties"]["points"]
    ids = ids["items"]["properties"]["id"]["enum"]
    quote = "a prefix-aware router in front of ten vLLM replicas"
    points = [
        {"id": i, "evidence": quote, "verdict": "hit", "comment": "covered\u0000 here"} for i in ids
    ]
    # The JSON escapes the comments' NUL as \u0000; the feedback holds a raw one, which the
    # reply's tolerant parse (control characters inside strings) reads as well.
    content = grade_content(points, feedback="FEEDBACK")
    return ScriptedReply(content=content.replace("FEEDBACK", "Good\x00 answer"))


@pytest.mark.django_db(transaction=True)
def test_a_reply_holding_nul_characters_is_stored_as_the_model_grade(content_loaded, model_server):
    # PostgreSQL refuses NUL in text and JSON columns: the task failed on every retry there.
    model_server.responder = _every_point_hit_with_nul_characters
    submission = submit(ANSWER)

    run_worker()

    submission.refresh_from_db()
    assert submission.grade_status == Submission.GradeStatus.DONE
    grade = Grade.objects.get(submission=submission, grader="llm")
    assert grade.score > 0
    assert grade.feedback == "Good answer" and "\x00" not in grade.raw_response
    comments = {point["comment"] for point in grade.points}
    assert "covered here" in comments and not any("\x00" in c for c in comments)
    [task] = tasks_for(submission)
    assert task.status == "SUCCESSFUL"
