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
    obj, code = run_json("napkin", "--batch", str(batch), "--json")
    assert code == 2
    assert obj["error"].startswith("--batch: ") and message in obj["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("napkin", "1 GB", "--to", "ms"), "Cannot convert bytes to ms"),
        (("drill", "--kind", "nope", "--seed", "1"), "Unknown drill kind 'nope'"),
    ],
)
def test_a_refusal_without_json_is_on_stderr(args, message):
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command(*args, stdout=out, stderr=err)
    assert exit_.value.code == 2
    assert out.getvalue() == "" and message in err.getvalue()


def run_command(capsys, *args: str) -> tuple[int, str, str]:
    """A command's exit status, stdout and stderr as a shell would see them, run in this process
    (no stdout= here: a usage error is written before call_command's streams are in place)."""
    code = 0
    try:
        call_command(*args)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# Bad input to the commands scripts call, and the option the refusal must name. Cheap cases
# only: each is refused before any simulation or file of consequence is read.
REFUSALS = [
    (("napkin", "1 GB", "--to", "xyz"), "--to"),
    (("napkin", "1 GB", "--to", "ms"), "--to"),
    (("napkin", "--batch", "no-such-file.txt"), "--batch"),
    (("napkin", "--batch", "lines.txt", "2 GB"), "--batch"),
    (("napkin", "--check", "no-such-question", "n_inst", "9"), "--check"),
    (("napkin", "--check", "chat-api-50qps", "no_such_quantity", "9"), "--check"),
    (("napkin", "--solve", "no-such-question", "n_inst", "qps_peak", "10"), "--solve"),
    (("plan", "--mem-util", "2"), "--mem-util"),
    (("plan", "--knee-tok-s", "nan"), "--knee-tok-s"),
    (("plan", "--tp", "3"), "--tp"),
    (("plan", "--context", "10000000"), "--context"),
    (("plan", "--mean-qps", "100"), "--mean-qps"),
    (("plan", "--model", "gpt-5"), "--model"),
    (("plan", "--gpu", "nope"), "--gpu"),
    (("simulate", "--question", "no-such-question"), "--question"),
    (("simulate", "--question", "chat-api-50qps", "--seconds", "99999"), "--seconds"),
    (("simulate", "--question", "chat-api-50qps", "--seconds", "20", "--knee", "0"), "--knee"),
    (("simulate", "--question", "chat-api-50qps", "--burst", "20x@10"), "--burst"),
    (("drill", "--kind", "nope", "--seed", "1"), "--kind"),
    (("drill", "--kind", "weights", "--seed", "x"), "--seed"),
    (("drill", "--kind", "weights", "--seed", "-3"), "--seed"),
    (("drill", "--kind", "weights", "--seed", "1", "--answer", "3 GB +"), "--answer"),
]
# Refused by argparse before the command runs: with --json the same JSON object and status.
USAGE_ERRORS = [
    (("napkin", "1 GB", "--bogus"), "--bogus"),
    (("plan", "--qps", "abc"), "--qps"),
    (("simulate", "--seconds", "20"), "--question"),
    (("drill", "--kind", "weights", "--seed"), "--seed"),
]


def _ids(cases):
    return [" ".join(args) for args, _option in cases]


@pytest.fixture
def scripted(request, capsys):
    """run_command for REFUSALS: simulate reads its question from the database, so the content
    is loaded for its cases alone (the tests are marked django_db for them)."""

    def run(*args):
        if args[0] == "simulate":
            request.getfixturevalue("content_loaded")
        return run_command(capsys, *args)

    return run


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "option"), REFUSALS + USAGE_ERRORS, ids=_ids(REFUSALS + USAGE_ERRORS)
)
def test_a_refusal_with_json_is_one_object_naming_the_option_and_exit_2(scripted, args, option):
    code, out, err = scripted(*args, "--json")
    assert code == 2
    obj = json.loads(out)  # one object and nothing else on stdout
    assert isinstance(obj, dict) and option in obj["error"], obj
    assert err == ""


@pytest.mark.django_db
@pytest.mark.parametrize(("args", "option"), REFUSALS, ids=_ids(REFUSALS))
def test_a_refusal_without_json_is_one_line_on_stderr_and_exit_2(scripted, args, option):
    code, out, err = scripted(*args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and option in err and "Traceback" not in err
