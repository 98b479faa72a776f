"""Grade one answer file against one step of a shipped question.

    python manage.py grade --question SLUG --step KEY --answer-file FILE
                           [--grader rubric|llm|auto] [--follow-up ID] [--json]

A fenced ```mermaid block in the answer file is the step's architecture diagram, and the rest
of the file is the prose; both graders read both (the diagram only counts on a step that has
a diagram box: the architecture step, or one its question enables).

With --json it prints exactly one JSON object (a contract used by outside checks):
{"grader", "model", "score", "points": [{"id", "verdict", "evidence", "comment",
"evidence_source", "diagram_evidence"}], "misconceptions": [{"id", "evidence", "comment"}],
"warnings", "latency_ms", "advisory", "note"}. "misconceptions" lists the wrong ideas of the step
found in the answer, each with the candidate's words stating it.
Per point, "evidence_source" says whether the "diagram" or the "prose" gave the evidence (""
for none), and "diagram_evidence" lists the diagram's node labels and edge lines that did.
"advisory" is true when the offline keyword matcher answered (grader "rubric"): its verdicts
point at sentences, they do not decide, and "note" says so in one line ("" for the model).
Bad input (unknown question, step or follow-up, an unreadable or non-UTF-8 file, two ```mermaid
blocks, a diagram on a step without one, --grader llm with no GRADER_BASE_URL) is one line on
stderr and exit status 2. So is --grader llm when the model fails (an error, a reply that is
not a grade, a timeout): the offline grade is still printed (and its JSON), the line on stderr
says why the model did not grade. A diagram with a syntax error is graded without it, and a
warning says where the error is.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandError, CommandParser

from diagrams import DiagramError, split_mermaid_block
from grading import GraderConfig, GradeResult, grade
from grading.offline import ADVISORY_NOTE
from questionbank import (
    STEP_KEYS,
    ContentError,
    FollowUp,
    QuestionSpec,
    StepSpec,
    load_question_spec,
)

USAGE_ERROR = 2
MAX_ANSWER_BYTES = 1024 * 1024


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=USAGE_ERROR)


def read_answer_file(path: str) -> str:
    """The answer text from a file ("-" for stdin); CommandError(exit 2) when unusable."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(MAX_ANSWER_BYTES + 1)
        else:
            with Path(path).open("rb") as handle:
                raw = handle.read(MAX_ANSWER_BYTES + 1)
    except OSError as exc:
        raise _fail(f"cannot read answer file {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_ANSWER_BYTES:
        raise _fail(f"answer file {path} is larger than {MAX_ANSWER_BYTES} bytes")
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _fail(f"answer file {path} is not valid UTF-8 (byte {exc.start})") from None


def step_to_grade(spec: QuestionSpec, step_key: str, follow_up: str | None) -> StepSpec | FollowUp:
    """A step (or one of its follow-ups) of a question; CommandError when absent."""
    try:
        step = spec.step(step_key)
    except LookupError:
        raise _fail(
            f"question {spec.slug} has no step {step_key!r} (steps: {', '.join(STEP_KEYS)})"
        ) from None
    if not follow_up:
        return step
    try:
        return step.follow_up(follow_up)
    except LookupError:
        known = ", ".join(f.id for f in step.follow_ups) or "none"
        raise _fail(
            f"step {step_key} of {spec.slug} has no follow-up {follow_up!r} (follow-ups: {known})"
        ) from None


def answer_and_diagram(text: str, step: StepSpec | FollowUp) -> tuple[str, str]:
    """The prose and the diagram of an answer file (its ```mermaid block, "" when none);
    CommandError(exit 2) for two blocks or a diagram on a part without a diagram box."""
    try:
        prose, diagram = split_mermaid_block(text)
    except DiagramError as exc:
        raise _fail(f"answer file: {exc}") from None
    if diagram.strip() and not getattr(step, "has_diagram", False):
        where = step.id if isinstance(step, FollowUp) else step.key
        raise _fail(f"{where} has no diagram: grade a ```mermaid block on the architecture step")
    return prose, diagram


def command_json(result: GradeResult) -> dict[str, Any]:
    """The command's stable JSON fields, taken from a GradeResult."""
    advisory = result.grader == "rubric"
    return {
        "grader": result.grader,
        "model": result.model,
        "score": result.score,
        "points": [p.to_dict() for p in result.points],
        "misconceptions": [m.to_dict() for m in result.misconceptions],
        "warnings": result.warnings,
        "latency_ms": result.latency_ms,
        "advisory": advisory,
        "note": ADVISORY_NOTE if advisory else "",
    }


class Command(BaseCommand):
    help = "Grade an answer file against a question's step with the rubric or the model grader."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--question", required=True, help="question slug")
        parser.add_argument("--step", required=True, help=f"step key ({', '.join(STEP_KEYS)})")
        parser.add_argument("--answer-file", required=True, help="UTF-8 text file, or - for stdin")
        parser.add_argument("--grader", choices=["rubric", "llm", "auto"], default="auto")
        parser.add_argument("--follow-up", default=None, help="a tradeoffs follow-up id")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        slug, step_key = options["question"], options["step"]
        try:
            spec = load_question_spec(slug)
        except ContentError as exc:
            raise _fail(str(exc)) from None
        step = step_to_grade(spec, step_key, options["follow_up"])
        answer, diagram = answer_and_diagram(read_answer_file(options["answer_file"]), step)
        try:
            config = GraderConfig.from_settings(settings.GRADER)
        except ValueError as exc:
            raise _fail(str(exc)) from None
        if options["grader"] == "llm" and not config.configured:
            # Asked for the model by name: an offline grade with exit 0 would pass for its grade.
            raise _fail(
                "--grader llm: the model grader is not configured (set GRADER_BASE_URL to an "
                "OpenAI-compatible endpoint); grade with --grader rubric instead"
            )

        context = {
            "slug": slug,
            "title": spec.title,
            "brief": spec.brief.as_dict(),
            "step_key": step_key,
        }
        if options["follow_up"]:
            context["follow_up"] = options["follow_up"]
        result = grade(
            step,
            answer,
            mode=options["grader"],
            context=context,
            config=config,
            cache=cache,
            diagram=diagram,
        )

        if options["json"]:
            self.stdout.write(json.dumps(command_json(result)))
        else:
            self._print_human(result)
        if options["grader"] == "llm" and result.grader != "llm":
            # Asked for the model by name and it failed: the offline grade above (kept, with
            # its warnings) must not pass for the model's, so the status says it is not.
            reason = result.fallback_reason or "no reason given"
            raise _fail(
                f"--grader llm: the model did not grade ({reason}); the offline rubric grade "
                "is printed instead"
            )

    def _print_human(self, result: GradeResult) -> None:
        model = f" ({result.model})" if result.model else ""
        self.stdout.write(f"{result.grader} grader{model}: score {result.score:.2f}")
        if result.grader == "rubric":
            self.stdout.write(f"  {ADVISORY_NOTE}")
        for point in result.points:
            self.stdout.write(f"  [{point.verdict:7}] {point.id}: {point.comment}")
            if point.evidence_source == "diagram":
                for line in point.diagram_evidence:
                    self.stdout.write(f"            diagram: {line}")
            elif point.evidence:
                self.stdout.write(f"            \u201c{point.evidence}\u201d")
        for found in result.misconceptions:
            self.stdout.write(f"  [wrong  ] {found.id}: {found.comment}")
            self.stdout.write(f"            \u201c{found.evidence}\u201d")
        for warning in result.warnings:
            self.stdout.write(f"  warning: {warning}")
