"""`manage.py simulate --question SLUG [...] --json`: load-test a question's seed design (or
the fleet given) in the discrete-event simulator and print the figures. The design's fleet is
the one the question's reference answer runs where it states its replicas or router
(planner.briefs.REFERENCE_FLEETS), else the capacity planner's behind round-robin; the JSON
says which under "fleet".

A refused input exits with status 2 and names the option at fault: with --json
{"error": "..."} on stdout, without it the sentence on stderr (planner/management/scripting.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import DatabaseError
from django.http import Http404

from planner.management.scripting import ScriptedCommand, naming_option
from questionbank import ContentError, load_question_spec
from questions.selectors import question_current_revision
from simulator.engine import AUTOSCALERS, ROUTERS
from simulator.services import RunRefused, RunSpec, design_from_brief, fleet_run

BURST = re.compile(r"^\s*(\d+(?:\.\d+)?)x@(\d+(?:\.\d+)?)\s*$")

# The option that sets each input a refusal names (RunRefused.field): the simulator page words
# its refusals for its own controls, the command names its options.
OPTIONS = {
    "seconds": "--seconds",
    "qps": "--qps",
    "replicas": "--replicas",
    "burst_factor": "--burst",
    "burst_at": "--burst",
    "cold_start_s": "--cold-start",
    "kill_at": "--kill-replica-at",
    "requests": "--seconds and --qps",
    "knee_tok_s": "--knee",
}


def naming_options(error: RunRefused) -> str:
    """A refusal of fleet_run or the planner, naming this command's option."""
    option = OPTIONS.get(error.field or "")
    return naming_option(str(error), option, error.field) if option else str(error)


def fleet_words(design: Any, *, replicas: int | None = None, router: str | None = None) -> str:
    """Where the run's replicas and router come from, in a few words: the design's, or the
    --replicas and --router given over them (the design's then said beside them, so the
    words never name a fleet other than the one the figures are for)."""
    who = design.fleet_from or (
        "the prefill-only model" if design.pooled is not None else "the capacity planner"
    )
    planned = f"the capacity planner sizes {design.planned_replicas}" if design.fleet_from else ""
    if replicas is not None and replicas != design.replicas:
        beside = "; ".join(filter(None, [f"the design runs {design.replicas} from {who}", planned]))
        designed = f"{replicas} replicas from --replicas ({beside})"
    else:
        designed = f"{design.replicas} replicas from {who}" + (f" ({planned})" if planned else "")
    designed_router = f"{design.router} router" + (
        f" from {design.router_from}" if design.router_from else ""
    )
    if router is not None and router != design.router:
        designed_router = f"{router} router from --router (the design runs a {designed_router})"
    return f"{designed}, {designed_router}"


class Command(ScriptedCommand):
    help = "Simulate a question's fleet under open-loop load and print p50/p99 TTFT, TPOT, goodput."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--question", required=True, help="question slug")
        parser.add_argument("--replicas", type=int, help="replicas (default: the design's)")
        parser.add_argument("--qps", type=float, help="arrival rate (default: the peak)")
        parser.add_argument("--seconds", type=float, default=600.0, help="simulated window")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--router", choices=ROUTERS, help="default: the design's")
        parser.add_argument("--autoscale", choices=AUTOSCALERS, default="off")
        parser.add_argument("--kill-replica-at", type=float, dest="kill_at", metavar="T")
        parser.add_argument(
            "--restart-after", type=float, metavar="S", help="the killed replica returns, cold"
        )
        parser.add_argument("--burst", metavar="2x@T", help="multiply the load from T seconds")
        parser.add_argument("--cold-start", type=float, default=60.0, metavar="S")
        parser.add_argument("--chunked-prefill", action="store_true")
        parser.add_argument("--prefix-groups", type=int, default=0)
        parser.add_argument("--prefix-tokens", type=int, default=0)
        parser.add_argument(
            "--prefix-share",
            type=float,
            default=1.0,
            metavar="F",
            help="share of requests that open with a shared prefix (default 1)",
        )
        parser.add_argument(
            "--prefix-lifetime",
            type=float,
            default=0.0,
            metavar="S",
            help="prefixes come and go: a request repeats one opened in the last S seconds "
            "or opens a new one (default 0: the groups stay for the whole run)",
        )
        parser.add_argument("--knee", type=float, help="measured knee, output tok/s")
        parser.add_argument("--series", action="store_true", help="include the time series")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            out = self._run(options)
        except RunRefused as error:
            raise CommandError(naming_options(error)) from None
        except ValueError as error:
            raise CommandError(str(error)) from None
        if options["json"]:
            self.stdout.write(json.dumps(out, ensure_ascii=False))
            return
        figs = out
        self.stdout.write(out["verdict"])
        # A prefill-only run has no TPOT to print: its TTFT is the whole latency.
        for key in (
            "ttft_p50_ms",
            "ttft_p99_ms",
            *(() if figs.get("prefill_only") else ("tpot_p99_ms",)),
            "goodput",
            "completed",
            "little_law_error",
            "wall_s",
        ):
            self.stdout.write(f"  {key}: {figs[key]}")

    def _run(self, options: dict[str, Any]) -> dict[str, Any]:
        slug = options["question"][:80]
        try:
            question = question_current_revision(slug).question_spec
        except Http404:
            raise RunRefused(
                f"--question: No published question {options['question']!r}."
            ) from None
        except DatabaseError:
            # No database yet (before `make run` or `migrate`): the shipped question file.
            try:
                question = load_question_spec(slug)
            except ContentError as error:
                raise RunRefused(f"--question: {error}") from None
        design = design_from_brief(question.brief, slug=question.slug)
        if options["knee"] is not None and design.pooled is not None:
            raise RunRefused(
                "--knee is a decode knee (output tok/s); this question's requests are prefill "
                "only, with nothing decoded."
            )
        if options["knee"] is not None:
            design = replace(
                design, plan_kwargs={**design.plan_kwargs, "knee_tok_s": options["knee"]}
            )
        # fleet_run checks what the page can send; these options only this command has.
        for flag, value in (("--prefix-groups", options["prefix_groups"]),
                            ("--prefix-tokens", options["prefix_tokens"])):  # fmt: skip
            if value < 0:
                raise RunRefused(f"{flag} must be 0 or more.")
        # The engine cuts a prefix to the prompt and shares nothing without both: say so
        # rather than run another mix than the one the verdict names.
        groups, tokens = options["prefix_groups"], options["prefix_tokens"]
        if groups and not tokens:
            raise RunRefused("--prefix-groups needs --prefix-tokens T (each prefix's length).")
        if tokens and not groups:
            raise RunRefused("--prefix-tokens needs --prefix-groups N (how many prefixes).")
        share, lifetime = options["prefix_share"], options["prefix_lifetime"]
        if not 0 < share <= 1:  # NaN fails too
            raise RunRefused("--prefix-share must be more than 0 and at most 1.")
        if not 0 <= lifetime <= 86400:
            raise RunRefused("--prefix-lifetime must be between 0 and 86400 s.")
        if (share != 1 or lifetime) and not groups:
            raise RunRefused(
                "--prefix-share and --prefix-lifetime need --prefix-groups N and "
                "--prefix-tokens T (the prefixes they describe)."
            )
        if tokens >= design.input_tokens:
            raise RunRefused(
                f"--prefix-tokens must be less than the mean prompt ({design.input_tokens:g} "
                "tokens): a prefix is the start of a prompt."
            )
        restart_after = options["restart_after"]
        if restart_after is not None:
            if options["kill_at"] is None:
                raise RunRefused(
                    "--restart-after needs --kill-replica-at T (the replica it brings back)."
                )
            if not 0 <= restart_after <= 3600:  # NaN fails too (and would print as invalid JSON)
                raise RunRefused("--restart-after must be between 0 and 3600 s.")
        burst_at, burst_factor = None, 2.0
        if options["burst"]:
            match = BURST.match(options["burst"])
            if not match:
                raise RunRefused("--burst takes FACTORx@SECONDS, e.g. 2x@60.")
            burst_factor, burst_at = float(match[1]), float(match[2])
        spec = RunSpec(
            replicas=options["replicas"],
            qps=options["qps"],
            seconds=options["seconds"],
            seed=options["seed"],
            router=options["router"],
            autoscale=options["autoscale"],
            chunked_prefill=options["chunked_prefill"],
            kill_at=options["kill_at"],
            restart_after=options["restart_after"],
            burst_at=burst_at,
            burst_factor=burst_factor,
            cold_start_s=options["cold_start"],
            prefix_groups=options["prefix_groups"],
            prefix_tokens=options["prefix_tokens"],
            prefix_share=share,
            prefix_lifetime_s=lifetime,
        )
        run = fleet_run(design, spec)
        out = {
            "question": question.slug,
            "design": design.source,
            "fleet": fleet_words(design, replicas=spec.replicas, router=spec.router),
            **run["params"],
            **run["figures"],
            "verdict": run["verdict"],
            "replica": run["note"],
        }
        if options["series"]:
            out["series"] = run["series"]
            out["ttft_bins"] = run["ttft_bins"]
        return out
