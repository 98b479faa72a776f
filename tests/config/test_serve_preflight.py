"""`make run` on a database, cache or configuration that is not there says so in one line
(`python -m config.serve --check`, run before `migrate`), instead of migrate's 80-line
traceback or a supervisor restarting a web server that cannot start."""

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the socket is


def check(**env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "DJANGO_ENV")
    }
    return subprocess.run(
        [sys.executable, "-m", "config.serve", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **env},
    )


def test_a_database_that_is_not_there_is_one_line_naming_database_url():
    port = closed_port()
    result = check(DATABASE_URL=f"postgres://studio:s3cret@127.0.0.1:{port}/studio")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "DATABASE_URL" in lines[0] and f"127.0.0.1:{port}" in lines[0]
    assert "s3cret" not in lines[0]  # the password is not printed


def test_a_cache_that_is_not_there_is_one_line_naming_redis_url(tmp_path):
    port = closed_port()
    result = check(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", REDIS_URL=f"redis://127.0.0.1:{port}/7"
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert re.search(rf"REDIS_URL.*127\.0\.0\.1:{port}", result.stderr), result.stderr


def test_a_bad_setting_is_one_line_not_a_traceback():
    result = check(DJANGO_ENV="prod")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "DJANGO_ENV" in result.stderr


def test_make_run_checks_before_it_migrates():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "config.serve --check" in recipe
    assert recipe.index("config.serve --check") < recipe.index("migrate")
