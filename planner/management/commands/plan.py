"""`manage.py plan`: size a fleet from a model, a GPU and an SLO, every step shown."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from planner.engine import PlanError, format_number, plan
from planner.engine.capacity import DEFAULT_OVERHEAD_GIB


class Command(BaseCommand):
    help = (
        "Capacity plan: weights, KV, VRAM gate, TPOT floor, the speed and memory bounds, "
        "r_inst, N_inst, N_GPU."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", default="qwen2.5-7b-instruct")
        parser.add_argument("--gpu", default="rtx-4090")
        parser.add_argument("--weights", default="bf16", help="bf16 | fp8 | awq-int4")
        parser.add_argument("--kv", default="bf16", help="bf16 | fp8")
        parser.add_argument("--context", type=int, default=8192, help="tokens per sequence")
        parser.add_argument("--mem-util", type=float, default=0.9)
        parser.add_argument("--bw-eff", type=float, default=0.7)
        parser.add_argument("--tp", type=int, default=1)
        parser.add_argument("--knee-tok-s", type=float, default=2000.0)
        parser.add_argument("--out-len", type=float, default=256.0, help="mean output tokens")
        parser.add_argument("--qps", type=float, default=50.0, help="peak requests per second")
        parser.add_argument("--rho", type=float, default=0.7, help="target utilisation")
        parser.add_argument("--tpot-slo-ms", type=float, default=None)
        parser.add_argument(
            "--overhead-gib",
            type=float,
            default=DEFAULT_OVERHEAD_GIB,
            help="non-KV memory per GPU, GiB",
        )
        parser.add_argument(
            "--overhead-gb", type=float, default=None, help="the same in decimal GB (overrides)"
        )
        parser.add_argument(
            "--hold-s",
            type=float,
            default=None,
            help="measured seconds a request holds its KV slot (default: its decode at the floor)",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = plan(
                model=options["model"],
                gpu=options["gpu"],
                weights=options["weights"],
                kv=options["kv"],
                context=options["context"],
                mem_util=options["mem_util"],
                bw_eff=options["bw_eff"],
                tp=options["tp"],
                knee_tok_s=options["knee_tok_s"],
                out_len=options["out_len"],
                qps=options["qps"],
                rho=options["rho"],
                tpot_slo_ms=options["tpot_slo_ms"],
                overhead_gb=options["overhead_gb"],
                overhead_gib=options["overhead_gib"],
                hold_s=options["hold_s"],
            )
        except (PlanError, KeyError) as error:
            message = str(error).strip("\"'")
            if options["json"]:
                # Like `napkin --json`: a script reads one JSON object on stdout either way.
                self.stdout.write(json.dumps({"error": message}, ensure_ascii=False))
                sys.exit(2)
            raise CommandError(message) from None
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            return
        self.stdout.write(
            f"{result['model']} on {result['gpu']} ({result['weights']} weights, "
            f"{result['kv']} KV, {result['context']} tokens, TP={result['tp']})"
        )
        for step in result["steps"]:
            value = f"{format_number(step['value'])} {step['unit']}".strip()
            self.stdout.write(f"  {step['label']:<32} {value}")
        if result["binding"]:
            self.stdout.write(f"  the {result['binding']} bound sets r_inst")
        if result["feasible"] is not None:
            self.stdout.write(f"  feasible: {'yes' if result['feasible'] else 'NO'}")
        if result["reason"]:
            self.stdout.write(f"  reason: {result['reason']}")
        for note in result["notes"]:
            self.stdout.write(f"  note: {note}")
