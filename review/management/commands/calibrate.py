"""Measure a grader against a question's instructor labels, per rubric point.

    python manage.py calibrate --question SLUG [--step KEY] [--grader rubric|llm]
                               [--labels FILE] [--json]

Re-grades every labelled answer with the current grader and compares its verdicts with the
instructor's. With --json it prints exactly one JSON object (a contract used by outside
checks): {"question", "step", "grader", "model", "prompt_version", "n", "kappa", "agreement",
"points": [{"id", "n", "kappa", "agreement", "confusion"}]}; confusion rows are the
instructor's verdict and columns the grader's, in the order hit, partial, miss. kappa is null
where it is undefined (every verdict the same on both sides), with the reason on stderr.
Without --step every free-text step with labels is measured and the figures pooled ("step":
null; rubric point ids are unique within a question).

--labels FILE (JSON Lines, one {"question", "step", "answer", "labels"} a line) imports that
set into the question's calibration set and measures on it; without it, the stored set is
used. Each measured step's figures are stored for the calibration page. Bad input is one line
per problem on stderr and exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from grading import GraderConfig
from grading.calibration import LabelledAnswer, point_agreement, read_labels
from grading.health import probe_model
from grading.types import VERDICTS
from questions.models import Question
from review.calibration_sets import (
    CalibrationError,
    Measured,
    calibration_measure,
    labels_check,
    labels_export,
    labels_import,
)
from review.services import CALIBRATED_STEPS

USAGE_ERROR = 2
MAX_LABELS_BYTES = 20 * 1024 * 1024


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=USAGE_ERROR)


def question_loaded(slug: str) -> Question:
    question = Question.objects.filter(slug=slug).first()
    if question is None or question.current_revision is None:
        raise _fail(f"question {slug!r} is not loaded: run `manage.py load_content` first")
    return question


def add_question_arguments(parser: CommandParser) -> None:
    """--question and --step, as every command over a calibration set takes them."""
    parser.add_argument("--question", required=True, help="question slug")
    parser.add_argument("--step", default=None, help=f"step key ({', '.join(CALIBRATED_STEPS)})")


def calibrated_step(step_key: str | None) -> str | None:
    """`step_key` as given (None: every step); a usage error naming the steps that have a
    calibration set when it is not one of them."""
    if step_key is not None and step_key not in CALIBRATED_STEPS:
        raise _fail(
            f"step {step_key!r} has no calibration set (free-text steps: "
            f"{', '.join(CALIBRATED_STEPS)})"
        )
    return step_key


def read_labels_file(path: str) -> list[LabelledAnswer]:
    try:
        raw = Path(path).read_bytes()[: MAX_LABELS_BYTES + 1]
    except OSError as exc:
        raise _fail(f"cannot read labels file {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_LABELS_BYTES:
        raise _fail(f"labels file {path} is larger than {MAX_LABELS_BYTES} bytes")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _fail(f"labels file {path} is not valid UTF-8 (byte {exc.start})") from None
    entries, problems = read_labels(text)
    if problems:
        raise _fail("\n".join(f"{path}: {p}" for p in problems))
    if not entries:
        raise _fail(f"labels file {path} has no labelled answers")
    return entries


def pooled(runs: list[Measured]) -> dict[str, Any]:
    """One JSON object for several steps: every step's points, kappa and agreement pooled over
    all their (instructor, grader) verdicts (read back from the confusion matrices)."""
    points = [p for run in runs for p in run.agreement.points]
    pairs = [
        (human, got)
        for p in points
        for i, human in enumerate(VERDICTS)
        for j, got in enumerate(VERDICTS)
        for _ in range(p.confusion[i][j])
    ]
    overall = point_agreement("overall", pairs)
    return {
        "question": runs[0].question,
        "step": None,
        "grader": runs[0].grader,
        "model": runs[0].model,
        # Each step has its own prompt version (its rubric is part of the prompt).
        "prompt_version": " ".join(run.prompt_version for run in runs),
        "n": sum(run.agreement.n for run in runs),
        "kappa": overall.kappa,
        "agreement": overall.agreement,
        "points": [p.to_dict() for p in points],
    }


class Command(BaseCommand):
    help = "Measure a grader's agreement with instructor labels (Cohen's kappa per point)."

    def add_arguments(self, parser: CommandParser) -> None:
        add_question_arguments(parser)
        parser.add_argument("--grader", choices=["rubric", "llm"], default="rubric")
        parser.add_argument("--labels", default=None, help="a labels file (JSON Lines)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        question = question_loaded(options["question"])
        step_key = calibrated_step(options["step"])
        if options["grader"] == "llm":
            try:
                config = GraderConfig.from_settings(settings.GRADER)
            except ValueError as exc:
                raise _fail(str(exc)) from None
            up, why = probe_model(config) if config.configured else (True, "")
            if not up:
                # Measured now, every answer would fall back and the step's stored figures
                # would be replaced by an empty run.
                raise _fail(
                    f"--grader llm: the model at {config.endpoint} does not answer ({why}); "
                    "start it (make grader) or calibrate with --grader rubric"
                )
        if options["labels"]:
            entries = read_labels_file(options["labels"])
            problems = labels_check(question=question, entries=entries)
            if problems:
                raise _fail("\n".join(f"{options['labels']}: {p}" for p in problems))
            labels_import(question=question, entries=entries)
        else:
            entries = labels_export(question=question)
        steps = [step_key] if step_key else [k for k in CALIBRATED_STEPS]
        steps = [k for k in steps if any(e.step == k for e in entries)]
        if not steps:
            where = f"step {step_key} of " if step_key else ""
            raise _fail(
                f"no labelled answers for {where}{question.slug}: give --labels FILE or "
                "label answers in the review queue"
            )
        # A labels file may hold part of a step's stored set: its figures are printed, but
        # stored (and shown on the calibration page as the step's) only for the whole set.
        whole = {
            k: sum(e.step == k for e in entries)
            >= len(labels_export(question=question, step_key=k))
            for k in steps
        }
        try:
            runs = [
                calibration_measure(
                    question=question,
                    step_key=k,
                    grader=options["grader"],
                    entries=entries,
                    store=whole[k],
                )
                for k in steps
            ]
        except CalibrationError as exc:
            raise _fail(str(exc)) from None
        for k in steps:
            if not whole[k]:
                self.stderr.write(
                    f"note: {k}: measured the file's answers only, not the step's whole stored "
                    "set, so the calibration page keeps its figures (run without --labels)"
                )
        for run in runs:
            for warning in run.warnings:
                self.stderr.write(f"warning: {run.step}: {warning}")
        if options["json"]:
            data = runs[0].to_json() if step_key else pooled(runs)
            self.stdout.write(json.dumps(data))
            return
        for run in runs:
            self._print_human(run)

    def _print_human(self, run: Measured) -> None:
        figures = run.agreement

        def show(value: float | None) -> str:
            return "undefined" if value is None else f"{value:.2f}"

        self.stdout.write(
            f"{run.question} / {run.step}: {run.grader} grader "
            f"{run.model or ''} {run.prompt_version}".rstrip()
        )
        self.stdout.write(
            f"  n={figures.n}  kappa={show(figures.kappa)}  agreement={show(figures.agreement)}"
        )
        for point in figures.points:
            self.stdout.write(
                f"  {point.id:28} n={point.n:3}  kappa={show(point.kappa):9}  "
                f"agreement={show(point.agreement)}"
            )
