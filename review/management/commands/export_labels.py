"""Write a question's calibration set as a labels file (JSON Lines).

    python manage.py export_labels --question SLUG [--step KEY] [--output FILE]

One {"question", "step", "answer", "labels"} a line, the format `calibrate --labels` reads,
so a calibration set travels with the question's file (content/calibration/SLUG.jsonl).
Without --output the lines go to stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from review.calibration_sets import labels_export
from review.management.commands.calibrate import (
    _fail,
    add_question_arguments,
    calibrated_step,
    question_loaded,
)


class Command(BaseCommand):
    help = "Export a question's instructor labels as a labels file (JSON Lines)."

    def add_arguments(self, parser: CommandParser) -> None:
        add_question_arguments(parser)
        parser.add_argument("--output", default=None, help="file to write (default stdout)")

    def handle(self, *args: Any, **options: Any) -> None:
        question = question_loaded(options["question"])
        step_key = calibrated_step(options["step"])
        lines = [e.to_json() for e in labels_export(question=question, step_key=step_key)]
        text = "".join(f"{line}\n" for line in lines)
        if options["output"]:
            try:
                Path(options["output"]).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise _fail(f"cannot write {options['output']}: {exc.strerror or exc}") from None
            noun = "labelled answer" if len(lines) == 1 else "labelled answers"
            self.stderr.write(f"wrote {len(lines)} {noun} to {options['output']}")
        else:
            self.stdout.write(text, ending="")
