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
{"error": "..."} on stdout with --json, a sentence on stderr without, and exits with status 2.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from drills import engine
from planner.engine import NapkinError


class Command(BaseCommand):
    help = "Draw a napkin drill from its kind and seed; check an answer to it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--list", action="store_true", help="name the drill kinds")
        parser.add_argument("--kind", help="a drill kind (see --list)")
        parser.add_argument("--seed", help="a whole number: the same seed, the same drill")
        parser.add_argument("--answer", help='an answer to check, e.g. "56 KiB"')
        parser.add_argument("--json", action="store_true", help="print JSON")

    def refuse(self, message: str, as_json: bool) -> None:
        # A script reads one JSON object on stdout; a person reads the sentence on stderr.
        if as_json:
            self.stdout.write(json.dumps({"error": message}))
        else:
            self.stderr.write(message)
        sys.exit(2)

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
            self.refuse("Give --kind KIND and --seed N, or --list.", as_json)
        try:
            seed = int(options["seed"])
        except ValueError:
            self.refuse(f"A seed is a whole number from 0 to {engine.MAX_SEED}.", as_json)
        try:
            drill = engine.drill_generate(options["kind"], seed)
        except engine.DrillError as error:
            self.refuse(str(error), as_json)
        out = drill.as_json()
        if options["answer"] is not None:
            try:
                result = engine.drill_check(drill, options["answer"])
            except NapkinError as error:
                self.refuse(f"The answer could not be read: {error.message}", as_json)
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
