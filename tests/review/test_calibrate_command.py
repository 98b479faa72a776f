"""`manage.py calibrate --json`: its kappa per point is scikit-learn's `cohen_kappa_score` on
the same verdicts, computed here independently; labels files in and out; bad input refused."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from sklearn.metrics import cohen_kappa_score

from grading import grade
from grading.calibration import LabelledAnswer
from grading.fake_server import (
    FakeChatServer,
    ScriptedReply,
    answer_message,
    grade_content,
    response_ids,
)
from grading.types import VERDICTS
from questions.models import Question
from review.calibration_sets import CalibrationError, calibration_measure
from review.models import CalibrationLabel, CalibrationRun
from review.services import CALIBRATED_STEPS

SLUG = "chat-api-50qps"

# Answers to the architecture step, labelled per point by reading them as an interviewer would.
ANSWERS = [
    (
        "An API gateway in front terminates TLS, authenticates callers and applies rate limits. "
        "Ten vLLM replicas each expose /health and /metrics. Prefix caching is on because every "
        "chat shares the system prompt, so it is prefilled once. The router is prefix-aware "
        "since each replica holds its own KV cache. We autoscale on vllm:num_requests_waiting "
        "across the fleet rather than GPU utilisation.",
        {
            "arch-gateway": "hit",
            "arch-replicas": "partial",
            "arch-prefix-caching": "hit",
            "arch-prefix-router": "hit",
            "arch-autoscale-queue": "hit",
            "arch-observability": "miss",
        },
    ),
    (
        "Put a load balancer in front of several vLLM servers with prefix caching turned on.",
        {
            "arch-gateway": "miss",
            "arch-replicas": "partial",
            "arch-prefix-caching": "partial",
            "arch-prefix-router": "miss",
            "arch-autoscale-queue": "miss",
            "arch-observability": "miss",
        },
    ),
    (
        "Kubernetes pods behind round robin, scaled when GPU utilisation passes 80%.",
        {
            "arch-gateway": "miss",
            "arch-replicas": "miss",
            "arch-prefix-caching": "miss",
            "arch-prefix-router": "miss",
            "arch-autoscale-queue": "miss",
            "arch-observability": "miss",
        },
    ),
    (
        "Traffic passes a front tier that checks who calls and how often. Servers keep the "
        "processed opening instructions in memory so new chats start fast. Prometheus scrapes "
        "metrics into Grafana dashboards with alerts, and OpenTelemetry traces go to Jaeger.",
        {
            "arch-gateway": "hit",
            "arch-replicas": "miss",
            "arch-prefix-caching": "partial",
            "arch-prefix-router": "miss",
            "arch-autoscale-queue": "miss",
            "arch-observability": "hit",
        },
    ),
]


def write_labels(tmp_path, answers=ANSWERS, step="architecture"):
    path = tmp_path / "labels.jsonl"
    lines = [
        json.dumps({"question": SLUG, "step": step, "answer": text, "labels": labels})
        for text, labels in answers
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def calibrate(**options):
    out, err = io.StringIO(), io.StringIO()
    call_command("calibrate", stdout=out, stderr=err, **options)
    return json.loads(out.getvalue()), err.getvalue()


def test_kappa_per_point_is_cohen_kappa_on_the_same_verdicts(content_loaded, tmp_path):
    data, _ = calibrate(
        question=SLUG,
        step="architecture",
        grader="rubric",
        labels=str(write_labels(tmp_path)),
        json=True,
    )
    assert set(data) == {
        "question",
        "step",
        "grader",
        "model",
        "prompt_version",
        "n",
        "kappa",
        "agreement",
        "points",
    }
    assert (data["question"], data["step"], data["grader"], data["n"]) == (
        SLUG,
        "architecture",
        "rubric",
        len(ANSWERS),
    )
    assert re.match(r"rubric-v\d+-", data["prompt_version"])
    step = Question.objects.get(slug=SLUG).current_revision.question_spec.step("architecture")
    graded = [
        {v.id: v.verdict for v in grade(step, text, mode="rubric").points} for text, _ in ANSWERS
    ]
    by_id = {p["id"]: p for p in data["points"]}
    assert set(by_id) == {p.id for p in step.rubric}
    human_all, grader_all = [], []
    for point_id in ANSWERS[0][1]:
        human = [labels[point_id] for _, labels in ANSWERS]
        got = [g[point_id] for g in graded]
        human_all += human
        grader_all += got
        expected = cohen_kappa_score(human, got, labels=list(VERDICTS))
        point = by_id[point_id]
        assert point["n"] == len(ANSWERS)
        if expected != expected:  # nan: both sides gave one verdict throughout
            assert point["kappa"] is None
        else:
            assert point["kappa"] == pytest.approx(expected, abs=1e-4)
        assert point["agreement"] == pytest.approx(
            sum(h == g for h, g in zip(human, got, strict=True)) / len(human), abs=1e-4
        )
        assert sum(map(sum, point["confusion"])) == len(ANSWERS)
    assert data["kappa"] == pytest.approx(
        cohen_kappa_score(human_all, grader_all, labels=list(VERDICTS)), abs=1e-4
    )
    # Points nobody labelled on this step have no pairs, and no kappa.
    assert by_id["arch-drain-cold-start"]["n"] == 0
    assert by_id["arch-drain-cold-start"]["kappa"] is None


def test_kappa_is_null_with_a_warning_when_every_verdict_is_the_same(content_loaded, tmp_path):
    off_topic = [
        (
            "My favourite pasta is carbonara, made off the heat so the eggs stay silky.",
            {"arch-gateway": "miss"},
        ),
        (
            "The weather was lovely at the coast this weekend and the sea was calm.",
            {"arch-gateway": "miss"},
        ),
    ]
    data, err = calibrate(
        question=SLUG,
        step="architecture",
        labels=str(write_labels(tmp_path, off_topic)),
        json=True,
    )
    gateway = next(p for p in data["points"] if p["id"] == "arch-gateway")
    assert gateway["kappa"] is None and gateway["agreement"] == 1.0
    assert data["kappa"] is None
    assert "kappa is undefined" in err and "arch-gateway" in err


def test_the_labels_join_the_set_and_the_run_is_stored(content_loaded, tmp_path):
    path = write_labels(tmp_path)
    calibrate(question=SLUG, step="architecture", labels=str(path), json=True)
    calibrate(question=SLUG, step="architecture", labels=str(path), json=True)  # no duplicates
    assert CalibrationLabel.objects.filter(question__slug=SLUG).count() == len(ANSWERS)
    run = CalibrationRun.objects.get(question__slug=SLUG, step_key="architecture", grader="rubric")
    assert run.n == len(ANSWERS)
    # Without --labels the stored set is measured, with the same figures.
    again, _ = calibrate(question=SLUG, step="architecture", json=True)
    assert again["kappa"] == run.kappa


def test_a_file_with_part_of_the_set_is_measured_but_not_stored_as_the_steps(
    content_loaded, tmp_path
):
    calibrate(question=SLUG, step="architecture", labels=str(write_labels(tmp_path)), json=True)
    stored = CalibrationRun.objects.get(question__slug=SLUG, step_key="architecture")
    part = write_labels(tmp_path, answers=ANSWERS[:2])
    figures, err = calibrate(question=SLUG, step="architecture", labels=str(part), json=True)
    assert figures["n"] == 2
    assert "measured the file's answers only" in err
    runs = CalibrationRun.objects.filter(question__slug=SLUG, step_key="architecture")
    assert list(runs) == [stored] and stored.n == len(ANSWERS)


def test_export_then_import_is_a_round_trip(content_loaded, tmp_path):
    calibrate(question=SLUG, step="architecture", labels=str(write_labels(tmp_path)), json=True)
    exported = tmp_path / "out.jsonl"
    call_command("export_labels", question=SLUG, output=str(exported), stderr=io.StringIO())
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert {(e["answer"], json.dumps(e["labels"], sort_keys=True)) for e in lines} == {
        (text, json.dumps(labels, sort_keys=True)) for text, labels in ANSWERS
    }
    CalibrationLabel.objects.all().delete()
    data, _ = calibrate(question=SLUG, labels=str(exported), json=True)
    assert data["step"] is None and data["n"] == len(ANSWERS)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON"),
        ('{"question": "chat-api-50qps", "step": "architecture", "answer": "x"}', "missing labels"),
        (
            '{"question": "chat-api-50qps", "step": "architecture", "answer": "x", '
            '"labels": {"arch-gateway": "yes"}}',
            "hit, partial or miss",
        ),
        (
            '{"question": "chat-api-50qps", "step": "architecture", "answer": "x", '
            '"labels": {"no-such-point": "hit"}}',
            "no rubric point no-such-point",
        ),
        (
            '{"question": "chat-api-50qps", "step": "estimate", "answer": "x", '
            '"labels": {"est-fleet": "hit"}}',
            "no calibration set",
        ),
    ],
)
def test_a_bad_labels_file_is_refused_with_its_line(content_loaded, tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as raised:
        calibrate(question=SLUG, labels=str(path), json=True)
    assert message in str(raised.value) and "line 1" in str(raised.value)
    assert raised.value.returncode == 2
    assert not CalibrationLabel.objects.exists()


def test_an_unknown_question_or_step_is_refused(content_loaded):
    with pytest.raises(CommandError, match="not loaded"):
        calibrate(question="no-such-question", json=True)
    with pytest.raises(CommandError, match="no calibration set"):
        calibrate(question=SLUG, step="estimate", json=True)
    with pytest.raises(CommandError, match="no labelled answers"):
        calibrate(question=SLUG, step="clarify", json=True)


def test_export_refuses_a_step_without_a_set_and_names_the_steps_that_have_one(content_loaded):
    with pytest.raises(CommandError) as raised:
        call_command("export_labels", question=SLUG, step="estimate", stdout=io.StringIO())
    assert "no calibration set" in str(raised.value)
    assert all(key in str(raised.value) for key in CALIBRATED_STEPS)
    assert raised.value.returncode == 2


def test_the_model_grades_several_labelled_answers_at_once_and_keeps_each_ones_labels(
    content_loaded, settings
):
    """`--grader llm` sends the labelled answers up to GRADER_MAX_INFLIGHT at a time; the
    server fails the one that names Prometheus, and exactly that answer is left out."""

    def failing_prometheus(request: dict) -> ScriptedReply:
        if "Prometheus" in answer_message(request):
            return ScriptedReply(status=500, error_body={"error": "scripted"}, delay_s=0.2)
        points = [
            {"id": i, "evidence": "", "verdict": "miss", "comment": ""}
            for i in response_ids(request)
        ]
        return ScriptedReply(content=grade_content(points), delay_s=0.2)

    entries = [LabelledAnswer(SLUG, "architecture", text, labels) for text, labels in ANSWERS]
    with FakeChatServer(failing_prometheus) as server:
        settings.GRADER = {
            **settings.GRADER,
            "GRADER_BASE_URL": server.base_url,
            "GRADER_MAX_RETRIES": "0",
            "GRADER_MAX_INFLIGHT": "2",
        }
        measured = calibration_measure(
            question=Question.objects.get(slug=SLUG),
            step_key="architecture",
            grader="llm",
            entries=entries,
            store=False,
        )
    assert server.max_concurrent == 2
    assert measured.fallbacks == 1
    kept = [labels for text, labels in ANSWERS if "Prometheus" not in text]
    assert [human for human, _ in measured.pairs] == kept


def test_a_model_that_grades_nothing_stores_no_run(content_loaded, settings):
    """A server that fails every answer mid-run leaves the step's stored figures as they were."""
    entries = [LabelledAnswer(SLUG, "architecture", text, labels) for text, labels in ANSWERS]
    with FakeChatServer(lambda request: ScriptedReply(status=500)) as server:
        settings.GRADER = {
            **settings.GRADER,
            "GRADER_BASE_URL": server.base_url,
            "GRADER_MAX_RETRIES": "0",
        }
        with pytest.raises(CalibrationError, match="graded none of the"):
            calibration_measure(
                question=Question.objects.get(slug=SLUG),
                step_key="architecture",
                grader="llm",
                entries=entries,
            )
    assert not CalibrationRun.objects.filter(grader="llm").exists()


def test_labels_of_an_answer_reviewed_on_an_older_revision_still_export_and_calibrate(
    content_loaded, tmp_path, instructor
):
    """An instructor reviews an answer made before the step's gateway point was rewritten
    (its id renamed): the exported labels file is one `calibrate --labels` reads, with only
    the current rubric's points in it."""
    from authoring.services import question_publish
    from review.services import review_store

    from .conftest import make_submission

    question = Question.objects.get(slug=SLUG)
    old = question.current_revision
    old_step = old.question_spec.step("architecture")
    submission = make_submission(user=instructor, text=ANSWERS[0][0])
    question_publish(slug=SLUG, text=old.source_text.replace("arch-gateway", "arch-front-door"))
    review_store(
        submission=submission,
        reviewer=instructor,
        labels={p.id: "hit" for p in old_step.rubric},
    )
    exported = tmp_path / "out.jsonl"
    call_command("export_labels", question=SLUG, output=str(exported), stderr=io.StringIO())
    (line,) = [json.loads(line) for line in exported.read_text().splitlines()]
    assert "arch-gateway" not in line["labels"]
    assert line["labels"]["arch-replicas"] == "hit"

    data, _ = calibrate(question=SLUG, step="architecture", labels=str(exported), json=True)
    assert data["n"] == 1
