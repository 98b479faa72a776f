"""`make run`: the web server and the task worker, each kept running; one Ctrl-C stops both.

Listens on 127.0.0.1:$PORT (default 8000), gunicorn configured by gunicorn.conf.py. Either
process that dies is started again, after a pause that doubles with each quick death (1 s up
to 30 s) and with a line on the terminal; the other keeps running. SIGINT or SIGTERM stops
both. In production run the same two commands (`web_command`, `worker_command`) under
systemd or another supervisor; see the README.

Its first line says which grader is active. With GRADER_BASE_URL set, the model there (the
setting is kept either way: the worker re-grades once it answers). Unset, a grader that
`make grader` serves at the default http://127.0.0.1:8001/v1 is used when it answers at start
(GRADER_BASE_URL is set for the web server and the worker); one started later needs a restart,
or GRADER_BASE_URL set explicitly. `python -m config.serve --grader-status` prints the line only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BACKOFF_MAX_S = 30.0
STABLE_S = 30.0  # a process that ran this long has recovered: its next death waits 1 s again


def web_command() -> list[str]:
    """gunicorn serving the app, as gunicorn.conf.py says (PORT, WEB_CONCURRENCY, ...)."""
    return [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "gunicorn.conf.py")]


def worker_command() -> list[str]:
    return [sys.executable, "-m", "config.worker"]


@dataclass
class Supervised:
    """One child process, restarted when it dies."""

    name: str
    command: list[str]
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    backoff_s: float = 1.0
    restart_at: float | None = field(default=None)

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, cwd=ROOT)
        self.started_at = time.monotonic()
        self.restart_at = None

    def check(self, now: float) -> None:
        """Start it again if it died and its pause is over."""
        if self.restart_at is not None:
            if now >= self.restart_at:
                log(f"starting the {self.name} again")
                self.start()
            return
        code = self.process.poll()
        if code is None:
            return
        if now - self.started_at > STABLE_S:
            self.backoff_s = 1.0
        log(f"the {self.name} (pid {self.process.pid}) exited with {code}; "
            f"restarting in {self.backoff_s:.0f} s")  # fmt: skip
        self.restart_at = now + self.backoff_s
        self.backoff_s = min(self.backoff_s * 2, BACKOFF_MAX_S)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def wait(self, deadline: float) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


DEFAULT_GRADER_URL = "http://127.0.0.1:8001/v1"
DEFAULT_GRADER_MODEL = "Qwen/Qwen2.5-7B-Instruct"


def served_models(base_url: str, api_key: str = "", timeout: float = 2.0) -> list[str] | None:
    """The model ids an OpenAI-compatible server lists at /models; None when none answers."""
    try:
        # Inside the try: Request itself raises ValueError for a URL without a known scheme.
        request = urllib.request.Request(base_url.rstrip("/") + "/models")
        if api_key:
            request.add_header("Authorization", f"Bearer {api_key}")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read().decode("utf-8", "replace"))
        return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]
    except (OSError, ValueError, AttributeError):
        return None


def grader_status(environ: dict[str, str]) -> tuple[str, str]:
    """The line saying which grader is active, and the GRADER_BASE_URL the app gets ("" none)."""
    configured = (environ.get("GRADER_BASE_URL") or "").strip()
    model = (environ.get("GRADER_MODEL") or "").strip() or DEFAULT_GRADER_MODEL
    if configured:
        # The package, not Django: this process stays free of it. Imported here, where it is
        # needed, since it costs most of a second.
        from grading.config import checked_base_url

        try:
            checked_base_url(configured)
        except ValueError as exc:
            return f"Grader: {exc}; `python -m config.serve --check` refuses to start", ""
    url = configured or DEFAULT_GRADER_URL
    models = served_models(url, (environ.get("GRADER_API_KEY") or "").strip())
    if models is not None and model in models:
        return f"Grader: model {model} at {url}", url
    why = "none answering" if models is None else f"{url} does not serve {model}"
    if configured:
        return (
            f"Grader: {why} at {url} yet — candidates self-check until it does "
            "(run `make grader` in another terminal)",
            configured,
        )
    return f"Grader: {why} — candidates self-check; run `make grader` in another terminal", ""


def port_answers(host: str, port: str | int) -> bool:
    """Whether something already accepts connections at host:port (a wildcard: loopback).
    gunicorn.conf.py asks it too, before its workers bind."""
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1", "[::]": "::1"}.get(host, host)
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=0.5):
            return True
    except (OSError, ValueError):
        return False


def _where(url: str) -> str:
    """A database or cache URL without its password, for a message on the terminal."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    user = f"{parts.username}@" if parts.username else ""
    host = parts.hostname or ""
    netloc = f"{user}{host}:{parts.port}" if parts.port else f"{user}{host}"
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def port_problem(environ: Mapping[str, str]) -> str:
    """The sentence saying what is wrong with PORT, "" when it is unset or a port number.
    gunicorn would die on it at every start, and the supervisor restart it forever."""
    raw = environ.get("PORT", "")
    if raw == "" or (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 65535):
        return ""
    return f"PORT={raw!r} is not a port number (1 to 65535); fix it, or unset it for 8000"


def preflight() -> list[str]:
    """What stops the app from starting here, one sentence each: a PORT that is not a port,
    settings that do not load (the GRADER_* ones included), a database or a shared cache that
    does not answer. Empty when all is well."""
    problems = [problem for problem in [port_problem(os.environ)] if problem]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    try:
        import django

        django.setup()
    except Exception as exc:  # ImproperlyConfigured and anything else settings raise
        return [*problems, f"the settings do not load: {_first_line(exc)}"]
    from django.conf import settings
    from django.core.cache import cache
    from django.db import connection

    from grading import GraderConfig

    try:
        # The rules every grading applies: settings it refuses would grade offline silently.
        GraderConfig.from_settings(settings.GRADER)
    except ValueError as exc:
        problems.append(f"{exc}; fix it, or unset it for the default (README, Configuration)")
    database = os.environ.get("DATABASE_URL") or ""
    try:
        connection.ensure_connection()
    except Exception as exc:
        where = f"DATABASE_URL={_where(database)}" if database else "the SQLite file"
        problems.append(
            f"cannot reach the database ({where}): {_first_line(exc)}; start it, or fix "
            "DATABASE_URL (unset: a SQLite file db.sqlite3)"
        )
    redis = os.environ.get("REDIS_URL") or ""
    if redis:
        try:
            cache.get("serve:preflight")
        except Exception as exc:
            problems.append(
                f"cannot reach the cache (REDIS_URL={_where(redis)}): {_first_line(exc)}; "
                "start Redis, or unset REDIS_URL for a cache in each process's memory"
            )
    return problems


def parse_args(argv: list[str]) -> argparse.Namespace:
    # Parsed before anything starts: `--help` or a mistyped option must not start servers.
    parser = argparse.ArgumentParser(
        prog="python -m config.serve",
        description="Run the web server and the grading worker (make run); Ctrl-C stops both. "
        "Listens on 127.0.0.1:$PORT (default 8000).",
    )
    parser.add_argument(
        "--grader-status", action="store_true", help="print which grader is active, then exit"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="check the settings, the database and the cache answer (one line each "
        "problem), then exit: 0 when all is well, 1 otherwise",
    )
    return parser.parse_args(argv)


def check_or_say() -> int:
    """`--check`: 0 when the app can start here, else 1 after one line per problem."""
    problems = preflight()
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr, flush=True)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.check:
        return check_or_say()
    line, grader_url = grader_status(dict(os.environ))
    print(line, flush=True)
    if args.grader_status:
        return 0
    if grader_url:
        os.environ["GRADER_BASE_URL"] = grader_url  # the web server and the worker inherit it
    if problem := port_problem(os.environ):
        print(f"error: {problem}", file=sys.stderr, flush=True)
        return 1
    port = os.environ.setdefault("PORT", "8000")
    host = os.environ.get("HOST") or "127.0.0.1"
    if port_answers(host, port):
        # gunicorn refuses it too (gunicorn.conf.py), but here it would be restarted forever.
        message = (
            f"error: {host}:{port} is already served by another process (another `make run`?); "
            "stop it, or set PORT to a free port"
        )
        print(message, file=sys.stderr, flush=True)
        return 1
    python = sys.executable
    # Settings, database and cache first, in a process of their own (this one stays free of
    # Django): a supervisor restarting a web server that cannot start helps nobody.
    if subprocess.run([python, "-m", "config.serve", "--check"], cwd=ROOT).returncode != 0:
        return 1
    # No worker runs yet, so anything left "grading" was orphaned by a crash: queue it again.
    subprocess.run([python, "manage.py", "requeue_grading", "--older-than", "0"], check=False)
    web = Supervised("web server", web_command() + ["--access-logfile", "-"])
    worker = Supervised("worker", worker_command())
    children = [web, worker]
    for child in children:
        child.start()
    log(f"serving on http://127.0.0.1:{port}/ (web pid {web.process.pid}, "
        f"worker pid {worker.process.pid}). Ctrl-C stops both.")  # fmt: skip

    stopping = False

    def stop(signum, frame) -> None:  # noqa: ARG001
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    # The periodic sweeps (lost grading tasks, mock sessions past their time) run in the
    # worker (config/worker.py), so a production worker does them too.
    while True:
        time.sleep(0.2)
        # Checked before the children: a Ctrl-C or a SIGTERM to the process group stops them
        # as well, and a child that it stopped is not a death to report or restart.
        if stopping:
            break
        now = time.monotonic()
        for child in children:
            child.check(now)
    for child in children:
        child.stop()
    deadline = time.monotonic() + 15
    for child in children:
        child.wait(deadline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
