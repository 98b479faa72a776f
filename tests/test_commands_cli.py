"""The management commands (and `python -m config.serve`) as an operator runs them with bad
input: one sentence saying what is wrong, a non-zero exit status, valid JSON with --json, no
traceback and no silent success."""

from __future__ import annotations

import json
import socket
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from config import serve
from review.models import CalibrationRun


def closed_port_url() -> str:
    """The URL of a model server that does not answer (a port nothing listens on)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run_json(*args: str) -> tuple[dict, int]:
    out = StringIO()
    code = 0
    try:
        call_command(*args, stdout=out, stderr=StringIO())
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return json.loads(out.getvalue()), code


@pytest.mark.parametrize("argv", [["--help"], ["--bogus"]])
def test_serve_help_or_a_mistyped_option_starts_nothing(argv, monkeypatch, capsys):
    def must_not_run(*args, **kwargs):
        raise AssertionError("started a process")

    monkeypatch.setattr(serve.subprocess, "run", must_not_run)
    monkeypatch.setattr(serve.subprocess, "Popen", must_not_run)
    monkeypatch.setattr(serve, "grader_status", lambda environ: ("Grader: test", ""))
    with pytest.raises(SystemExit) as exit_:
        serve.main(argv)
    captured = capsys.readouterr()
    if argv == ["--help"]:
        assert exit_.value.code == 0 and "--grader-status" in captured.out
    else:
        assert exit_.value.code == 2 and "unrecognized arguments: --bogus" in captured.err


def test_export_content_into_a_file_is_one_sentence(db, tmp_path):
    target = tmp_path / "a-file"
    target.write_text("x")
    with pytest.raises(CommandError, match="cannot write under .*Not a directory"):
        call_command("export_content", str(target), stdout=StringIO())


@pytest.mark.parametrize("seconds", ["-5", "99999999999999999999999"])
def test_requeue_grading_refuses_a_negative_or_huge_age(db, seconds):
    with pytest.raises(CommandError, match="--older-than takes seconds from 0"):
        call_command("requeue_grading", "--older-than", seconds, stdout=StringIO())


def test_load_content_of_a_folder_without_content_fails(db, tmp_path):
    with pytest.raises(CommandError, match="no content files found"):
        call_command("load_content", str(tmp_path), stdout=StringIO())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--kill-replica-at", "10", "--restart-after", "nan"), "--restart-after must be between"),
        (("--restart-after", "5"), "--restart-after needs --kill-replica-at"),
        (("--prefix-groups", "-1"), "--prefix-groups must be 0 or more"),
        (("--prefix-groups", "3", "--prefix-tokens", "-1000"), "--prefix-tokens must be 0 or"),
    ],
)
def test_simulate_refuses_bad_fault_and_prefix_options_in_json(content_loaded, args, message):
    obj, code = run_json(
        "simulate", "--question", "chat-api-50qps", "--seconds", "20", *args, "--json"
    )
    assert code == 2
    assert obj["error"].startswith(message)


def test_grade_with_the_model_asked_for_but_not_configured_exits_2(tmp_path, settings):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": ""}
    answer = tmp_path / "a.md"
    answer.write_text("A router in front of ten vLLM replicas.\n")
    with pytest.raises(CommandError, match="--grader llm: the model grader is not configured") as e:
        call_command(
            "grade", "--question", "chat-api-50qps", "--step", "architecture",
            "--answer-file", str(answer), "--grader", "llm", "--json", stdout=StringIO(),
        )  # fmt: skip
    assert e.value.returncode == 2


def test_calibrate_with_no_model_answering_exits_2_and_stores_nothing(content_loaded, settings):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": closed_port_url()}
    with pytest.raises(CommandError, match="--grader llm: the model at .* does not answer") as e:
        call_command(
            "calibrate", "--question", "chat-api-50qps", "--step", "architecture",
            "--grader", "llm", "--json", stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    assert e.value.returncode == 2
    assert not CalibrationRun.objects.filter(grader="llm").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"\x89PNG\r\n\x1a\n\x00\xff", "is not UTF-8 text"), (b"", "has no expressions")],
)
def test_napkin_batch_refuses_a_binary_or_empty_file(tmp_path, content, message):
    batch = tmp_path / "lines.txt"
    batch.write_bytes(content)
    with pytest.raises(CommandError, match=message):
        call_command("napkin", "--batch", str(batch), "--json", stdout=StringIO())


def test_napkin_batch_with_an_expression_too_is_refused(tmp_path):
    batch = tmp_path / "lines.txt"
    batch.write_text("1 GB\n")
    with pytest.raises(CommandError, match="--batch reads its expressions from FILE"):
        call_command("napkin", "--batch", str(batch), "2 GB", stdout=StringIO())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("napkin", "1 GB", "--to", "ms"), "Cannot convert information to ms"),
        (("drill", "--kind", "nope", "--seed", "1"), "Unknown drill kind 'nope'"),
    ],
)
def test_a_refusal_without_json_is_on_stderr(args, message):
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command(*args, stdout=out, stderr=err)
    assert exit_.value.code == 2
    assert out.getvalue() == "" and message in err.getvalue()
