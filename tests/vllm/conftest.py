"""Fixtures for the tests against a real vLLM server (`make test-vllm`, tools/vllm/run-tests.sh).

The server is vLLM's CPU build from the separate environment tools/vllm/setup.sh builds,
serving the tiny random Qwen2 model from tools/vllm/make_tiny_model.py under the name
Qwen/Qwen2.5-7B-Instruct. It starts once per session (about 45 s on 2 cores) and stops at the
end.

These tests run only when asked: RUN_VLLM_TESTS=1 (set by tools/vllm/run-tests.sh) or a `-m`
expression selecting `vllm`. Otherwise they skip, so a plain `pytest` never starts vLLM. When
asked, a missing environment or model is an error, not a skip.

Fixtures meant for reuse (e.g. a test of a grading task run by the worker):
- `vllm_server`: the OpenAI base URL, `http://127.0.0.1:PORT/v1`.
- `vllm_server_process`: the running `VLLMServer` (metrics(), log_tail(), root_url).
- `vllm_grader_env`: an environment dict for app subprocesses (a command, a worker) with
  GRADER_BASE_URL / GRADER_MODEL pointing at the server and a private SQLite database that
  has been migrated and loaded with the shipped content.
- `use_vllm_grader`: points settings.GRADER at the server in this process for one test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.vllm.server import SERVED_MODEL_NAME, VLLMServer, VLLMStartError  # noqa: E402

APP_PYTHON = sys.executable


def vllm_tests_requested(config: pytest.Config) -> bool:
    if os.environ.get("RUN_VLLM_TESTS") == "1":
        return True
    markexpr = config.getoption("-m", default="") or ""
    return "vllm" in markexpr and "not vllm" not in markexpr


@pytest.fixture(scope="session")
def vllm_server_process(request, tmp_path_factory):
    """The running real vLLM server (one per session)."""
    if not vllm_tests_requested(request.config):
        pytest.skip("real-vLLM tests run with tools/vllm/run-tests.sh (make test-vllm)")
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    server = VLLMServer(log_path=os.environ.get("VLLM_SERVER_LOG") or log)
    try:
        server.start()
    except VLLMStartError as e:
        pytest.fail(str(e), pytrace=False)
    if not hasattr(request.config, "_vllm_report"):
        request.config._vllm_report = []
    request.config._vllm_report.append(
        f"server healthy at {server.base_url} after {server.startup_seconds:.1f} s "
        f"(log {server.log_path})"
    )
    try:
        yield server
    finally:
        server.stop()


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
def vllm_grader_env(vllm_server, tmp_path_factory) -> dict[str, str]:
    """Environment for app subprocesses (a command, a worker) graded by the real server.

    GRADER_BASE_URL / GRADER_MODEL point at the server; DATABASE_URL is a private SQLite file,
    migrated and loaded with the shipped content, so commands and workers started with this
    environment share one database.
    """
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
    return env
