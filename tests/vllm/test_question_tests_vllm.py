"""A question's own tests (`tests:`) run through the model grader against the real vLLM CPU
server. The tiny model's weights are random, so its verdicts mean nothing: these tests assert
the plumbing (every answer test reaches the model, and its result names the model and the
prompt version, or says why the offline grade stood in), never the verdicts. They grade a copy
of one question that keeps one answer test per step and follow-up, one with a diagram (and
every napkin test): the plumbing is the same for each answer test of a kind, and the model's
time is the stage's cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grading import PROMPT_VERSION, GraderConfig
from grading.question_tests import question_tests_run
from questionbank import parse_file
from questionbank.files import question_spec

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "content" / "questions" / "chat-api-50qps.md"


@pytest.fixture(scope="module")
def question(tmp_path_factory) -> Path:
    """The shipped question with the first answer test of each step and follow-up kept, and
    the first that sends a diagram (a diagram reaches the model's prompt by its own path)."""
    cf = parse_file(SHIPPED)

    def kept(entries: list[dict]) -> list[dict]:
        graded = [e for e in entries if "expect" in e]
        firsts = graded[:1] + [e for e in graded if "diagram" in e][:1]
        return [e for e in entries if "expect" not in e or any(e is f for f in firsts)]

    tests = {key: kept(entries) for key, entries in cf.meta["tests"].items()}
    front = yaml.safe_dump({**cf.meta, "tests": tests}, sort_keys=False, allow_unicode=True)
    path = tmp_path_factory.mktemp("question") / SHIPPED.name
    path.write_text(f"---\n{front}---\n{cf.body}", encoding="utf-8")
    assert not parse_file(path).problems
    return path


@pytest.fixture(scope="module")
def test_content_command(vllm_server, vllm_model_name, question):
    """`manage.py test_content --grader llm`, started in the background as soon as a test of
    this module asks for it: it grades the same answer tests as the in-process run, one at a
    time, so the two side by side keep the server's batch busy."""
    env = dict(os.environ)
    env.pop("GRADER_API_KEY", None)
    env.update(GRADER_BASE_URL=vllm_server, GRADER_MODEL=vllm_model_name)
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "test_content", str(question), "--grader", "llm", "--json"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_answer_tests_go_through_the_real_model(
    vllm_server, vllm_model_name, vllm_report, test_content_command, question
):
    cf = parse_file(question)
    config = GraderConfig(base_url=vllm_server, model=vllm_model_name, timeout_s=180, max_retries=0)
    report = question_tests_run(cf, question_spec(cf), grader="llm", config=config)
    answers = [r for r in report.results if r.kind == "answer"]
    # Every answer test with human verdicts; one of stated wrong ideas alone is checked offline.
    assert len(answers) == sum(
        1 for entries in cf.meta["tests"].values() for t in entries if "expect" in t
    )
    by_model = [r for r in answers if r.grader == "llm"]
    for result in by_model:
        assert result.model == vllm_model_name
        assert result.prompt_version.startswith(f"{PROMPT_VERSION}-")
        assert result.verdicts and set(result.verdicts.values()) <= {"hit", "partial", "miss"}
    for result in answers:
        if result.grader != "llm":
            # A fallback is never silent: it says why and fails its test.
            assert result.fallback_reason
            assert result.failure and "offline grade stood in" in result.failure.got
    assert by_model, "no answer test was graded by the model"
    # Built-ins and napkin tests never need the model.
    assert {r.grader for r in report.results if r.kind != "answer"} == {"rubric", "checker"}
    vllm_report.append(
        f"question tests by the model: {len(by_model)}/{len(answers)} answer tests graded by "
        f"{vllm_model_name} ({PROMPT_VERSION}), {len(report.failures)} failed (random weights)"
    )


def test_test_content_command_with_the_llm_grader(test_content_command, vllm_model_name, question):
    try:
        stdout, stderr = test_content_command.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        test_content_command.kill()
        raise
    proc = subprocess.CompletedProcess(
        test_content_command.args, test_content_command.returncode, stdout, stderr
    )
    # 0 or 1 by what the random model said; 2 would mean the grader was not reached at all.
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["questions"] == 1 and data["tests"] > 0
    assert data["failed"] == len(data["failures"])
    for failure in data["failures"]:
        assert failure["file"] == str(question) and failure["line"] > 1
    # The output names the model and the prompt version that gave the answer tests' verdicts.
    # (A reply the random model garbles falls back to the offline grade, which says so.)
    models = {row["model"] for row in data["graded_by"] if row["grader"] == "llm"}
    assert models <= {vllm_model_name}
    assert sum(row["tests"] for row in data["graded_by"]) == data["tests"]
