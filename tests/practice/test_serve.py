"""`make run`'s launcher: web server and worker start together and one signal stops both."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from config.serve import web_command

# Starts processes (servers, commands), each on a SQLite file of its own whatever DATABASE_URL
# says: CI's PostgreSQL run would repeat the SQLite run exactly.
pytestmark = [pytest.mark.processes, pytest.mark.one_database]

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children_of(pid: int) -> list[int]:
    out = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True
    ).stdout
    return [int(p) for p in out.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited; ps shows it as Z.
    state = subprocess.run(
        ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True
    ).stdout.strip()
    return bool(state) and not state.startswith("Z")


def start(command: list[str], tmp_path: Path, **extra_env: str) -> subprocess.Popen:
    """Migrate a fresh SQLite file and start `command` on it, in its own process group."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "GRADER_BASE_URL")
    }
    env.update({"DATABASE_URL": f"sqlite:///{tmp_path / 'serve.sqlite3'}", **extra_env})
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_serve_starts_web_and_worker_and_one_signal_stops_both(tmp_path, stop_signal):
    port = free_port()
    proc = start(
        [sys.executable, "-m", "config.serve"], tmp_path, PORT=str(port), WEB_CONCURRENCY="1"
    )
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            try:
                status = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code
                break
            except httpx.HTTPError:
                time.sleep(0.3)
        assert status == 200
        kids = children_of(proc.pid)
        assert len(kids) >= 2  # gunicorn and the worker
        commands = subprocess.run(
            ["ps", "-o", "args=", "-p", ",".join(map(str, kids))], capture_output=True, text=True
        ).stdout
        assert "gunicorn" in commands and "config.worker" in commands
        os.killpg(proc.pid, stop_signal)  # what Ctrl-C in a terminal does
        assert proc.wait(timeout=30) == 0
        time.sleep(0.5)
        assert not any(alive(k) for k in kids)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def listening_inodes(port: int) -> set[str]:
    """Inodes of the TCP sockets listening on `port` (from /proc/net/tcp, state 0A)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1].endswith(f":{port:04X}") and fields[3] == "0A":
            inodes.add(fields[9])
    return inodes


def socket_inodes(pid: int) -> set[str]:
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(target[len("socket:[") : -1])
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's /proc")
def test_each_web_worker_listens_on_its_own_socket(tmp_path):
    # One shared socket hands new connections to the busiest worker; with a socket each the
    # kernel spreads them (reuse_port in gunicorn.conf.py).
    port = free_port()
    proc = start(web_command(), tmp_path, PORT=str(port), WEB_CONCURRENCY="2")
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while time.monotonic() < deadline:
            workers = children_of(proc.pid)
            if len(workers) == 2 and len(listening_inodes(port)) == 2:
                break
            time.sleep(0.3)
        listeners = listening_inodes(port)
        assert len(workers) == 2 and len(listeners) == 2
        own = [socket_inodes(worker) & listeners for worker in workers]
        assert all(len(sockets) == 1 for sockets in own) and own[0] != own[1]
        with httpx.Client() as client:
            assert client.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
