"""Fixtures for the tests against a real vLLM server (`make test-vllm`, tools/vllm/run-tests.sh).

The server is started the way a user starts it: `make grader` (tools/vllm/grader.py), with
GRADER_MODEL_PATH=.vllm-model (the tiny random Qwen2 model from tools/vllm/make_tiny_model.py)
and GRADER_PORT a free port, as a subprocess in its own process group. It runs vLLM's CPU
build from the environment tools/vllm/setup.sh builds and serves the tiny model under the name
Qwen/Qwen2.5-7B-Instruct. It starts once per session (about 45 s on 2 cores) and stops at the
end; a test may stop and start it again (`vllm_server_process.stop()` / `.start()`, same port).

These tests run only when asked: RUN_VLLM_TESTS=1 (set by tools/vllm/run-tests.sh) or a `-m`
expression selecting `vllm`. Otherwise they skip, so a plain `pytest` never starts vLLM. When
asked, a missing environment or model is an error, not a skip.

Fixtures meant for reuse (e.g. a test of a grading task run by the worker):
- `vllm_server`: the OpenAI base URL, `http://127.0.0.1:PORT/v1`.
- `vllm_server_process`: the running server, a `MakeGrader` (metrics(), log_tail(), root_url,
  health(), stop(), start()).
- `vllm_grader_env`: an environment dict for app subprocesses (a command, a worker) with
  GRADER_BASE_URL / GRADER_MODEL pointing at the server and a private SQLite database that
  has been migrated and loaded with the shipped content.
- `use_vllm_grader`: points settings.GRADER at the server in this process for one test.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.vllm.server import (  # noqa: E402
    DEFAULT_STARTUP_TIMEOUT,
    SERVED_MODEL_NAME,
    VLLMServer,
    VLLMStartError,
    free_port,
)

APP_PYTHON = sys.executable
TINY_MODEL = ROOT / ".vllm-model"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class MakeGrader(VLLMServer):
    """`make grader` serving the tiny model on `port`: the VLLMServer helpers (health(),
    metrics(), get_text(), log_tail() on vLLM's own log) over a server that `make` started."""

    def __init__(self, port: int, log_path: Path, output_path: Path) -> None:
        super().__init__(TINY_MODEL, port=port, log_path=log_path)
        self.output_path = output_path
        self.make: subprocess.Popen | None = None
        self._out_offset = 0  # where this start's lines begin in output_path
        self._t0 = 0.0

    def start(self, wait: bool = True) -> MakeGrader:
        """Run `make grader`; with wait=False return at once (`wait_healthy()` later), so the
        caller's own set-up overlaps vLLM's start-up."""
        if self.make is None:
            env = dict(os.environ)
            env.update(
                GRADER_PORT=str(self.port),
                GRADER_MODEL_PATH=str(TINY_MODEL),
                GRADER_DEVICE="cpu",
                GRADER_LOG=str(self.log_path),
                GRADER_STARTUP_TIMEOUT_S=str(DEFAULT_STARTUP_TIMEOUT),
            )
            self._t0 = time.monotonic()
            self.startup_seconds = None
            self._out_offset = self.output_path.stat().st_size if self.output_path.exists() else 0
            with open(self.output_path, "ab") as out:
                self.make = subprocess.Popen(
                    ["make", "--no-print-directory", "grader"],
                    cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: stop() signals them all
                )  # fmt: skip
        return self.wait_healthy() if wait else self

    def wait_healthy(self) -> MakeGrader:
        if self.startup_seconds is not None:
            return self
        if self.make is None:
            raise VLLMStartError("make grader was not started")
        deadline = self._t0 + DEFAULT_STARTUP_TIMEOUT + 30
        while self.health() != 200:
            code = self.make.poll()
            if code is not None or time.monotonic() > deadline:
                self.stop()
                raise VLLMStartError(
                    f"make grader {'exited ' + str(code) if code is not None else 'timed out'} "
                    f"before the server was healthy:\n{self.output_tail()}\n"
                    f"vLLM log {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(0.25)
        self.startup_seconds = time.monotonic() - self._t0
        return self

    def output_tail(self, lines: int = 40) -> str:
        try:
            text = self.output_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 60.0) -> None:
        make, self.make = self.make, None
        if make is None:
            return
        # Ctrl-C's equivalent for the whole group: make and grader.py, which stops vLLM.
        try:
            os.killpg(make.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            make.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        # make exits at once; grader.py, in the same group, stops vLLM first: wait for both,
        # and kill what is left of either group (grader.py's; vLLM's engine core and workers).
        # grader.py names vLLM's group as soon as it starts it (read from this start's output).
        with open(self.output_path, "rb") as out:
            out.seek(self._out_offset)
            found = re.findall(rb"vllm pid (\d+)", out.read())
        groups = [make.pid, *(int(pid) for pid in found)]
        deadline = time.monotonic() + timeout
        while any(map(_group_alive, groups)) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pgid in filter(_group_alive, groups):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            make.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        # The port is free again once nothing answers there.
        deadline = time.monotonic() + 15
        while self.health(timeout=0.5) is not None and time.monotonic() < deadline:
            time.sleep(0.2)


def vllm_tests_requested(config: pytest.Config) -> bool:
    if os.environ.get("RUN_VLLM_TESTS") == "1":
        return True
    markexpr = config.getoption("-m", default="") or ""
    return "vllm" in markexpr and "not vllm" not in markexpr


@pytest.fixture(scope="session")
def _make_grader(request, tmp_path_factory):
    """`make grader` launched (not yet waited for): one per session, stopped at its end."""
    if not vllm_tests_requested(request.config):
        pytest.skip("real-vLLM tests run with tools/vllm/run-tests.sh (make test-vllm)")
    tmp = tmp_path_factory.mktemp("vllm")
    log = Path(os.environ.get("VLLM_SERVER_LOG") or tmp / "server.log")
    server = MakeGrader(free_port(), log, tmp / "make-grader.out")
    server.start(wait=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _vllm_session(request):
    """Before the first test that needs the server: launch `make grader`, build the app's
    database meanwhile (`vllm_grader_env`), then wait for the server, so the two start-ups
    overlap. Tests that need no server (the launcher's own choices) start none."""
    if vllm_tests_requested(request.config) and "_make_grader" in request.fixturenames:
        request.getfixturevalue("vllm_grader_env")


@pytest.fixture(scope="session")
def vllm_server_process(request, _make_grader):
    """The running real vLLM server (one per session), served by `make grader`."""
    try:
        _make_grader.wait_healthy()
    except VLLMStartError as e:
        pytest.fail(str(e), pytrace=False)
    if not hasattr(request.config, "_vllm_report"):
        request.config._vllm_report = []
    request.config._vllm_report.append(
        f"make grader healthy at {_make_grader.base_url} after "
        f"{_make_grader.startup_seconds:.1f} s (vLLM log {_make_grader.log_path})"
    )
    return _make_grader


@pytest.fixture(scope="session")
def vllm_report(request) -> list[str]:
    """Lines printed in the terminal summary (which grader answered, fallbacks, timings)."""
    if not hasattr(request.config, "_vllm_report"):
        request.config._vllm_report = []
    return request.config._vllm_report


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    lines = getattr(config, "_vllm_report", None)
    if lines:
        terminalreporter.section("real vLLM")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def vllm_server(vllm_server_process) -> str:
    """Base URL of the real vLLM OpenAI-compatible server: http://127.0.0.1:PORT/v1."""
    return vllm_server_process.base_url


@pytest.fixture(scope="session")
def vllm_model_name() -> str:
    return SERVED_MODEL_NAME


@pytest.fixture
def openai_client(vllm_server):
    from openai import OpenAI

    return OpenAI(base_url=vllm_server, api_key="unused", timeout=120, max_retries=0)


@pytest.fixture
def use_vllm_grader(vllm_server, settings):
    """The GRADER setting pointing at the real server, in this process, for one test."""
    settings.GRADER = {
        **settings.GRADER,
        "GRADER_BASE_URL": vllm_server,
        "GRADER_MODEL": SERVED_MODEL_NAME,
        "GRADER_API_KEY": "",
    }
    return vllm_server


def _run_manage(env: dict[str, str], *args: str, timeout: float = 300) -> None:
    proc = subprocess.run(
        [APP_PYTHON, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"manage.py {' '.join(args)} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def vllm_grader_env(_make_grader, tmp_path_factory, request) -> dict[str, str]:
    """Environment for app subprocesses (a command, a worker) graded by the real server.

    GRADER_BASE_URL / GRADER_MODEL point at the server; DATABASE_URL is a private SQLite file,
    migrated and loaded with the shipped content, so commands and workers started with this
    environment share one database.
    """
    # The database is made while vLLM starts (`make grader` was launched, not waited for).
    vllm_server = _make_grader.base_url
    db = tmp_path_factory.mktemp("vllm-app") / "db.sqlite3"
    env = dict(os.environ)
    for var in ("GRADER_API_KEY", "DJANGO_ENV"):
        env.pop(var, None)
    env.update(
        GRADER_BASE_URL=vllm_server,
        GRADER_MODEL=SERVED_MODEL_NAME,
        DATABASE_URL=f"sqlite:///{db}",
        DJANGO_SETTINGS_MODULE="config.settings",
        PYTHONUNBUFFERED="1",
    )
    _run_manage(env, "migrate", "--noinput")
    _run_manage(env, "load_content")
    request.getfixturevalue("vllm_server_process")  # healthy before any test uses it
    return env
