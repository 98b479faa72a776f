"""What `make run` prints and leaves behind: no control socket shared by every gunicorn of the
user, a line saying where the app listens, each worker log line once, and no "exited ...
restarting" from the supervisor for children that a Ctrl-C or SIGTERM stopped."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from gunicorn.config import Config

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "gunicorn.conf.py"


def gunicorn_config(monkeypatch, **env: str) -> Config:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    cfg = Config()
    namespace: dict = {}
    exec(compile(CONF.read_text(), str(CONF), "exec"), namespace)
    for name, value in namespace.items():
        if name in cfg.settings:
            cfg.set(name, value)
    return cfg


def test_no_control_socket_is_shared_between_instances(monkeypatch):
    assert gunicorn_config(monkeypatch, PORT="8321").control_socket_disable is True


def test_when_ready_names_the_address_that_gunicorn_leaves_empty(monkeypatch):
    cfg = gunicorn_config(monkeypatch, PORT="8321", HOST="127.0.0.1")
    lines = []

    class Server:
        class log:  # noqa: N801 - gunicorn's arbiter.log
            @staticmethod
            def info(message, *args):
                lines.append(message % args)

    cfg.when_ready(Server)
    assert lines == ["Each worker listens at: http://127.0.0.1:8321"]


def test_the_worker_prints_each_task_line_once(tmp_path):
    code = textwrap.dedent(
        """
        import logging, django
        django.setup()
        from config.worker import configure_logging
        configure_logging()
        logging.getLogger("django.tasks").info("Task id=t1 path=p state=RUNNING")
        logging.getLogger("config.worker").info("reclaimed nothing")
        """
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    env.pop("DJANGO_ENV", None)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    tasks = [line for line in result.stderr.splitlines() if "Task id=t1" in line]
    assert len(tasks) == 1, result.stderr
    assert " worker Task id=t1" in tasks[0]  # the worker's own format, with its time
    assert " worker reclaimed nothing" in result.stderr


def test_a_sigterm_to_the_group_stops_without_restart_lines(tmp_path):
    # The supervisor's children stand in for gunicorn and the worker: processes that die of
    # the signal, as one still starting does.
    code = textwrap.dedent(
        """
        import sys
        from config import serve
        serve.grader_status = lambda environ: ("Grader: stub", "")
        serve.port_answers = lambda host, port: False
        serve.subprocess.run = lambda *a, **k: serve.subprocess.CompletedProcess(a, 0)
        serve.web_command = lambda: ["python3", "-c", "import time; time.sleep(60)"]
        serve.worker_command = lambda: ["sleep", "60"]
        print("started", flush=True)
        sys.exit(serve.main([]))
        """
    )
    env = {**os.environ, "PORT": "8322"}
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        assert process.stdout.readline().strip() in {"started", "Grader: stub"}
        time.sleep(1.5)  # the children run
        os.killpg(process.pid, signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert "exited with" not in err and "restarting" not in err, err
