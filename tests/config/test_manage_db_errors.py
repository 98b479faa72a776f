"""A management command on a database that is not there, or not migrated, stops with one line
(the sentence `python -m config.serve --check` gives), not a 90-line traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, database_url: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "DJANGO_ENV")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "DATABASE_URL": database_url, "REDIS_URL": ""},
    )


COMMANDS = [
    ["requeue_grading", "--older-than", "0"],
    ["grant_instructor", "nobody"],
    ["load_content"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_an_unmigrated_database_is_one_line(command, tmp_path):
    result = manage(*command, database_url=f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "no such table" in lines[0] and "manage.py migrate" in lines[0]


def test_an_unreachable_database_is_the_line_check_gives():
    result = manage("requeue_grading", database_url="postgres://nobody:s3cret@127.0.0.1:1/nothing")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: cannot reach the database (DATABASE_URL=")
    assert "s3cret" not in lines[0]


def test_traceback_still_shows_the_traceback(tmp_path):
    result = manage(
        "requeue_grading", "--traceback", database_url=f"sqlite:///{tmp_path / 'e.sqlite3'}"
    )
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_another_database_error_keeps_its_traceback(tmp_path):
    """Every database error was told "run migrate first", a wrong lead for a bad query."""
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    assert manage("migrate", "--noinput", database_url=url).returncode == 0
    done = manage(
        "shell",
        "-c",
        "from django.db import connection; connection.cursor().execute('SELEC 1')",
        database_url=url,
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "syntax error" in done.stderr
    assert "run `python manage.py migrate` first" not in done.stderr
