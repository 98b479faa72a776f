"""Run the tests written inside question files (their `tests:` key, content/README.md).

    python manage.py test_content [PATH] [--grader rubric|llm] [--json]

PATH is a content directory or one question file (default: the shipped content). With --json
it prints one object: {"questions", "tests", "failed", "failures": [{"file", "line", "test",
"expected", "got"}]}; otherwise one `file:line: test: expected ..., got ...` line per failure
and a summary. Exit status 1 when anything fails (a validation problem counts), 2 for a path
that does not exist or a model grader asked for but not configured.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from grading import GraderConfig
from grading.question_tests import GraderUnavailable, content_tests_run
from questions.management.content_path import ContentCommand, concepts_linkable, content_root

USAGE_ERROR = 2


class Command(ContentCommand):
    help = "Run the tests inside question files; exit status 1 when any fails."
    path_help = "content directory or one question file"

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--grader", choices=["rubric", "llm"], default="rubric")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, path: str | None = None, **options: Any) -> None:
        root = content_root(path)
        if not root.exists():
            raise CommandError(f"{root}:1: no such file or directory", returncode=USAGE_ERROR)
        config = None
        if options["grader"] == "llm":
            try:
                config = GraderConfig.from_settings(settings.GRADER)
            except ValueError as exc:
                raise CommandError(str(exc), returncode=USAGE_ERROR) from None
        try:
            report = content_tests_run(
                root,
                grader=options["grader"],
                config=config,
                known_concepts=concepts_linkable(root),
            )
        except GraderUnavailable as exc:
            raise CommandError(f"--grader llm: {exc}", returncode=USAGE_ERROR) from None
        data = report.as_dict()
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))
        else:
            for failure in report.failures:
                self.stdout.write(str(failure))
            self.stdout.write(
                f"{data['questions']} question(s), {data['tests']} test(s), "
                f"{data['failed']} failed ({options['grader']} grader)"
            )
        if data["failed"] or not data["questions"]:
            if not data["questions"]:
                self.stderr.write(f"{root}:1: no question files found")
            sys.exit(1)
