"""`manage.py napkin`: evaluate napkin math, in batches, or check an answer to a question.

napkin "EXPR" [--to UNIT] --json      one JSON object; exit 2 on an error
napkin --batch FILE --json            one JSON object per line, each with elapsed_ms; the
                                      lines form one worksheet (`W = 15.2 GB`, then `W / bw`)
napkin --check SLUG QUANTITY_ID "EXPR" --json [--reveal]
                                      {verdict, value, unit, hint, expected (with --reveal),
                                      mistake (the kind of a known mistake, when it has one)}
napkin --solve SLUG QUANTITY_ID GIVEN "TARGET" --json
                                      the GIVEN that makes the quantity equal TARGET, e.g.
                                      --solve chat-api-50qps n_inst qps_peak "10": what peak
                                      load do 10 instances sustain?

Bad input exits with status 2: with --json one JSON object with "error" on stdout (an
expression's also has "input" and "position"), without it the error on stderr (under the
expression, a caret at the position). planner/management/scripting.py has the contract.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from planner.engine import (
    FormulaError,
    NapkinError,
    Quantity,
    check_quantity,
    evaluate_expression,
    givens_from_estimate,
    solve_for,
)
from planner.engine.parser import parse_units
from planner.management.scripting import USAGE_ERROR, ScriptedCommand
from planner.questions import (
    QuestionFileError,
    estimate_step,
    find_quantity,
    given_labels,
    question_path,
    read_front_matter,
)

MAX_BATCH_BYTES = 5 * 1024 * 1024


class Command(ScriptedCommand):
    help = "Evaluate napkin-math expressions, or check an answer to a question's quantity."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("expr", nargs="?", help='an expression, e.g. "W / bw in ms"')
        parser.add_argument("--to", dest="to_unit", help="show the result in this unit")
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument("--batch", metavar="FILE", help="one expression per line")
        parser.add_argument(
            "--check", nargs=2, metavar=("SLUG", "QUANTITY_ID"), help="judge EXPR as an answer"
        )
        parser.add_argument("--reveal", action="store_true", help="include the expected value")
        parser.add_argument(
            "--solve",
            nargs=3,
            metavar=("SLUG", "QUANTITY_ID", "GIVEN"),
            help="solve the quantity's formula = EXPR for one of the question's givens",
        )
        parser.add_argument(
            "--content-dir", default=None, help="folder holding questions/ (default: content/)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        as_json = options["json"]
        if options["to_unit"] is not None:
            # Checked on its own: evaluated with an expression, its error would point a caret
            # into the expression.
            try:
                parse_units(options["to_unit"])
            except NapkinError as error:
                raise CommandError(f"--to: {error.message}") from None
        if options["batch"]:
            if options["expr"] is not None or options["check"] or options["solve"]:
                raise CommandError(
                    "--batch reads its expressions from FILE: give no EXPR, --check or --solve."
                )
            self.batch(Path(options["batch"]), options["to_unit"], as_json)
            return
        expr = options["expr"]
        if expr is None:
            raise CommandError('Give an expression, e.g. napkin "15.2 GB / (0.7 * 1008 GB/s)".')
        if options["solve"]:
            content_dir = Path(options["content_dir"] or settings.CONTENT_DIR)
            self.solve(content_dir, *options["solve"], expr, options["to_unit"], as_json)
            return
        if options["check"]:
            content_dir = Path(options["content_dir"] or settings.CONTENT_DIR)
            self.check_answer(content_dir, *options["check"], expr, options["reveal"], as_json)
            return
        result = evaluate_expression(expr, to_unit=options["to_unit"])
        if not result.ok and options["to_unit"] is not None and evaluate_expression(expr).ok:
            # The expression is sound: its value does not convert to the unit --to asks for.
            raise CommandError(f"--to: {result.error}")
        if as_json:
            self.stdout.write(json.dumps(result.as_json(), ensure_ascii=False))
        elif result.ok:
            self.stdout.write(result.display)
        else:
            self.stderr.write(_error_text(expr, result.error, result.position))
        if not result.ok:
            sys.exit(USAGE_ERROR)

    def batch(self, path: Path, to_unit: str | None, as_json: bool) -> None:
        try:
            if path.stat().st_size > MAX_BATCH_BYTES:
                raise CommandError(f"--batch: {path} is larger than {MAX_BATCH_BYTES} bytes.")
            text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
        except OSError as error:
            raise CommandError(f"--batch: Cannot read {path}: {error.strerror}.") from None
        except UnicodeDecodeError as error:
            raise CommandError(
                f"--batch: {path} is not UTF-8 text (byte {error.start}): give one expression "
                "per line."
            ) from None
        lines = text.splitlines()
        if not any(line.strip() for line in lines):
            raise CommandError(f"--batch: {path} has no expressions: give one expression per line.")
        scope: dict[str, Quantity] = {}  # names defined by earlier lines, as on the page
        for line in lines:
            started = time.perf_counter()
            result = evaluate_expression(line, env=scope, to_unit=to_unit)
            if result.name:
                if result.ok and result.quantity is not None:
                    scope[result.name] = result.quantity
                else:
                    scope.pop(result.name, None)
            out = result.as_json()
            out["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 3)
            if as_json:
                self.stdout.write(json.dumps(out, ensure_ascii=False))
            elif result.ok:
                self.stdout.write(result.display)
            else:
                self.stdout.write(_error_text(line, result.error, result.position))

    def solve(
        self, content_dir: Path, slug: str, quantity_id: str, unknown: str, target: str,
        to_unit: str | None, as_json: bool,
    ) -> None:  # fmt: skip
        try:
            estimate = estimate_step(read_front_matter(question_path(slug, content_dir)))
            quantity = find_quantity(estimate, quantity_id)
            givens = givens_from_estimate(estimate, upto=quantity_id)
        except QuestionFileError as error:
            raise CommandError(f"--solve: {error}") from None
        formula = str(quantity["formula"])
        if quantity.get("rounding"):
            formula = f"{quantity['rounding']}({formula})"
        result = solve_for(formula, unknown, target, givens, to_unit=to_unit)
        if as_json:
            self.stdout.write(json.dumps({**result.as_json(), "unknown": unknown}))
        elif result.ok:
            self.stdout.write(f"{unknown} = {result.display}")
        else:
            self.stderr.write(result.error or "")
        if not result.ok:
            sys.exit(USAGE_ERROR)

    def check_answer(
        self, content_dir: Path, slug: str, quantity_id: str, expr: str, reveal: bool, as_json: bool
    ) -> None:
        try:
            estimate = estimate_step(read_front_matter(question_path(slug, content_dir)))
            quantity = find_quantity(estimate, quantity_id)
            givens = givens_from_estimate(estimate, upto=quantity_id)
            verdict = check_quantity(
                quantity, expr, givens, reveal=reveal, given_labels=given_labels(estimate)
            )
        except QuestionFileError as error:
            raise CommandError(f"--check: {error}") from None
        except FormulaError as error:
            raise CommandError(f"--check: {slug}: {error.message}") from None
        except NapkinError as error:
            if as_json:
                self.stdout.write(
                    json.dumps(
                        {"input": expr, "error": error.message, "position": error.position},
                        ensure_ascii=False,
                    )
                )
            else:
                self.stderr.write(_error_text(expr, error.message, error.position))
            sys.exit(USAGE_ERROR)
        if as_json:
            self.stdout.write(json.dumps(verdict.as_json(reveal=reveal), ensure_ascii=False))
        else:
            shown = "" if verdict.value is None else f"{verdict.value:g} {verdict.unit}".strip()
            hint = f" — {verdict.hint}" if verdict.hint else ""
            self.stdout.write(f"{verdict.verdict}: {shown}{hint}")
            if reveal:
                self.stdout.write(f"expected: {verdict.expected:g} {verdict.unit}".strip())


def _error_text(expr: str, message: str | None, position: int | None) -> str:
    """The expression, a caret under the position, and the message."""
    if position is None:
        return f"error: {message}"
    return f"{expr}\n{' ' * position}^\nerror: {message}"
