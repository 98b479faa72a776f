"""Losing nothing: the worker or the model stops mid-grade; the answer stays, the grade completes.

Everything here is real except the model: a `manage.py db_worker` subprocess on the test
database, `manage.py requeue_grading`, and the loopback OpenAI-compatible server from
grading.fake_server standing in for vLLM. Submissions go through `practice.services`, so
the grading task is enqueued on commit exactly as the views do it.

- The worker is SIGKILLed while the model is answering: the submission and its text survive,
  no grade is duplicated, and after `requeue_grading` a new worker finishes it with exactly
  one grade per grader.
- The model fails mid-grade (HTTP 503, or its process dies with the request in flight): the
  submission ends `offline` with the rubric grade and the reason stored, a re-grade is queued
  with the configured backoff, and once the model is back the worker re-grades it to `done`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django_tasks_db.models import DBTaskResult

from grading.fake_server import (
    FakeChatServer,
    ScriptedReply,
    _handler_for,
    answer_message,
    error_reply,
    grade_content,
    response_ids,
)
from practice.models import Grade, StepAnswer, Submission
from practice.services import answer_open, attempt_start, step_submit
from questions.models import Question
from questions.services import content_load

# Starts processes (servers, commands) that reach DATABASE_URL's database: CI runs it on each.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

ROOT = Path(__file__).resolve().parents[2]
SLUG = "chat-api-50qps"
STEP = "architecture"
ANSWER = (
    "Clients go through an API gateway that handles auth and rate limits, then a prefix-aware "
    "router in front of ten vLLM replicas of Qwen2.5-7B-AWQ. We turn on prefix caching so the "
    "shared system prompt is prefilled once per replica. We autoscale on the summed queue "
    "depth, vllm:num_requests_waiting, rather than on GPU utilisation."
)
# What the scripted model quotes for the point it awards: verbatim from ANSWER.
EVIDENCE = "a prefix-aware router in front of ten vLLM replicas"
TASK_PATH = "practice.services.grade_submission"


# --- the fake model --------------------------------------------------------------------------


def valid_grade(request: dict) -> ScriptedReply:
    """A well-formed grade: the first rubric point hit with a verbatim quote, the rest missed."""
    assert EVIDENCE in answer_message(request), "the answer did not reach the model"
    ids = response_ids(request)
    verdicts = [{"id": ids[0], "verdict": "hit", "evidence": EVIDENCE, "comment": "Good."}]
    verdicts += [
        {"id": other, "verdict": "miss", "evidence": "", "comment": "Not covered."}
        for other in ids[1:]
    ]
    return ScriptedReply(content=grade_content(verdicts))


class Model(FakeChatServer):
    """The fake server with a switchable behaviour, restartable on the same port.

    `behaviour` is the responder in force; `chat_times` the monotonic time of each chat
    request. Started again after `stop()`, it binds the port it had, as a restarted vLLM would.
    """

    def __init__(self, behaviour: Callable[[dict], ScriptedReply]) -> None:
        super().__init__(self._respond)
        self.behaviour = behaviour
        self.chat_times: list[float] = []
        self.port = 0

    def _respond(self, request: dict) -> ScriptedReply:
        self.chat_times.append(time.monotonic())
        return self.behaviour(request)

    def start(self) -> Model:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler_for(self))
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, daemon=True, kwargs={"poll_interval": 0.05}
        )
        self._thread.start()
        return self


@pytest.fixture
def model() -> Iterator[Model]:
    with Model(valid_grade) as server:
        yield server


# --- the worker ------------------------------------------------------------------------------


def database_url() -> str:
    """The test database as a DATABASE_URL, as the browser tests' `task_worker` builds it."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    return f"postgres://{db['USER']}@{host}:{port}/{db['NAME']}"


class Workers:
    """Starts app subprocesses on the test database; stops any still running at teardown."""

    def __init__(self, model: Model, tmp_path: Path) -> None:
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GRADER_")}
        self.env.pop("DJANGO_ENV", None)
        self.env.update(
            DATABASE_URL=database_url(),
            DJANGO_SETTINGS_MODULE="config.settings",
            PYTHONUNBUFFERED="1",
            GRADER_BASE_URL=model.base_url,
            GRADER_TIMEOUT_S="30",
            GRADER_MAX_RETRIES="0",
            # A failed call marks the model down for this long; shorter than the backoff so
            # each re-grade asks the model again.
            GRADER_HEALTH_TTL_S="0.3",
            GRADING_RETRY_BACKOFF_S="1,1,1,1,1,1",
        )
        self.logs = tmp_path
        self.procs: list[subprocess.Popen] = []

    def start(self, *args: str) -> subprocess.Popen:
        log = (self.logs / f"worker-{len(self.procs)}.log").open("w")
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "db_worker", "--queue-name", "*", "--interval", "0.2",
             "--no-reload", "--no-startup-delay", *args],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        self.procs.append(proc)
        return proc

    def manage(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        assert proc.returncode == 0, f"manage.py {args}: {proc.stdout}\n{proc.stderr[-3000:]}"
        return proc

    def log_tail(self) -> str:
        parts = [f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.logs.glob("*.log"))]
        return "\n".join(parts)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.fixture
def workers(model, tmp_path) -> Iterator[Workers]:
    # Set up after the database, so torn down before it is flushed: no worker outlives a test.
    pool = Workers(model, tmp_path)
    yield pool
    pool.stop_all()


@pytest.fixture
def answer(db) -> StepAnswer:
    """An open `architecture` draft of a fresh attempt at the shipped chat question."""
    cache.clear()  # the per-user submission rate limit lives in the cache
    report = content_load(root=Path(settings.CONTENT_DIR))
    assert not report.problems, report.problems
    user = User.objects.create_user("candidate", password="cand-Passphrase-1")
    revision = Question.objects.get(slug=SLUG).current_revision
    return answer_open(attempt=attempt_start(user=user, revision=revision), step_key=STEP)


def submit(answer: StepAnswer) -> Submission:
    outcome = step_submit(answer=answer, text=ANSWER, fields={}, base_version=answer.version)
    assert outcome.created
    return outcome.submission


def wait_for(check: Callable[[], object], what: str, workers: Workers, timeout: float = 20):
    """Poll `check` until it returns something truthy; fail with the worker logs otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}\n{workers.log_tail()}")


def status_of(submission: Submission) -> str:
    return Submission.objects.values_list("grade_status", flat=True).get(pk=submission.pk)


def grades_by_grader(submission: Submission) -> dict[str, int]:
    counts: dict[str, int] = {}
    for grader in Grade.objects.filter(submission=submission).values_list("grader", flat=True):
        counts[grader] = counts.get(grader, 0) + 1
    return counts


def tasks_for(submission: Submission) -> list[DBTaskResult]:
    return [
        t
        for t in DBTaskResult.objects.filter(task_path=TASK_PATH).order_by("enqueued_at")
        if t.args_kwargs.get("args") == [submission.pk]
    ]


def assert_answer_intact(submission: Submission, answer: StepAnswer) -> None:
    stored = Submission.objects.get(pk=submission.pk)
    assert stored.text == ANSWER
    assert StepAnswer.objects.get(pk=answer.pk).text == ANSWER
    assert Submission.objects.filter(answer=answer).count() == 1


def assert_model_grade(submission: Submission) -> None:
    llm = Grade.objects.get(submission=submission, grader="llm")
    hits = [p for p in llm.points if p["verdict"] == "hit"]
    assert [p["evidence"] for p in hits] == [EVIDENCE], llm.points
    assert 0 < llm.score < 1
    assert llm.fallback_reason == ""
    rubric = Grade.objects.get(submission=submission, grader="rubric")
    assert rubric.fallback_reason == "", "a completed model grade leaves no fallback behind"


# --- the tests -------------------------------------------------------------------------------


def test_worker_killed_mid_grade_loses_nothing_and_the_grade_completes_once(answer, model, workers):
    # The model takes 5 s to answer: long enough to kill the worker while it waits.
    model.behaviour = lambda request: ScriptedReply(
        content=valid_grade(request).content, delay_s=5.0
    )
    first = workers.start()
    submission = submit(answer)
    assert status_of(submission) == "queued"

    wait_for(
        lambda: status_of(submission) == "grading" and model.chat_times,
        "the worker to be waiting on the model",
        workers,
    )
    first.kill()  # SIGKILL: no handler runs, nothing is cleaned up
    assert first.wait(timeout=10) == -9

    # Everything the candidate wrote is still there, and nothing was graded twice.
    assert_answer_intact(submission, answer)
    assert status_of(submission) == "grading"  # orphaned, as after a real crash
    assert grades_by_grader(submission) == {"rubric": 1}  # stored before the model call
    [orphan] = tasks_for(submission)
    assert orphan.status == "RUNNING"  # the dead worker's claim is never released

    # The sweep queues it again; the model is quick now; a batch worker drains the queue.
    model.behaviour = valid_grade
    swept = workers.manage("requeue_grading", "--older-than", "0")
    assert "re-queued 1 submission(s)" in swept.stdout
    assert status_of(submission) == "queued"
    second = workers.start("--batch")
    assert second.wait(timeout=45) == 0, workers.log_tail()

    stored = Submission.objects.get(pk=submission.pk)
    assert stored.grade_status == "done", workers.log_tail()
    assert stored.grade_attempts == 2
    assert grades_by_grader(submission) == {"rubric": 1, "llm": 1}
    assert_model_grade(submission)
    assert_answer_intact(submission, answer)
    assert len(model.chat_times) == 2  # the killed call and the re-grade, nothing more
    rerun = tasks_for(submission)[-1]
    assert (rerun.status, rerun.return_value) == ("SUCCESSFUL", "done")


def test_model_503_mid_grade_gives_an_offline_grade_then_a_regrade_once_back(
    answer, model, workers
):
    # The model server is up (its /v1/models answers, so the health check passes) but fails
    # the grading request itself, as vLLM does while its engine is dead or overloaded.
    model.behaviour = lambda request: ScriptedReply(
        status=503, error_body=error_reply(503).error_body, delay_s=0.3
    )
    workers.start()
    submission = submit(answer)

    wait_for(lambda: status_of(submission) == "offline", "the offline grade", workers)
    rubric = Grade.objects.get(submission=submission, grader="rubric")
    assert "503" in rubric.fallback_reason, rubric.fallback_reason
    assert not Grade.objects.filter(submission=submission, grader="llm").exists()
    assert_answer_intact(submission, answer)
    assert_regrade_queued_with_backoff(submission, workers)

    # Still down on the re-grade: asked again no sooner than the backoff, still offline.
    wait_for(lambda: len(model.chat_times) >= 2, "a re-grade reaching the model", workers)
    assert model.chat_times[1] - model.chat_times[0] >= 1.0
    wait_for(
        lambda: (
            Submission.objects.get(pk=submission.pk).grade_attempts >= 2
            and status_of(submission) == "offline"
        ),
        "the second offline grade",
        workers,
    )
    assert grades_by_grader(submission) == {"rubric": 1}

    model.behaviour = valid_grade  # the model is back
    wait_for(lambda: status_of(submission) == "done", "the re-grade by the model", workers)
    assert grades_by_grader(submission) == {"rubric": 1, "llm": 1}
    assert_model_grade(submission)
    assert_answer_intact(submission, answer)
    assert not [t for t in tasks_for(submission) if t.status == "FAILED"]


def test_model_process_dies_mid_grade_then_comes_back_on_its_port(answer, model, workers):
    in_flight, died = threading.Event(), threading.Event()

    def dying(request: dict) -> ScriptedReply:
        in_flight.set()
        died.wait(timeout=15)
        # The handler thread ends without a response: the client sees the connection drop.
        raise ConnectionAbortedError("model process died mid-request (scripted)")

    model.behaviour = dying
    workers.start()
    submission = submit(answer)
    wait_for(
        lambda: in_flight.is_set() and status_of(submission) == "grading",
        "the grading request in flight",
        workers,
    )
    model.stop()  # nothing listens on its port any more
    died.set()  # and the request in flight is cut off

    wait_for(lambda: status_of(submission) == "offline", "the offline grade", workers)
    rubric = Grade.objects.get(submission=submission, grader="rubric")
    assert "unreachable" in rubric.fallback_reason, rubric.fallback_reason
    assert not Grade.objects.filter(submission=submission, grader="llm").exists()
    assert_answer_intact(submission, answer)
    assert_regrade_queued_with_backoff(submission, workers)

    model.behaviour = valid_grade
    model.start()  # back on the same port, as a restarted vLLM would be
    wait_for(lambda: status_of(submission) == "done", "the re-grade by the model", workers)
    assert grades_by_grader(submission) == {"rubric": 1, "llm": 1}
    assert_model_grade(submission)
    assert_answer_intact(submission, answer)
    assert not [t for t in tasks_for(submission) if t.status == "FAILED"]


def assert_regrade_queued_with_backoff(submission: Submission, workers: Workers) -> None:
    """The offline grading queued one more task, to run no sooner than the first backoff.

    The submission reads "offline" as soon as its grades are stored; the task finishes a
    moment later, once the graded hooks have run (the app interviewer, concept cards)."""
    wait_for(
        lambda: tasks_for(submission)[0].status != "RUNNING", "the first task to finish", workers
    )
    tasks = tasks_for(submission)
    assert len(tasks) >= 2, [(t.status, t.run_after) for t in tasks]
    first, retry = tasks[0], tasks[1]
    assert first.status == "SUCCESSFUL" and first.return_value == "offline"
    assert retry.run_after - retry.enqueued_at >= timedelta(seconds=0.9)


# --- under `make run`'s supervisor ---------------------------------------------------------


def children(pid: int) -> dict[int, str]:
    out = subprocess.run(
        ["ps", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True
    ).stdout
    return {int(line.split(None, 1)[0]): line.split(None, 1)[1] for line in out.splitlines()}


def worker_pids(serve: subprocess.Popen) -> list[int]:
    return [pid for pid, args in children(serve.pid).items() if "config.worker" in args]


def healthy(port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
def serve(workers, tmp_path) -> Iterator[tuple[subprocess.Popen, int]]:
    """`python -m config.serve` (web server and worker) on the test database."""
    import signal
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "config.serve"],
        cwd=ROOT, env={**workers.env, "PORT": str(port), "WEB_CONCURRENCY": "1",
                       "WORKER_INTERVAL_S": "0.2"},
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    log.close()
    try:
        wait_for(lambda: healthy(port) and worker_pids(proc), "the site to serve", workers, 60)
        yield proc, port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_worker_killed_mid_grade_is_replaced_and_the_grade_completes_once(
    answer, model, workers, serve
):
    proc, port = serve
    model.behaviour = lambda request: ScriptedReply(
        content=valid_grade(request).content, delay_s=5.0
    )
    submission = submit(answer)
    wait_for(lambda: model.chat_times, "the worker to be waiting on the model", workers)
    [killed] = worker_pids(proc)
    os.kill(killed, 9)
    model.behaviour = valid_grade

    assert healthy(port), "the web server went down with the worker"
    replacement = wait_for(
        lambda: [p for p in worker_pids(proc) if p != killed],
        "a new worker",
        workers,
        timeout=10,
    )
    assert replacement
    # The submission reads "done" a moment before its task row is marked finished.
    wait_for(
        lambda: (
            status_of(submission) == "done"
            and "RUNNING" not in [t.status for t in tasks_for(submission)]
        ),
        "the grade and its task",
        workers,
        timeout=30,
    )
    assert healthy(port)
    assert grades_by_grader(submission) == {"rubric": 1, "llm": 1}
    assert_model_grade(submission)
    assert_answer_intact(submission, answer)
    assert [t.status for t in tasks_for(submission)] == ["FAILED", "SUCCESSFUL"]


def test_a_killed_web_server_is_restarted_and_the_worker_keeps_running(workers, serve):
    proc, port = serve
    [worker] = worker_pids(proc)
    [web] = [pid for pid, args in children(proc.pid).items() if "gunicorn" in args]
    os.kill(web, 9)
    wait_for(lambda: healthy(port) and web not in children(proc.pid), "the site back", workers, 30)
    assert worker_pids(proc) == [worker], "the worker was restarted with the web server"


# --- several processes on PostgreSQL -------------------------------------------------------

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="several machines share PostgreSQL, not SQLite"
)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class App:
    """Web servers and workers started as in production, stopped at teardown."""

    def __init__(self, workers: Workers, tmp_path: Path, **env: str) -> None:
        self.env = {**workers.env, "WEB_CONCURRENCY": "1", "WORKER_INTERVAL_S": "0.2", **env}
        self.logs = tmp_path
        self.procs: list[subprocess.Popen] = []

    def _start(self, name: str, command: list[str], **env: str) -> subprocess.Popen:
        log = (self.logs / f"{name}-{len(self.procs)}.log").open("w")
        proc = subprocess.Popen(
            command, cwd=ROOT, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        log.close()
        self.procs.append(proc)
        return proc

    def web(self) -> int:
        from config.serve import web_command

        port = free_port()
        self._start("web", web_command(), PORT=str(port))
        return port

    def worker(self) -> subprocess.Popen:
        from config.serve import worker_command

        return self._start("worker", worker_command())

    def stop(self) -> None:
        import signal

        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture
def app(workers, tmp_path) -> Iterator[App]:
    started = App(workers, tmp_path, WORKER_RECLAIM_EVERY_S="1", WORKER_BACKOFF_MAX_S="4")
    yield started
    started.stop()


def more_answers(answer: StepAnswer, count: int) -> list[StepAnswer]:
    """`count` open drafts of the same step, each in a new attempt of its own candidate."""
    out = []
    for number in range(count):
        user = User.objects.create_user(f"candidate{number}", password="cand-Passphrase-1")
        attempt = attempt_start(user=user, revision=answer.attempt.revision)
        out.append(answer_open(attempt=attempt, step_key=STEP))
    return out


@postgresql_only
def test_two_web_servers_and_two_workers_grade_every_submission_once_when_a_worker_dies(
    answer, model, workers, app
):
    model.behaviour = lambda request: ScriptedReply(
        content=valid_grade(request).content, delay_s=1.5
    )
    ports = [app.web(), app.web()]
    doomed, survivor = app.worker(), app.worker()
    wait_for(lambda: all(healthy(p) for p in ports), "both web servers", workers, 60)
    submissions = [submit(a) for a in [answer, *more_answers(answer, 5)]]
    # Two calls in flight: one per worker (each runs one task at a time), so both are busy.
    wait_for(lambda: len(model.chat_times) >= 2, "both workers waiting on the model", workers)
    doomed.kill()
    doomed.wait()  # reaped, as its supervisor would: a zombie's pid still answers
    assert all(healthy(p) for p in ports)

    wait_for(
        lambda: all(
            status_of(s) == "done" and "RUNNING" not in [t.status for t in tasks_for(s)]
            for s in submissions
        ),
        "every grade and its task",
        workers,
        90,
    )
    assert survivor.poll() is None
    for submission in submissions:
        assert grades_by_grader(submission) == {"rubric": 1, "llm": 1}
        assert [t.status for t in tasks_for(submission)].count("SUCCESSFUL") == 1
    # One model call per submission, and one more for the grade the dead worker was waiting on.
    assert len(model.chat_times) == len(submissions) + 1


class Outage:
    """A TCP proxy in front of PostgreSQL that the test can cut and restore."""

    def __init__(self, target: tuple[str, int]) -> None:
        import socket

        self.target = target
        self.open = True
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            self.pairs.append((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source, sink) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.close()
            except OSError:
                pass

    def cut(self) -> None:
        """Refuse new connections and sever every open one, as a failed database host does."""
        import socket

        self.open = False
        for pair in self.pairs:
            for end in pair:
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.pairs.clear()

    def restore(self) -> None:
        self.open = True

    def close(self) -> None:
        self.cut()
        self.listener.close()


@postgresql_only
def test_after_the_database_is_unreachable_for_20_s_the_site_serves_and_grades_again(
    answer, model, workers, tmp_path
):
    db = connection.settings_dict
    outage = Outage((db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)))
    url = f"postgres://{db['USER']}@127.0.0.1:{outage.port}/{db['NAME']}"
    app = App(workers, tmp_path, DATABASE_URL=url, WORKER_BACKOFF_MAX_S="4")
    try:
        port = app.web()
        worker = app.worker()
        wait_for(lambda: healthy(port), "the site to serve", workers, 60)
        before = submit(answer)
        wait_for(lambda: status_of(before) == "done", "a grade before the outage", workers, 30)

        outage.cut()
        time.sleep(2)
        assert not healthy(port), "the site answered without its database"
        # Written while the app cannot reach the database (this test's own connection can).
        during = submit(more_answers(answer, 1)[0])
        time.sleep(18)
        outage.restore()

        wait_for(lambda: healthy(port), "the site to serve again", workers, 30)
        wait_for(lambda: status_of(during) == "done", "the grade after", workers, 60)
        assert worker.poll() is None, "the worker died on the outage"
        assert all(proc.poll() is None for proc in app.procs), "a process was restarted"
        assert grades_by_grader(during) == {"rubric": 1, "llm": 1}
    finally:
        app.stop()
        outage.close()


def test_a_submission_that_keeps_crashing_the_task_stops_being_requeued(answer):
    """A bug that crashes grading on one submission must not have the sweeper re-queue it for
    ever: once its tries are used up it is marked offline and left alone."""
    from practice.services import grading_requeue_stale, grading_tries_cap

    submission = submit(answer)
    Submission.objects.filter(pk=submission.pk).update(
        grade_status=Submission.GradeStatus.GRADING, grade_attempts=grading_tries_cap() - 1
    )
    assert grading_requeue_stale(older_than_s=-60) == 1  # one try left: queued again
    Submission.objects.filter(pk=submission.pk).update(
        grade_status=Submission.GradeStatus.GRADING, grade_attempts=grading_tries_cap()
    )
    assert grading_requeue_stale(older_than_s=-60) == 0
    assert status_of(submission) == Submission.GradeStatus.OFFLINE
    assert Submission.objects.get(pk=submission.pk).text == submission.text
