"""A flood of wrong passwords against the real server leaves signed-in candidates served.

The server is gunicorn as `make run` starts it (two workers of two threads: four request
slots). Without a per-address lock-out, eight anonymous clients posting wrong passwords for
random names keep all four slots busy hashing passwords, and a candidate's step page waits
seconds; with it, the flood is refused after 20 failures, each further guess at the cost of
a cache read. Each flooding client sends up to 20 guesses a second (160 in all, some 10 times
the rate of the hashing-bound flood that was first reported). The comparison is a ratio of
medians taken in the same run, not a wall-clock budget.
"""

from __future__ import annotations

import os
import re
import select
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

# Starts processes (servers, commands), each on a SQLite file of its own whatever DATABASE_URL
# says: CI's PostgreSQL run would repeat the SQLite run exactly.
# It compares two medians taken a minute apart: a neighbouring test worker busy in one of them
# and idle in the other would decide the ratio, so it runs alone.
pytestmark = [pytest.mark.processes, pytest.mark.one_database, pytest.mark.alone]

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "a-long-Passphrase-42"
SETUP = """
from django.contrib.auth.models import User
from practice import services as flow
from questions.models import Question
user = User.objects.create_user("steady", password={password!r})
revision = Question.objects.get(slug="chat-api-50qps").current_revision
print(flow.attempt_start(user=user, revision=revision).pk)
"""


FLOOD = """
import re, secrets, signal, sys, time
import httpx
INTERVAL_S = 1 / 20
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
base = sys.argv[1]
with httpx.Client(timeout=30) as client:
    page = client.get(base + "/accounts/login/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    seen = set()
    while True:
        next_at = time.monotonic() + INTERVAL_S
        response = client.post(
            base + "/accounts/login/",
            data={"username": "nobody-" + secrets.token_hex(4), "password": "wrong-guess",
                  "csrfmiddlewaretoken": token},
        )
        if response.status_code not in seen:
            seen.add(response.status_code)
            print(response.status_code, flush=True)
        time.sleep(max(0.0, next_at - time.monotonic()))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _csrf(client: httpx.Client, base: str) -> str:
    page = client.get(f"{base}/accounts/login/").text
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)


@pytest.fixture
def server(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "GRADER_BASE_URL", "REDIS_URL")
    }
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'flood.sqlite3'}"
    # The production hasher: the flood's cost is the point (the suite's settings use a fast one).
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "load_content"], cwd=ROOT, env=env, check=True, capture_output=True)
    attempt_id = subprocess.run(
        [*manage, "shell", "-c", SETUP.format(password=PASSWORD)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()[-1]
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "-c", "gunicorn.conf.py"],
        preexec_fn=lambda: os.sched_setaffinity(0, SERVER_CPUS),
        cwd=ROOT,
        env={**env, "PORT": str(port), "WEB_CONCURRENCY": "2", "WEB_THREADS": "2"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
    yield base, int(attempt_id)
    proc.terminate()
    proc.wait(timeout=20)


# An attacker's CPU is not the server's: the flooding clients run on a core of their own, the
# server and the measuring client on the others, so the figure is the server's, not that of
# eight Python clients taking turns with it on the same two cores.
_CPUS = sorted(os.sched_getaffinity(0))
ATTACKER_CPUS = {_CPUS[-1]}
SERVER_CPUS = set(_CPUS[:-1]) or ATTACKER_CPUS


def _await_lockout(flood: list[subprocess.Popen], deadline_s: float) -> list[int]:
    """Read each flooding client's status changes until all of them were answered 429."""
    answers: list[int] = []
    waiting = {proc.stdout: proc for proc in flood}
    deadline = time.monotonic() + deadline_s
    while waiting and time.monotonic() < deadline:
        ready, _, _ = select.select(list(waiting), [], [], 1.0)
        for stream in ready:
            code = int(stream.readline() or 0)
            answers.append(code)
            if code in (0, 429):
                del waiting[stream]
    return answers


def _median_page_ms(client: httpx.Client, url: str, n: int = 40) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        assert client.get(url).status_code == 200
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


@pytest.fixture
def on_server_cpus():
    """The measuring client shares the server's cores, as a browser on the same LAN would
    share nothing with the attacker; the test process gets all its cores back after."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, SERVER_CPUS)
    yield
    os.sched_setaffinity(0, before)


def test_a_login_flood_leaves_a_signed_in_candidate_served(server, on_server_cpus):
    base, attempt_id = server
    candidate = httpx.Client(timeout=30)
    token = _csrf(candidate, base)
    signed_in = candidate.post(
        f"{base}/accounts/login/",
        data={"username": "steady", "password": PASSWORD, "csrfmiddlewaretoken": token},
    )
    assert signed_in.status_code == 302
    step = f"{base}/attempts/{attempt_id}/steps/architecture/"
    quiet = _median_page_ms(candidate, step)

    # Each flooding client is a process of its own, so that none of them competes with the
    # measuring client for this process's GIL.
    flood = [
        subprocess.Popen(
            [sys.executable, "-c", FLOOD, base],
            preexec_fn=lambda: os.sched_setaffinity(0, ATTACKER_CPUS),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for _ in range(8)
    ]
    try:
        # The first 20 guesses are real failures (a password hash each); measure once every
        # flooding client is being refused, which is what a flood of any length turns into.
        answers = _await_lockout(flood, deadline_s=120)
        flooded = _median_page_ms(candidate, step)
    finally:
        for proc in flood:
            proc.terminate()
            proc.communicate(timeout=30)
    assert answers.count(429) == 8, f"not every flooding client was locked out: {answers}"
    # Three times the quiet median, with a floor: a page served in 3 ms when quiet may take 8
    # beside eight refused clients on a shared 2-core machine, and no candidate could tell.
    limit = max(3 * quiet, quiet + 25)
    assert flooded <= limit, f"median {flooded:.1f} ms under the flood, {quiet:.1f} ms without"
