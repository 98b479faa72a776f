"""`manage.py calibrate --grader llm` against the real vLLM server.

Every other answer of the shipped calibration set of chat-api-50qps / architecture (six of
its twelve, each kind of answer) is re-graded by the model: the model's time is the stage's
cost, and the contract does not change with the set's size. The
tiny random model writes nonsense of the schema's shape, so its verdicts are mostly misses
(quotes it cannot back are refused) and its kappa is near zero or undefined: what must hold is
that the command answers with the contract, names the served model and the prompt version,
and that every kappa it reports is scikit-learn's `cohen_kappa_score` on the verdicts counted.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from grading import PROMPT_VERSION

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_LABELS = ROOT / "content" / "calibration" / "chat-api-50qps.jsonl"
VERDICTS = ["hit", "partial", "miss"]
MARK = "@@CALIBRATION@@"

# Measure in the app's own process (the command's code path, `calibration_measure`), and print
# the figures with the verdict pairs they were computed from.
MEASURE = """
import json
from review.calibration_sets import calibration_measure
from grading.calibration import read_labels
from questions.models import Question
entries, _ = read_labels(open({labels!r}, encoding="utf-8").read())
measured = calibration_measure(
    question=Question.objects.get(slug="chat-api-50qps"), step_key="architecture",
    grader="llm", entries=entries, store=False,
)
print({mark!r} + json.dumps({{"json": measured.to_json(), "pairs": measured.pairs,
                              "fallbacks": measured.fallbacks}}))
"""


@pytest.fixture(scope="module")
def labels(tmp_path_factory) -> Path:
    """The shipped labels less every other architecture answer: the other steps' lines stay,
    for `--step` to leave out."""
    lines = SHIPPED_LABELS.read_text(encoding="utf-8").splitlines()
    architecture = [line for line in lines if json.loads(line)["step"] == "architecture"]
    dropped = set(architecture[1::2])
    path = tmp_path_factory.mktemp("labels") / SHIPPED_LABELS.name
    path.write_text("\n".join(line for line in lines if line not in dropped) + "\n", "utf-8")
    return path


@pytest.fixture(scope="module")
def runs(vllm_grader_env, labels) -> dict[str, subprocess.CompletedProcess]:
    """The command and the in-process measurement, run side by side (two processes): each
    grades the set one answer at a time, so together they keep the server's batch busy."""
    code = MEASURE.format(labels=str(labels), mark=MARK)
    command = ("calibrate", "--question", "chat-api-50qps", "--step", "architecture",
               "--grader", "llm", "--labels", str(labels), "--json")  # fmt: skip
    procs = {
        name: subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env=vllm_grader_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, args in (("command", command), ("measure", ("shell", "-c", code)))
    }
    done = {}
    for name, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=900)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    return done


def manage(runs: dict[str, subprocess.CompletedProcess], name: str) -> subprocess.CompletedProcess:
    proc = runs[name]
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc


def same_kappa(reported: float | None, expected: float) -> bool:
    if math.isnan(expected):
        return reported is None
    return reported is not None and abs(reported - expected) < 1e-4


def test_calibrate_command_with_the_model_grader(runs, vllm_model_name, vllm_report):
    proc = manage(runs, "command")
    [line] = [line for line in proc.stdout.splitlines() if line.strip()]
    data = json.loads(line)
    assert set(data) == {
        "question", "step", "grader", "model", "prompt_version", "n", "kappa", "agreement",
        "points",
    }  # fmt: skip
    assert (data["grader"], data["model"]) == ("llm", vllm_model_name)
    assert data["prompt_version"].startswith(f"{PROMPT_VERSION}-")
    assert data["n"] > 0, f"the model graded none of the set:\n{proc.stderr[-2000:]}"
    # Each point's kappa is Cohen's on the (instructor, model) pairs its confusion counts.
    for point in data["points"]:
        pairs = [
            (VERDICTS[i], VERDICTS[j])
            for i in range(3)
            for j in range(3)
            for _ in range(point["confusion"][i][j])
        ]
        assert len(pairs) == point["n"]
        if pairs:
            expected = cohen_kappa_score(*zip(*pairs, strict=True), labels=VERDICTS)
            assert same_kappa(point["kappa"], expected), point
    vllm_report.append(
        f"calibrate llm chat-api-50qps/architecture: n={data['n']} kappa={data['kappa']} "
        f"agreement={data['agreement']} {proc.stderr.strip()[:300]}"
    )


def test_model_kappa_per_point_is_cohen_kappa_on_its_verdicts(runs, vllm_report):
    proc = manage(runs, "measure")
    [line] = [line for line in proc.stdout.splitlines() if line.startswith(MARK)]
    result = json.loads(line[len(MARK) :])
    data, pairs = result["json"], result["pairs"]
    assert data["n"] == len(pairs) > 0
    for point in data["points"]:
        labelled = [(labels[point["id"]], got.get(point["id"], "miss"))
                    for labels, got in pairs if point["id"] in labels]  # fmt: skip
        assert point["n"] == len(labelled)
        expected = cohen_kappa_score(
            [h for h, _ in labelled], [g for _, g in labelled], labels=VERDICTS
        )
        assert same_kappa(point["kappa"], expected), point
    vllm_report.append(
        f"calibrate (in process) llm: n={data['n']} fallbacks={result['fallbacks']} "
        f"kappa={data['kappa']}"
    )
