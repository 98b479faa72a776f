"""`make run` with a GRADER_* setting or a PORT that cannot work stops in one line naming the
variable (`python -m config.serve --check`), and `--grader-status`, the first line of
`make run`, never prints a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config import serve
from grading import GraderConfig

ROOT = Path(__file__).resolve().parents[2]


def run_serve(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_SETTINGS_MODULE", "REDIS_URL", "DJANGO_ENV", "PORT")
        and not k.startswith("GRADER_")
    }
    return subprocess.run(
        [sys.executable, "-m", "config.serve", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", **env},
    )


BAD_URLS = ["not-a-url", "127.0.0.1:8001/v1", "ftp://x/v1", "http:///v1", "http://h:port/v1"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_grader_status_names_a_malformed_grader_url_without_a_traceback(url):
    line, grader_url = serve.grader_status({"GRADER_BASE_URL": url})
    assert "GRADER_BASE_URL" in line and repr(url) in line
    assert grader_url == ""  # the web server and the worker do not get it


def test_served_models_is_none_for_a_url_urllib_cannot_read():
    assert serve.served_models("not-a-url") is None


@pytest.mark.parametrize("url", BAD_URLS)
def test_the_grader_config_refuses_a_url_that_is_not_http(url):
    with pytest.raises(ValueError, match="GRADER_BASE_URL"):
        GraderConfig.from_settings({"GRADER_BASE_URL": url})


def test_the_grader_config_keeps_http_and_https_urls():
    for url in ("http://127.0.0.1:8001/v1", "https://gpu-box.example/v1/", ""):
        assert GraderConfig.from_settings({"GRADER_BASE_URL": url}).base_url == url


@pytest.mark.parametrize(
    ("env", "name"),
    [
        ({"GRADER_BASE_URL": "not-a-url"}, "GRADER_BASE_URL"),
        ({"GRADER_BASE_URL": "127.0.0.1:8001/v1"}, "GRADER_BASE_URL"),
        ({"GRADER_TIMEOUT_S": "abc"}, "GRADER_TIMEOUT_S"),
        ({"GRADER_MAX_RETRIES": "9"}, "GRADER_MAX_RETRIES"),
        ({"PORT": "abc"}, "PORT"),
        ({"PORT": "99999"}, "PORT"),
        ({"PORT": "0"}, "PORT"),
    ],
)
def test_check_stops_in_one_line_naming_the_variable(env, name, tmp_path):
    result = run_serve("--check", tmp_path=tmp_path, **env)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {name}=")


def test_check_passes_good_grader_numbers_and_port(tmp_path):
    result = run_serve(
        "--check",
        tmp_path=tmp_path,
        PORT="8321",
        GRADER_BASE_URL="http://127.0.0.1:8329/v1",
        GRADER_TIMEOUT_S="10",
        GRADER_MAX_RETRIES="3",
    )
    assert result.returncode == 0, result.stderr


def test_grader_status_of_a_malformed_url_is_one_line(tmp_path):
    result = run_serve("--grader-status", tmp_path=tmp_path, GRADER_BASE_URL="not-a-url")
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stdout.strip().count("\n") == 0
    assert "GRADER_BASE_URL='not-a-url'" in result.stdout


def test_serve_refuses_a_bad_port_before_starting_anything(monkeypatch, capsys):
    monkeypatch.setenv("PORT", "99999")
    monkeypatch.setattr(serve, "grader_status", lambda environ: ("Grader: stub", ""))

    def no_start(*args, **kwargs):
        raise AssertionError("nothing starts with a bad PORT")

    monkeypatch.setattr(serve.subprocess, "run", no_start)
    monkeypatch.setattr(serve.subprocess, "Popen", no_start)
    assert serve.main([]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: PORT='99999' is not a port number (1 to 65535); fix it, or unset it for 8000"
    ]
