"""Start the web server and the task worker together; one Ctrl-C (or SIGTERM) stops both.

Used by `make run`. Listens on 127.0.0.1:$PORT (default 8000). If either process dies, the
other is stopped too, so a half-running app never hides behind a healthy-looking terminal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

SWEEP_EVERY_S = 120
# Threads per web worker. Requests here are short and CPU-bound under one GIL, on two cores:
# more threads per process only take turns on the GIL, which widens every request's tail (in
# the bench p99 was 3 to 4 times the median with 4 threads, 2 to 2.7 times with 2). Two, not
# one, so that a request that waits without the GIL (a password hash, a PostgreSQL round
# trip, the SQLite write lock) does not idle its process.
WEB_THREADS = os.environ.get("WEB_THREADS", "2")


def web_command(bind: str, workers: str, threads: str = WEB_THREADS) -> list[str]:
    """gunicorn serving the app: what `make run` starts, and what the page bench measures.

    `--reuse-port` gives each worker its own listening socket, and the kernel spreads new
    connections over them by a hash of the client's address and port. On one shared socket
    the worker that last waited gets the next connection (the wait queue is last-in,
    first-out), which is the busy one; browsers keep their connections, so it keeps them. In
    the page bench's 20 connections that left one worker with 18-20 of them while the other
    idled, doubling every latency for that slice (median 4.5-5x the trivial view's instead of
    2.4-3x). The cost: a worker that dies drops the connections still queued on its socket.
    """
    return [
        sys.executable, "-m", "gunicorn", "config.wsgi:application",
        "--bind", bind,
        "--workers", workers,
        "--threads", threads,
        "--reuse-port",
    ]  # fmt: skip


def main() -> int:
    port = os.environ.get("PORT", "8000")
    python = sys.executable
    web = web_command(f"127.0.0.1:{port}", os.environ.get("WEB_WORKERS", "2"))
    web += ["--graceful-timeout", "5", "--access-logfile", "-"]
    worker = [
        python,
        "manage.py",
        "db_worker",
        "--queue-name",
        "*",
        "--interval",
        "0.5",
        "--no-reload",
    ]
    # No worker runs yet, so anything left "grading" was orphaned by a crash: queue it again.
    subprocess.run([python, "manage.py", "requeue_grading", "--older-than", "0"], check=False)
    children = [subprocess.Popen(web), subprocess.Popen(worker)]
    last_sweep = time.monotonic()
    print(
        f"Serving on http://127.0.0.1:{port}/ (web pid {children[0].pid}, "
        f"worker pid {children[1].pid}). Ctrl-C stops both.",
        flush=True,
    )

    stopping = False

    def stop(signum, frame):  # noqa: ARG001
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    while not stopping and all(child.poll() is None for child in children):
        time.sleep(0.2)
        if time.monotonic() - last_sweep > SWEEP_EVERY_S:
            # A worker that died mid-grade leaves its submission stuck; sweep it back in.
            subprocess.Popen([python, "manage.py", "requeue_grading", "--older-than", "300"])
            last_sweep = time.monotonic()
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return 0 if stopping else 1


if __name__ == "__main__":
    sys.exit(main())
