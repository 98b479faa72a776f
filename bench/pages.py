"""Page latency under load: each practice endpoint against a trivial Django view, one run
per database.

Starts gunicorn as `make run` does (`config.serve.web_command`, gunicorn.conf.py, 2 workers)
on a fresh SQLite file, and then on a PostgreSQL database it creates and drops (when
postgres://postgres@127.0.0.1:5432 answers; BENCH_POSTGRES_URL names another server),
prepares one candidate per client with an attempt, drives 20 concurrent clients at each
endpoint for a fixed duration (in three slices, round robin, each recorded once its
connections have settled; see SETTLE_S), and prints one JSON line per endpoint and database:
{"bench": "pages", "database", "endpoint", "p50_ms", "p99_ms", "rps", "ratio_vs_minimal"}.
The ratio is the endpoint's p99 over the trivial view's p99 in the same run.

`signed_in_floor` is reported beside them: loading the session and the user and checking the
attempt is the candidate's, which every practice endpoint must do before its own work.
Knobs for working on one figure: BENCH_ONLY (comma list of endpoints), BENCH_CLIENTS,
BENCH_SECONDS, BENCH_DATABASES (sqlite,postgresql), BENCH_THREADS (gunicorn threads per worker;
by default what `make run` uses) and BENCH_REDIS_URL (run with the shared Redis cache instead
of the per-process one).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx

from config.serve import web_command
from grading.stats import percentile

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "20"))
DURATION_S = float(os.environ.get("BENCH_SECONDS", "9"))  # recorded, per endpoint
ROUNDS = 3
# Each slice opens its clients' connections afresh (gunicorn closes idle keep-alive ones after
# 2 s), and 20 connections arriving at once queue on the accepting workers for a moment. Those
# first requests measure connection set-up, the same for every endpoint, and would set the p99
# of whichever endpoint happened to own the slice; so each slice runs this long before it
# records. The trivial view is measured the same way.
SETTLE_S = 0.3
WORKSHEET = "\n".join(
    [
        "W = 7.6e9 * 2 B",
        "bw_eff = 0.7 * 1008 GB/s",
        "tpot = W / bw_eff in ms",
        "r = 2000 tok/s / (256 tok/req)",
        "n = ceil({qps} QPS / (0.7 * r))",
    ]
)


def worksheet_typed(state: dict) -> str:
    """The worksheet as a candidate sends it while typing: the last line differs every time."""
    state["typed"] = state.get("typed", 0) + 1
    return WORKSHEET.format(qps=state["typed"])


ANSWER = (
    "Clients reach an API gateway, then a prefix-aware router in front of ten vLLM "
    "replicas with prefix caching; we autoscale on the summed queue depth. "
) * 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare(env: dict) -> list[dict]:
    """Migrate, load content, and make one user + attempt + graded submission per client."""
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [sys.executable, "manage.py", "load_content"],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    script = f"""
import json, django
django.setup()
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.auth import SESSION_KEY, BACKEND_SESSION_KEY, HASH_SESSION_KEY
from questions.models import Question
from practice import services as flow
revision = Question.objects.get(slug="chat-api-50qps").current_revision
out = []
for i in range({CLIENTS}):
    user = User.objects.create_user(f"bench{{i}}", password="bench-Passphrase-1")
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    sub = flow.step_submit(answer=answer, text={ANSWER!r}, fields={{}}, base_version=0).submission
    flow.submission_grade(submission_id=sub.pk)
    # No worker runs during the bench, so this one stays queued: what a polling page sees.
    pending_answer = flow.answer_open(attempt=attempt, step_key="bottlenecks")
    pending = flow.step_submit(answer=pending_answer, text={ANSWER!r}, fields={{}},
                               base_version=0).submission
    s = SessionStore()
    s[SESSION_KEY] = str(user.pk)
    s[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    s[HASH_SESSION_KEY] = user.get_session_auth_hash()
    s.create()
    out.append({{"session": s.session_key, "attempt": attempt.pk, "submission": sub.pk,
                "pending": pending.pk}})
print(json.dumps(out))
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def endpoints(clients: list[dict]) -> list[tuple[str, callable]]:
    """(name, make_request) pairs; make_request(client_state) -> (method, url, data)."""
    steps = ["clarify", "estimate", "architecture", "bottlenecks", "tradeoffs"]
    out = [
        ("minimal", lambda c: ("GET", "/__bench__/minimal", None)),
        ("signed_in_floor", lambda c: ("GET", f"/__bench__/signed-in-floor/{c['attempt']}", None)),
    ]
    for step in steps:
        out.append(
            (
                f"step:{step}",
                lambda c, s=step: ("GET", f"/attempts/{c['attempt']}/steps/{s}/", None),
            )
        )
    out.append(
        (
            "autosave",
            lambda c: (
                "POST",
                f"/attempts/{c['attempt']}/steps/tradeoffs/draft/",
                {
                    "base_version": str(c.setdefault("version", 0)),
                    "text": ANSWER + str(time.time()),
                    "seconds": "1",
                },
            ),
        )
    )
    out.append(
        (
            "worksheet",
            lambda c: (
                "POST",
                f"/attempts/{c['attempt']}/worksheet/",
                {"worksheet": worksheet_typed(c)},
            ),
        )
    )
    # The poll while grading runs (every second), then the one fetch of the graded panel.
    for name, key in (("feedback_poll", "pending"), ("feedback_graded", "submission")):
        out.append(
            (
                name,
                lambda c, k=key: (
                    "GET",
                    f"/attempts/{c['attempt']}/submissions/{c[k]}/feedback/",
                    None,
                ),
            )
        )
    return out


class Connection:
    """One keep-alive HTTP/1.1 connection with hand-built requests.

    A general-purpose client (httpx) spends about as much CPU per request as the trivial view
    does, on the same two cores: the bench would measure the client. This one writes a
    prepared request and reads back the status, headers and body, nothing more.
    """

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self.host, self.port = host, port
        self.fixed = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, url: str, data: dict | None) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        body = urlencode(data).encode() if data is not None else b""
        head = f"{method} {url} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{self.fixed}"
        if data is not None:
            head += "Content-Type: application/x-www-form-urlencoded\r\n"
        head += f"Content-Length: {len(body)}\r\n\r\n"
        self.writer.write(head.encode() + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        fields = {}
        for line in lines[1:]:
            if ":" in line:
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.strip()
        if "content-length" in fields:
            payload = await self.reader.readexactly(int(fields["content-length"]))
        elif fields.get("transfer-encoding") == "chunked":
            parts = []
            while size := int((await self.reader.readuntil(b"\r\n")).strip(), 16):
                parts.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            await self.reader.readexactly(2)
            payload = b"".join(parts)
        else:
            payload = await self.reader.read()
        if fields.get("connection") == "close":
            await self.close()
        return status, payload

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


async def drive(port: int, clients: list[dict], make, duration: float) -> list[float]:
    latencies: list[float] = []
    errors = 0
    version_re = re.compile(rb'id="base-version" value="(\d+)"')

    async def one_client(state: dict) -> None:
        nonlocal errors
        csrf = secrets.token_hex(16)
        connection = Connection(
            "127.0.0.1",
            port,
            {
                "Cookie": f"sessionid={state['session']}; csrftoken={csrf}",
                "X-CSRFToken": csrf,
                "HX-Request": "true",
                "Referer": f"http://127.0.0.1:{port}/",
            },
        )
        settled = time.monotonic() + SETTLE_S
        deadline = settled + duration
        try:
            while time.monotonic() < deadline:
                method, url, data = make(state)
                start = time.perf_counter()
                recorded = time.monotonic() >= settled
                status, body = await connection.request(method, url, data)
                if recorded:
                    latencies.append((time.perf_counter() - start) * 1000)
                if status >= 400:
                    errors += 1
                match = version_re.search(body) if method == "POST" else None
                if match:
                    state["version"] = int(match.group(1))
        finally:
            await connection.close()

    await asyncio.gather(*(one_client(c) for c in clients))
    if errors:
        print(f"# {errors} error responses", file=sys.stderr)
    return latencies


POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432")


def postgres_database() -> tuple[str, callable] | None:
    """A new PostgreSQL database for one run, as (DATABASE_URL, drop); None when no server
    answers."""
    import psycopg

    name = f"bench_pages_{os.getpid()}"
    try:
        admin = psycopg.connect(f"{POSTGRES_URL}/postgres", autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        print(f"# pages on postgresql: skipped, no server ({exc})".strip(), file=sys.stderr)
        return None
    with admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")

    def drop() -> None:
        with psycopg.connect(f"{POSTGRES_URL}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    return f"{POSTGRES_URL}/{name}", drop


def run(database: str, database_url: str) -> None:
    """Prepare `database_url`, serve it, measure every endpoint, print one line each."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "DATABASE_URL": database_url,
        "PYTHONPATH": str(ROOT),
        "WEB_CONCURRENCY": "2",
    }
    env.pop("GRADER_BASE_URL", None)
    if "BENCH_THREADS" in os.environ:
        env["WEB_THREADS"] = os.environ["BENCH_THREADS"]
    if "BENCH_REDIS_URL" in os.environ:  # the shared cache instead of one per process
        env["REDIS_URL"] = os.environ["BENCH_REDIS_URL"]
    else:
        env.pop("REDIS_URL", None)
    clients = prepare(env)
    port = free_port()
    env["PORT"] = str(port)
    server = subprocess.Popen(
        web_command() + ["--log-level", "error"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                if httpx.get(base + "/__bench__/minimal", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        # Round robin: every endpoint, the trivial view included, gets a slice of each round,
        # so a noisy moment on this shared machine lands on all of them, not on one.
        plan = endpoints(clients)
        only = os.environ.get("BENCH_ONLY")  # a comma list of endpoints, for working on one
        if only:
            plan = [(n, m) for n, m in plan if n == "minimal" or n in only.split(",")]
        samples: dict[str, list[float]] = {name: [] for name, _ in plan}
        for _name, make in plan:
            asyncio.run(drive(port, clients, make, 0.5))  # warm up
        for _ in range(ROUNDS):
            for name, make in plan:
                samples[name] += asyncio.run(drive(port, clients, make, DURATION_S / ROUNDS))
        results = {
            name: (percentile(lat, 50), percentile(lat, 99), len(lat) / DURATION_S)
            for name, lat in samples.items()
        }
        floor_p50, floor, _rps = results["minimal"]
        for name, (p50, p99, rps) in [*results.items()][1:] + [*results.items()][:1]:
            line = {
                "bench": "pages",
                "database": database,
                "endpoint": name,
                "p50_ms": round(p50, 1),
                "p99_ms": round(p99, 1),
                "rps": round(rps, 1),
                "ratio_vs_minimal": round(p99 / floor, 2),
                # The tail on 2 shared cores is mostly scheduling noise that hits the trivial
                # view too; the median ratio shows the work each page adds.
                "p50_ratio_vs_minimal": round(p50 / floor_p50, 2),
            }
            print(json.dumps(line), flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)


def main() -> None:
    wanted = os.environ.get("BENCH_DATABASES", "sqlite,postgresql").split(",")
    if "sqlite" in wanted:
        workdir = Path(tempfile.mkdtemp(prefix="bench-pages-"))
        try:
            run("sqlite", f"sqlite:///{workdir / 'bench.sqlite3'}")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    if "postgresql" in wanted and (postgres := postgres_database()):
        url, drop = postgres
        try:
            run("postgresql", url)
        finally:
            drop()


if __name__ == "__main__":
    main()
