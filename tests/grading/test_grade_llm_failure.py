"""`manage.py grade --grader llm` whose model fails (an HTTP error, a reply that is not a
grade, a timeout) still prints the offline grade, but exits 2 with the reason on stderr: an
exit 0 would let the offline grade pass for the model's."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grading.fake_server import FakeChatServer, ScriptedReply, error_reply, grade_content

ROOT = Path(__file__).resolve().parents[2]
ARCH = ["--question", "chat-api-50qps", "--step", "architecture"]
GOOD = "A prefix-aware router sends requests that share the system prompt to the same replica."

FAILURES = {
    "http-500": lambda request: error_reply(500),
    "garbage": lambda request: ScriptedReply(content="I think this answer is great!!! not json"),
    "raw-garbage": lambda request: ScriptedReply(status=200, raw_body="<html>oops</html>"),
    "timeout": lambda request: ScriptedReply(content=grade_content([]), delay_s=3.0),
}


@pytest.fixture
def answer(tmp_path) -> str:
    path = tmp_path / "answer.md"
    path.write_text(GOOD, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_failing_model_exits_2_with_the_reason_and_keeps_the_json(
    failure, answer, fake_server, settings
):
    fake_server.responder = FAILURES[failure]
    settings.GRADER = {
        **settings.GRADER,
        "GRADER_BASE_URL": fake_server.base_url,
        "GRADER_TIMEOUT_S": "1",
        "GRADER_MAX_RETRIES": "0",
    }
    out = StringIO()
    with pytest.raises(CommandError, match=r"--grader llm: the model did not grade \(.+\)") as e:
        call_command(
            "grade", *ARCH, "--grader", "llm", "--answer-file", answer, "--json", stdout=out
        )
    assert e.value.returncode == 2  # as when no model is configured
    data = json.loads(out.getvalue())
    assert data["grader"] == "rubric" and data["advisory"] is True


def test_auto_falling_back_to_the_offline_grade_still_exits_0(answer, fake_server, settings):
    fake_server.responder = FAILURES["http-500"]
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": fake_server.base_url}
    out = StringIO()
    call_command("grade", *ARCH, "--grader", "auto", "--answer-file", answer, "--json", stdout=out)
    assert json.loads(out.getvalue())["grader"] == "rubric"


def test_the_process_prints_the_json_on_stdout_and_one_line_on_stderr(answer):
    with FakeChatServer() as server:
        server.responder = FAILURES["http-500"]
        proc = subprocess.run(
            [sys.executable, "manage.py", "grade", *ARCH, "--grader", "llm",
             "--answer-file", answer, "--json"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT), "GRADER_MAX_RETRIES": "0",
                 "GRADER_BASE_URL": server.base_url},
        )  # fmt: skip
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["grader"] == "rubric"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "the model did not grade" in lines[0], proc.stderr
