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


def listening_socket():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_a_port_another_server_already_listens_on_is_refused_at_start(monkeypatch) -> None:
    # With reuse_port each worker binds the port itself, so a second `make run` (or any
    # SO_REUSEPORT server) on the same port used to start silently and share the connections:
    # half the requests went to another app, with another database.
    with listening_socket() as taken:
        port = taken.getsockname()[1]
        conf = load(monkeypatch, PORT=str(port))
        with pytest.raises(RuntimeError, match=rf"127\.0\.0\.1:{port}.*PORT"):
            conf["on_starting"](None)


def test_a_free_port_or_a_reexec_starts(monkeypatch) -> None:
    with listening_socket() as taken:
        port = taken.getsockname()[1]
        conf = load(monkeypatch, PORT=str(port), GUNICORN_FD="5")  # gunicorn re-executing
        conf["on_starting"](None)
    monkeypatch.delenv("GUNICORN_FD")
    conf = load(monkeypatch, PORT=str(port))  # closed now
    conf["on_starting"](None)
