"""`python manage.py drill`: one napkin drill, reproducible from its seed, for scripts.

    drill --list --json                          {"kinds": [{"kind", "title", "concept",
                                                  "available", "why_unavailable"?}]}
    drill --kind KIND --seed N --json            the drill: {"kind", "seed", "title",
                                                  "question", "givens": [{"name", "label",
                                                  "value"}], "expected", "unit", "setting"}
    drill --kind KIND --seed N --answer "EXPR" --json
                                                 the same plus "verdict", "hint", "value",
                                                  "answer_unit" and "mistake" (or null)

A refused input (unknown kind, bad seed, an answer that does not evaluate) prints
{"error": "..."} on stdout with --json, a sentence on stderr without, and exits with status 2;
the sentence names the option at fault (planner/management/scripting.py).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from drills import engine
from planner.engine import NapkinError
from planner.management.scripting import ScriptedCommand


class Command(ScriptedCommand):
    help = "Draw a napkin drill from its kind and seed; check an answer to it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--list", action="store_true", help="name the drill kinds")
        parser.add_argument("--kind", help="a drill kind (see --list)")
        parser.add_argument("--seed", help="a whole number: the same seed, the same drill")
        parser.add_argument("--answer", help='an answer to check, e.g. "56 KiB"')
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        as_json = options["json"]
        if options["list"]:
            kinds = []
            for k in engine.drill_kinds():
                entry = {"kind": k.key, "title": k.title, "concept": k.concept,
                         "available": k.available}  # fmt: skip
                if not k.available:
                    entry["why_unavailable"] = k.why_unavailable
                kinds.append(entry)
            if as_json:
                self.stdout.write(json.dumps({"kinds": kinds}, ensure_ascii=False))
            else:
                for k in kinds:
                    note = "" if k["available"] else f" (not yet: {k['why_unavailable']})"
                    self.stdout.write(f"{k['kind']}: {k['title']}{note}")
            return
        if not options["kind"] or options["seed"] is None:
            raise CommandError("Give --kind KIND and --seed N, or --list.")
        # The engine refuses the kind before the seed; asked apart, each names its option.
        try:
            engine.drill_kind(options["kind"])
        except engine.DrillError as error:
            raise CommandError(f"--kind: {error}") from None
        try:
            seed = int(options["seed"])
        except ValueError:
            raise CommandError(
                f"--seed: A seed is a whole number from 0 to {engine.MAX_SEED}."
            ) from None
        try:
            drill = engine.drill_generate(options["kind"], seed)
        except engine.DrillError as error:
            raise CommandError(f"--seed: {error}") from None
        out = drill.as_json()
        if options["answer"] is not None:
            try:
                result = engine.drill_check(drill, options["answer"])
            except NapkinError as error:
                raise CommandError(f"--answer could not be read: {error.message}") from None
            out |= {
                "answer": options["answer"],
                "verdict": result.verdict,
                "hint": result.hint,
                "value": result.value,
                "answer_unit": result.unit,
                "mistake": result.mistake,
                "solution": list(drill.solution),
            }
        if as_json:
            self.stdout.write(json.dumps(out, ensure_ascii=False))
            return
        self.stdout.write(drill.question)
        for g in drill.givens:
            self.stdout.write(f"  {g.name} = {g.value}   ({g.label})")
        self.stdout.write(f"expected: {drill.expected_text}")
        if "verdict" in out:
            self.stdout.write(f"{out['verdict']}: {out['hint']}".rstrip(": "))
