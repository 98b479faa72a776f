"""`manage.py plan`: size a fleet from a model, a GPU and an SLO, every step shown.

A refused input exits with status 2 and names the option at fault: with --json
{"error": "..."} on stdout, without it the sentence on stderr (planner/management/scripting.py).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from planner.engine import NapkinError, PlanError, format_number, load_catalog, plan
from planner.engine.capacity import (
    DEFAULT_PREFILL_EFF,
    DEFAULT_PROMPT_SPREAD,
    DEFAULT_SPEC_ACCEPT,
    DEFAULT_SPEC_DRAFT_COST,
    DEFAULT_SPEC_TOKENS,
)
from planner.management.scripting import ScriptedCommand, naming_option


class Command(ScriptedCommand):
    help = (
        "Capacity plan: weights, KV, VRAM gate, TPOT at the planned batch, TTFT from prefill "
        "FLOPs, the decode, prefill and memory bounds, r_inst, N_inst, N_GPU and cost."
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
        parser.add_argument(
            "--knee-tok-s",
            type=float,
            default=None,
            help="measured output tok/s at the SLO (default: derived from the decode step)",
        )
        parser.add_argument("--out-len", type=float, default=256.0, help="mean output tokens")
        parser.add_argument("--qps", type=float, default=50.0, help="peak requests per second")
        parser.add_argument("--rho", type=float, default=0.7, help="target utilisation")
        parser.add_argument("--tpot-slo-ms", type=float, default=None)
        parser.add_argument(
            "--overhead-gib",
            type=float,
            default=None,
            help="non-KV memory per GPU, GiB (default: derived from the model size and TP)",
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
        parser.add_argument(
            "--prompt-len",
            type=float,
            default=None,
            help="mean prompt tokens (default: the prompt fills the context)",
        )
        parser.add_argument(
            "--prompt-spread",
            type=float,
            default=DEFAULT_PROMPT_SPREAD,
            help="how far prompts' lengths spread either side of the mean, as a share of it, "
            "0..1 (the queue-aware p99 TTFT counts it)",
        )
        parser.add_argument(
            "--prefill-eff",
            type=float,
            default=DEFAULT_PREFILL_EFF,
            help="share of the GPU's dense TFLOPS that prefill and a compute-bound decode step "
            "reach",
        )
        parser.add_argument(
            "--prefix-hit",
            type=float,
            default=0.0,
            help="prefix-cache hit rate, 0..1 (of requests with --prefix-len, else of tokens)",
        )
        parser.add_argument(
            "--prefix-len", type=float, default=None, help="shared prefix tokens a hit skips"
        )
        parser.add_argument("--ttft-slo-ms", type=float, default=None)
        parser.add_argument("--mean-qps", type=float, default=None, help="mean requests per second")
        parser.add_argument(
            "--usd-per-gpu-hour",
            type=float,
            default=None,
            help="GPU price (default: the catalogue's dated list price)",
        )
        parser.add_argument(
            "--spec-decode", action="store_true", help="speculative decoding what-if"
        )
        parser.add_argument("--spec-accept", type=float, default=DEFAULT_SPEC_ACCEPT)
        parser.add_argument("--spec-tokens", type=int, default=DEFAULT_SPEC_TOKENS)
        parser.add_argument("--spec-draft-cost", type=float, default=DEFAULT_SPEC_DRAFT_COST)
        parser.add_argument(
            "--pd", action="store_true", help="prefill/decode disaggregation what-if"
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        # The catalogue's KeyError does not say which input it looked up: look each up here.
        catalog = load_catalog()
        lookups = {
            "--model": catalog.model,
            "--gpu": catalog.gpu,
            "--weights": catalog.weight_dtype,
            "--kv": catalog.kv_dtype,
        }
        for option, find in lookups.items():
            try:
                find(options[option.removeprefix("--")])
            except KeyError as error:
                raise CommandError(f"{option}: {error.args[0]}") from None
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
                prompt_len=options["prompt_len"],
                prompt_spread=options["prompt_spread"],
                prefill_eff=options["prefill_eff"],
                prefix_hit=options["prefix_hit"],
                prefix_len=options["prefix_len"],
                ttft_slo_ms=options["ttft_slo_ms"],
                mean_qps=options["mean_qps"],
                usd_per_gpu_hour=options["usd_per_gpu_hour"],
                spec_decode=options["spec_decode"],
                spec_accept=options["spec_accept"],
                spec_tokens=options["spec_tokens"],
                spec_draft_cost=options["spec_draft_cost"],
                pd_disagg=options["pd"],
            )
        except PlanError as error:
            message = str(error)
            if error.field:
                # The engine names its argument (mem_util); this command's option is the same
                # with dashes (--mem-util). The page shows the sentence beside its own field.
                message = naming_option(message, "--" + error.field.replace("_", "-"), error.field)
            raise CommandError(message) from None
        except NapkinError as error:  # a figure out of the engine's range, not one input's
            raise CommandError(
                f"The planner could not compute this plan: {error.message}"
            ) from None
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
        self.stdout.write(
            f"  TTFT {format_number(result['ttft_ms'])} ms, TPOT {format_number(result['tpot_ms'])}"
            f" ms at a batch of {result['batch']}; {result['binding']} binds"
        )
        if result["feasible"] is not None:
            self.stdout.write(f"  feasible: {'yes' if result['feasible'] else 'NO'}")
        if result["reason"]:
            self.stdout.write(f"  reason: {result['reason']}")
        for note in result["notes"]:
            self.stdout.write(f"  note: {note}")
