"""gunicorn's settings for the web processes: `gunicorn -c gunicorn.conf.py` (`make run`,
the page bench, production).

Environment: PORT (8000) and HOST (127.0.0.1; 0.0.0.0 behind a proxy on another machine),
WEB_CONCURRENCY (worker processes; one per core by default), WEB_THREADS (2).
"""

import gc
import os

wsgi_app = "config.wsgi:application"
bind = [f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"]

# Requests here are short and CPU-bound under one GIL: a process per core does the work, and
# more threads per process only take turns on the GIL, which widens every request's tail.
# Two threads rather than one, so that a request that waits without the GIL (a password hash,
# a database round trip, a lock) does not idle its process.
workers = int(os.environ.get("WEB_CONCURRENCY") or max(2, len(os.sched_getaffinity(0))))
threads = int(os.environ.get("WEB_THREADS", "2"))

# A listening socket per worker: the kernel spreads new connections over them. On one shared
# socket the worker that waited last gets the next connection (the wait queue is last in,
# first out), which is the busy one, and browsers keep their connections, so a few workers
# end up with most clients while the others idle. The cost: a worker that dies drops the
# connections still queued on its own socket.
reuse_port = True

graceful_timeout = 10

# gunicorn's control socket (for `gunicornc`) is one path per user, ~/.gunicorn/gunicorn.ctl,
# whatever the port: a second instance takes it over and the first one's exit deletes it.
# Nothing here uses gunicornc; the supervisor (config/serve.py) or systemd does its work.
control_socket_disable = True
# Behind a TLS proxy, trust its X-Forwarded-* headers only from these addresses.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")


def on_starting(server) -> None:
    """Refuse a port another server already listens on. With reuse_port each worker binds the
    port itself, and the kernel lets any other SO_REUSEPORT socket share it: a second
    `make run` on the same PORT started without a word and took half the connections, with
    its own database. Skipped when gunicorn re-executes itself or systemd passes the sockets."""
    if os.environ.get("GUNICORN_FD") or os.environ.get("LISTEN_FDS"):
        return
    from config.serve import port_answers  # the app's directory is on the path by now

    for address in bind:
        host, _, port = address.rpartition(":")
        if port.isdigit() and port_answers(host, port):
            raise RuntimeError(  # gunicorn prints "Error: ..." and exits 1
                f"{host}:{port} is already served by another process (another `make run` or "
                "gunicorn?); stop it, or set PORT to a free port"
            )


def post_worker_init(worker) -> None:
    """Hide everything loaded at start-up from the garbage collector.

    Django, SymPy and the view modules make ~100k objects that live as long as the process.
    A full collection walks all of them while holding the GIL, stalling every thread of the
    process for tens of milliseconds; frozen objects are never walked (see `gc.freeze`).
    """
    from django.urls import get_resolver

    get_resolver().resolve("/")  # imports the URLconf, and with it every view module
    gc.collect()
    gc.freeze()


def when_ready(server) -> None:
    """Say where the app listens. gunicorn's own "Listening at:" line is empty with reuse_port,
    since each worker binds its own socket and the master holds none."""
    if reuse_port:
        server.log.info("Each worker listens at: %s", ", ".join(f"http://{a}" for a in bind))
