"""`python manage.py grade`: the stable JSON contract and its one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grading.fake_server import ScriptedReply, grade_content, response_ids

# The commands it starts read files, never the database (it passes with DATABASE_URL pointing
# at no server), so CI's PostgreSQL run leaves it to the SQLite one.

ROOT = Path(__file__).resolve().parents[2]
ARCH = "--question chat-api-50qps --step architecture"
CONTRACT_KEYS = [
    "grader", "model", "score", "points", "misconceptions", "warnings", "latency_ms", "advisory",
    "note",
]  # fmt: skip
POINT_KEYS = ["id", "verdict", "evidence", "comment", "evidence_source", "diagram_evidence"]
GOOD = (
    "A prefix-aware router sends requests that share the system prompt to the same replica.\n"
    "We autoscale on the queue of waiting requests."
)


@pytest.fixture(autouse=True)
def no_model(settings):
    """Unless a test says otherwise, no model endpoint is configured."""
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": ""}


@pytest.fixture
def answer_file(tmp_path):
    def write(text: str | bytes) -> str:
        path = tmp_path / "answer.txt"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def run_json(*args: str) -> dict:
    out = StringIO()
    call_command("grade", *args, "--json", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_json_output_has_exactly_the_contract_fields(answer_file):
    data = run_json(*ARCH.split(), "--grader", "rubric", "--answer-file", answer_file(GOOD))
    assert list(data) == CONTRACT_KEYS
    assert data["grader"] == "rubric" and data["model"] is None
    assert 0 < data["score"] < 1
    assert all(list(p) == POINT_KEYS for p in data["points"])
    router = next(p for p in data["points"] if p["id"] == "arch-prefix-router")
    assert router["verdict"] == "hit" and router["evidence"] in GOOD
    assert isinstance(data["warnings"], list) and isinstance(data["latency_ms"], int)


def test_a_wrong_idea_in_the_answer_is_printed_with_the_words_that_state_it(answer_file):
    wrong = "We provision the fleet for the average load of 20 QPS; a queue absorbs the peak."
    data = run_json(
        "--question", "chat-api-50qps", "--step", "clarify", "--grader", "rubric",
        "--answer-file", answer_file(wrong),
    )  # fmt: skip
    found = {m["id"]: m for m in data["misconceptions"]}
    assert list(found) == ["c1-size-for-mean"]
    assert list(found["c1-size-for-mean"]) == ["id", "evidence", "comment"]
    assert found["c1-size-for-mean"]["evidence"] in wrong
    right = run_json(*ARCH.split(), "--grader", "rubric", "--answer-file", answer_file(GOOD))
    assert right["misconceptions"] == []


def test_the_matchers_verdicts_are_printed_as_advisory(answer_file):
    data = run_json(*ARCH.split(), "--grader", "rubric", "--answer-file", answer_file(GOOD))
    assert data["advisory"] is True
    assert "advisory" in data["note"].lower() and "\n" not in data["note"]
    # The verdicts and the score are still there for the UI, calibration and scripts.
    assert {p["verdict"] for p in data["points"]} >= {"hit", "miss"}
    assert 0 < data["score"] < 1


def test_auto_without_a_model_says_the_offline_grader_answered(answer_file):
    data = run_json(*ARCH.split(), "--answer-file", answer_file(GOOD))
    assert data["grader"] == "rubric"
    assert any("model unavailable" in w for w in data["warnings"])


def test_a_follow_up_is_graded_against_its_own_rubric(answer_file, shipped_question):
    follow_up = shipped_question("chat-api-50qps")["steps"]["tradeoffs"]["follow_ups"][0]
    data = run_json(
        *"--question chat-api-50qps --step tradeoffs --grader rubric".split(),
        *("--follow-up", follow_up["id"], "--answer-file", answer_file(follow_up["reference"])),
    )
    assert [p["id"] for p in data["points"]] == [p["id"] for p in follow_up["rubric"]]
    assert data["score"] >= 0.8


def test_the_llm_grader_is_used_when_asked(answer_file, fake_server, settings):
    def honest(request):
        return ScriptedReply(content=grade_content(
            [{"id": i, "evidence": "We autoscale on the queue", "verdict": "hit", "comment": "ok"}
             for i in response_ids(request)]
        ))  # fmt: skip

    fake_server.responder = honest
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": fake_server.base_url}
    data = run_json(*ARCH.split(), "--grader", "llm", "--answer-file", answer_file(GOOD))
    assert data["grader"] == "llm" and data["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert data["advisory"] is False and data["note"] == ""
    # One quote about queue autoscaling keeps the one point it states (weight 2 of 11), not
    # every point the model marked with it: the draining and cold-start point speaks of
    # autoscaling on the queue too, but the quote says nothing of its own.
    hits = {p["id"] for p in data["points"] if p["verdict"] == "hit"}
    assert hits == {"arch-autoscale-queue"}
    assert data["score"] == pytest.approx(2 / 11, abs=1e-4)
    sent = fake_server.requests[0]["messages"][1]["content"]
    assert "Design a chat completion API" in sent and "Step: architecture" in sent


def test_a_failing_model_prints_the_offline_grade_and_exits_2(answer_file, fake_server, settings):
    fake_server.responder = lambda request: ScriptedReply(content="not json")
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": fake_server.base_url}
    out = StringIO()
    with pytest.raises(CommandError, match="the model did not grade") as error:
        call_command(
            "grade", *ARCH.split(), "--grader", "llm", "--answer-file", answer_file(GOOD),
            "--json", stdout=out,
        )  # fmt: skip
    assert error.value.returncode == 2
    data = json.loads(out.getvalue())
    assert data["grader"] == "rubric" and data["score"] > 0
    assert data["advisory"] is True
    assert any("offline rubric grade used" in w for w in data["warnings"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--question", "no-such-question", "--step", "architecture"], "no question"),
        (["--question", "Bad Slug!", "--step", "architecture"], "not a question slug"),
        (["--question", "chat-api-50qps", "--step", "design"], "has no step 'design'"),
        (
            ["--question", "chat-api-50qps", "--step", "tradeoffs", "--follow-up", "nope"],
            "has no follow-up 'nope'",
        ),
        (
            ["--question", "chat-api-50qps", "--step", "architecture", "--follow-up", "nope"],
            "has no follow-up 'nope'",
        ),
    ],
)
def test_unknown_question_step_or_follow_up_is_a_usage_error(answer_file, args, message):
    with pytest.raises(CommandError, match=message) as error:
        call_command("grade", *args, "--answer-file", answer_file(GOOD), "--json")
    assert error.value.returncode == 2


def test_an_unreadable_file_is_a_usage_error(tmp_path):
    with pytest.raises(CommandError, match="cannot read answer file") as error:
        call_command("grade", *ARCH.split(), "--answer-file", str(tmp_path / "x.txt"), "--json")
    assert error.value.returncode == 2


def test_invalid_utf8_is_a_usage_error(answer_file):
    with pytest.raises(CommandError, match="not valid UTF-8") as error:
        call_command("grade", *ARCH.split(), "--answer-file", answer_file(b"caf\xe9"), "--json")
    assert error.value.returncode == 2


def test_errors_are_one_line_on_stderr_with_exit_status_2(answer_file):
    proc = subprocess.run(
        [sys.executable, "manage.py", "grade", "--question", "no-such-question",
         "--step", "architecture", "--answer-file", answer_file(GOOD), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "no-such-question" in proc.stderr


def test_the_command_runs_end_to_end_and_prints_one_json_line(answer_file):
    proc = subprocess.run(
        [sys.executable, "manage.py", "grade", "--question", "long-context-rag",
         "--step", "bottlenecks", "--answer-file", answer_file(GOOD), "--grader", "rubric",
         "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert list(json.loads(proc.stdout)) == CONTRACT_KEYS
