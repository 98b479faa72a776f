"""gunicorn.conf.py reads the deployment's environment: PORT, HOST, WEB_CONCURRENCY, WEB_THREADS."""

import os
import runpy
from pathlib import Path

import pytest

CONF = Path(__file__).resolve().parents[2] / "gunicorn.conf.py"


def load(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict:
    for name in ("PORT", "HOST", "WEB_CONCURRENCY", "WEB_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONF))


def test_the_environment_sets_address_processes_and_threads(monkeypatch) -> None:
    conf = load(monkeypatch, PORT="8123", HOST="0.0.0.0", WEB_CONCURRENCY="5", WEB_THREADS="3")
    assert conf["bind"] == ["0.0.0.0:8123"]
    assert (conf["workers"], conf["threads"]) == (5, 3)


def test_by_default_one_process_per_core_on_localhost(monkeypatch) -> None:
    conf = load(monkeypatch)
    assert conf["bind"] == ["127.0.0.1:8000"]
    assert conf["workers"] == max(2, len(os.sched_getaffinity(0)))
    assert conf["threads"] == 2
    assert conf["reuse_port"] is True
