"""The simulator's pages: the "test this design" panel on the bottlenecks step (loaded by
practice through `simulator.hooks`), its run, and the planner's "simulate" page.

Views read top to bottom: parse input, call the services, render. Every run is bounded by
PAGE_LIMITS and charged to the client's CPU budget (rate_limits.cpu_budget), as the planner's
evaluations are.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST, require_safe

from planner.briefs import POOLED_DESIGNS, QUESTION_DESIGNS
from planner.engine import foreign_digit
from planner.forms import DEFAULTS, CapacityForm, in_field_words, plan_query
from practice.models import Attempt, StepAnswer
from practice.services import answer_open, attempt_touch
from rate_limits import LimitExceeded, client_key, cpu_budget
from simulator.charts import run_charts
from simulator.engine import ROUTERS
from simulator.hooks import STEP
from simulator.models import SimulationRun
from simulator.reveal import Shown, shown_for
from simulator.services import (
    PAGE_LIMITS,
    PAGE_WINDOW_S,
    Design,
    RunRefused,
    design_from_brief,
    design_from_plan_inputs,
    page_run,
    page_scenarios,
    router_named,
    scenario_titles,
)

MAX_PREDICTION = 2000
CHOSEN = "you"  # a saved run's router_from when the candidate chose its router in the panel
FLEET_NOT_YET = (
    "Type the number of replicas your design runs: the panel offers the reference design's "
    "fleet once you have submitted the napkin-math step."
)


def _own_attempt(request: HttpRequest, attempt_id: int) -> Attempt:
    return get_object_or_404(
        Attempt.objects.owned_by(request.user).select_related("revision__question"),
        pk=attempt_id,
    )


def _attempt_design(attempt: Attempt) -> Design:
    """The fleet the attempt's question brief designs. RunRefused when the planner refuses it."""
    revision = attempt.revision
    return design_from_brief(revision.question_spec.brief, slug=revision.question.slug)


def _estimated_replicas(attempt: Attempt, design: Design) -> int | None:
    """The fleet size the candidate checked on the napkin-math step, when they did: their
    instances (n_inst), else their GPUs (n_gpu, the name most questions give the fleet) over
    the design's tensor parallelism, since a replica is one instance of TP GPUs. None when
    they checked neither; it may be more than a page runs, or less than one."""
    answer = StepAnswer.objects.filter(attempt=attempt, step_key="estimate", follow_up_id="")
    fields = answer.values_list("fields", flat=True).first() or {}
    checks = fields.get("checks") or {}
    per_replica = 1
    value = (checks.get("n_inst") or {}).get("value")
    if value is None:
        value = (checks.get("n_gpu") or {}).get("value")
        per_replica = max(int(design.plan_kwargs.get("tp") or 1), 1)
    try:
        # Whole instances (or GPUs) first, rounded up as the checker asks: a fleet of 9.143
        # instances is 10. The rounding to 6 places keeps 10.0000001, a float's error, at 10.
        whole = math.ceil(round(float(value), 6))
        replicas = math.ceil(whole / per_replica)
    except (TypeError, ValueError, OverflowError):
        return None
    return replicas


def _fleet_open(design: Design, shown: Shown) -> bool:
    """Whether the panel may offer and name the fleet sized for the question: one the brief
    itself states (outside a running mock), or any once the napkin-math step, which grades
    the fleet size, is submitted."""
    return (design.fleet_in_brief and not shown.mock) or shown.estimate


def _estimate_not_run(replicas: int) -> str:
    """Why the panel does not offer the candidate's estimated fleet, and what to type."""
    if replicas < 1:
        return (
            f"Your estimate comes to {replicas:,} replicas, which serve nothing. Type the "
            "replicas your design runs."
        )
    return (
        f"Your estimate comes to {replicas:,} replicas; this panel simulates 1 to "
        f"{PAGE_LIMITS.replicas}. A large fleet behaves like copies of a smaller one: type a "
        "share of it, with the same share of the load."
    )


def _reference_source(attempt: Attempt, design: Design) -> str:
    """The words for the fleet sized for the question, in the panel's sentence: by the
    reference answer (or the brief) where it states its own, beside the capacity planner's
    figure; else by the capacity planner, or, for a prefill-only service, which the planner
    does not size, by the simulator's own prefill-only model."""
    slug = attempt.revision.question.slug
    if design.fleet_from:
        return f"{design.fleet_from}'s; the capacity planner sizes {design.planned_replicas}"
    if design.fleet_note:  # the answer's own fleet is one the simulator does not run
        return "the capacity planner's sizing"
    if design.pooled is not None:
        what = "the reference design" if slug in POOLED_DESIGNS else "the brief"
        return f"{what}, sized by its prefill throughput"
    what = "the reference design" if slug in QUESTION_DESIGNS else "the brief"
    return f"{what}, as the capacity planner sizes it"


def _default_router(design: Design, shown: Shown) -> tuple[str, str]:
    """The router the panel's runs use unless the candidate chooses another (the routing
    scenario names its own), and who names it: the design's, or round-robin in a running mock
    interview and, in practice, until the architecture step is submitted, where the reference
    answer's router would tell the candidate a choice their architecture answer is graded on
    (a router the brief states is no secret)."""
    if shown.mock or (not design.router_in_brief and not shown.architecture):
        return "round-robin", ""
    return design.router, design.router_from


def _router_offered(design: Design, latest: SimulationRun | None, shown: Shown) -> tuple[str, str]:
    """The router the panel's menu offers and who chose it: the last run's where the candidate
    chose it (CHOSEN), as the boxes keep the last run's fleet, else the default."""
    last = (latest.design or {}) if latest else {}
    if last.get("router_from") == CHOSEN and last.get("router") in ROUTERS:
        return last["router"], CHOSEN
    return _default_router(design, shown)


def _router_choices(default: str) -> list[tuple[str, str]]:
    """(value, label) of the menu's routers, every one the engine runs, the `default` marked
    (the help beside the menu says whose it is: a label that said it was cut on a phone)."""
    return [(name, f"{name} (default)" if name == default else name) for name in ROUTERS]


def _refusal(kind: type, text: str, why: str = "") -> RunRefused:
    """A box's refusal, naming its field and what it takes: `text`, what was typed ("" for a
    box left blank), `why`, what is wrong with it when more than "not a number"."""
    if not text:
        if kind is int:
            return RunRefused(
                f"Type the number of replicas: a whole number from 1 to {PAGE_LIMITS.replicas}.",
                "replicas",
            )
        return RunRefused(
            f"Type the load in QPS: a number from 0.001 to {PAGE_LIMITS.qps:g}.", "qps"
        )
    typed = f"not {text[:20]!r}"
    if kind is int:
        return RunRefused(
            f"The number of replicas must be a whole number from 1 to {PAGE_LIMITS.replicas}"
            f"{why}, {typed}.",
            "replicas",
        )
    return RunRefused(
        f"The load (QPS) must be a number from 0.001 to {PAGE_LIMITS.qps:g}{why}, {typed}.",
        "qps",
    )


def _number(text: str | None, default: float | None, kind: type = float) -> float:
    """`text` read as a `kind` (int: a whole number); when blank, `default`, or, with no
    default (a box the candidate emptied), a refusal. RunRefused (its field named) for
    anything else, so a typo is told rather than replaced by the default."""
    text = (text or "").strip()
    if not text:
        if default is None:
            raise _refusal(kind, text)
        return default
    if foreign_digit(text):
        raise _refusal(kind, text, ": use the digits 0–9")
    try:
        value = float(text)
        if kind is int:
            if not value.is_integer():
                raise ValueError(text)
            return int(value)
        return value
    except (OverflowError, ValueError):
        raise _refusal(kind, text) from None


def _latest_run(attempt: Attempt) -> SimulationRun | None:
    """The last run saved with the attempt's bottlenecks answer."""
    answer = StepAnswer.objects.filter(attempt=attempt, step_key=STEP, follow_up_id="").first()
    return SimulationRun.objects.for_answer(answer.pk).first() if answer else None


def _fleet_offered(
    attempt: Attempt, design: Design, latest: SimulationRun | None, shown: Shown
) -> tuple[int | None, float, str]:
    """The replicas and load the panel offers, and where they come from: those of the last
    run (`latest`), else the candidate's napkin-math fleet, else the reference design's. None
    (the candidate types their own fleet), with why when it is not said elsewhere, for an
    estimate the panel cannot run (never swapped for the reference design's fleet, the figure
    the estimate got wrong), in a running mock interview (nothing of the grading shows while
    it runs) and, in practice, until the napkin-math step, which grades the fleet size, is
    submitted."""
    last = (latest.design or {}) if latest else {}
    if last.get("replicas") and last.get("qps"):
        return last["replicas"], last["qps"], "your last run"
    estimated = _estimated_replicas(attempt, design)
    if estimated is not None:
        if 1 <= estimated <= PAGE_LIMITS.replicas:
            return estimated, design.qps, "your estimate"
        return None, design.qps, _estimate_not_run(estimated)
    if shown.mock:
        return None, design.qps, ""
    if not _fleet_open(design, shown):
        return None, design.qps, FLEET_NOT_YET
    return design.replicas, design.qps, _reference_source(attempt, design)


def _panel_context(attempt: Attempt, design: Design, shown: Shown, **extra: Any) -> dict[str, Any]:
    """The panel: the fleet offered (`_fleet_offered`), the scenarios and the last saved run;
    `extra`, what was typed, over them."""
    latest = _latest_run(attempt)
    replicas, qps, source = _fleet_offered(attempt, design, latest, shown)
    router, router_source = _router_offered(design, latest, shown)
    default_router, default_from = _default_router(design, shown)
    context = {
        # A run's note spells out the replica's batch, step times and requests per second,
        # and the planner's caveat its figures for the reference fleet: figures the
        # napkin-math step grades.
        "planner_figures_hidden": not shown.estimate,
        # A reference fleet the simulator does not run is the reference's fleet all the same.
        "fleet_shown": _fleet_open(design, shown),
        "attempt": attempt,
        "design": design,
        "replicas": replicas,
        "replicas_source": source,
        "router": router,
        "router_source": router_source,
        "router_choices": _router_choices(default_router),
        "router_default_from": default_from,
        "router_selected": router,
        "qps": qps,
        "scenarios": scenario_titles(design),
        "latest": latest,
        "charts": run_charts(latest.runs) if latest else [],
        "cpu_share_s": settings.CPU_SECONDS_PER_MINUTE,
        "most_requests": f"{PAGE_LIMITS.requests:,}",
        "full_qps": PAGE_LIMITS.requests / PAGE_WINDOW_S,
        "prediction": "",
        "error": None,
        "error_field": None,
    }
    context.update(extra)
    if context.get("router_text") in ROUTERS:  # a refused run keeps the router it was sent
        context["router_selected"] = context["router_text"]
    return context


def _offered_if_absent(request: HttpRequest, name: str, offered: float) -> float | None:
    """The figure a run uses for box `name` when it is blank: `offered` when the post leaves
    the box out, None (refused) when the box was sent empty."""
    return offered if name not in request.POST else None


@login_required
@require_safe
def panel(request: HttpRequest, attempt_id: int) -> HttpResponse:
    """The bottlenecks step's load-test panel: the fleet, the scenarios, the last saved run."""
    attempt = _own_attempt(request, attempt_id)
    try:
        design = _attempt_design(attempt)
    except RunRefused as error:
        return render(request, "simulator/panel_unavailable.html", {"error": str(error)})
    return render(
        request, "simulator/panel.html", _panel_context(attempt, design, shown_for(attempt.pk))
    )


@login_required
@require_POST
def panel_run(request: HttpRequest, attempt_id: int) -> HttpResponse:
    """Run a scenario on the candidate's fleet, after their prediction, and save both with
    the bottlenecks answer."""
    attempt = _own_attempt(request, attempt_id)
    try:
        design = _attempt_design(attempt)
    except RunRefused as error:
        return render(request, "simulator/panel_unavailable.html", {"error": str(error)})
    prediction = request.POST.get("prediction", "").strip()[:MAX_PREDICTION]
    key = request.POST.get("scenario", "")
    replicas_text = request.POST.get("replicas", "").strip()[:40]
    qps_text = request.POST.get("qps", "").strip()[:40]
    router_text = request.POST.get("router", "").strip()[:40]
    scenarios = page_scenarios(design)
    # What was typed goes back into the boxes when the run is refused.
    extra: dict[str, Any] = {
        "prediction": prediction,
        "replicas_text": replicas_text,
        "qps_text": qps_text,
        "router_text": router_text,
    }
    shown = shown_for(attempt.pk)
    default_router, default_from = _default_router(design, shown)
    offered, offered_qps, why_not = _fleet_offered(attempt, design, _latest_run(attempt), shown)
    try:  # a box that does not read as a number is told first
        if offered is None and not replicas_text:
            raise RunRefused(
                why_not
                or (
                    "Type the number of replicas in your design first: during a mock "
                    "interview the panel does not offer the reference design's fleet."
                ),
                "replicas",
            )
        # A box left out of the post runs what the panel offers; a box sent blank was
        # emptied by the candidate, and is told rather than run as a figure they cannot see.
        blank_replicas = _offered_if_absent(request, "replicas", offered or design.replicas)
        replicas = int(_number(replicas_text, blank_replicas, int))
        qps = _number(qps_text, _offered_if_absent(request, "qps", offered_qps))
        router = router_named(router_text) if router_text else default_router
    except RunRefused as error:
        extra |= {"error": str(error), "error_field": error.field}
    else:
        if key not in scenarios:
            extra["error"] = "Choose one of the scenarios."
        elif not prediction:
            extra["error"] = (
                "Write what you expect first (p99 TTFT, whether the SLO holds, how long it "
                "takes to recover): the comparison is part of the answer."
            )
    if "error" in extra:
        context = _panel_context(attempt, design, shown, **extra)
        return render(request, "simulator/panel.html", context, status=422)
    # Choosing the default router is leaving it: the result names whose default it is.
    router_from = default_from if router == default_router else CHOSEN
    try:
        with cpu_budget(client=client_key(request)):
            # What the run took is kept with it: the panel says it beside the buttons, the
            # figure a candidate weighs the next run at that size against.
            started = time.thread_time()
            runs = [
                page_run(
                    design,
                    replace(run, replicas=replicas, qps=qps, router=run.router or router),
                )
                for run in scenarios[key]["runs"]
            ]
            cpu_s = time.thread_time() - started
    except (RunRefused, LimitExceeded) as error:
        field = getattr(error, "field", None)
        context = _panel_context(
            attempt, design, shown, **extra, error=str(error), error_field=field
        )
        return render(request, "simulator/panel.html", context, status=422)
    answer = answer_open(attempt=attempt, step_key=STEP)
    SimulationRun.objects.create(
        answer=answer,
        user=request.user,
        scenario=key,
        prediction=prediction,
        design={
            "replicas": replicas,
            "qps": qps,
            "router": router,
            "router_from": router_from,
            "plan": design.plan_kwargs,
            "ttft_slo_ms": design.ttft_slo_ms,
            "tpot_slo_ms": design.tpot_slo_ms,
            "cpu_s": round(cpu_s, 2),
        },
        runs=runs,
    )
    attempt_touch(attempt.pk)  # the cached feedback of this step shows saved runs
    context = _panel_context(attempt, design, shown)  # the run just saved sets the fleet shown
    return render(request, "simulator/panel.html", context)


@require_safe
def fleet_page(request: HttpRequest) -> HttpResponse:
    """The planner's "simulate" action: the fleet its inputs plan, under one scenario."""
    if any(name in request.GET for name in CapacityForm.base_fields):
        # A link made before an input existed plans with that input's default.
        data = request.GET.copy()
        for name, field in CapacityForm.base_fields.items():
            if name not in data and field.required and DEFAULTS.get(name) is not None:
                data[name] = str(DEFAULTS[name])
    else:  # a bare address simulates the plan the planner first shows
        data = QueryDict(plan_query(CapacityForm(initial=DEFAULTS)), mutable=True)
        data.update(request.GET)
    form = CapacityForm(data)
    key = request.GET.get("scenario", "baseline")
    query = data.copy()
    query.pop("scenario", None)
    context: dict[str, Any] = {
        "form": form,
        "error": None,
        "runs": [],
        "charts": [],
        "query": query.urlencode(),
    }
    status = 200
    if not form.is_valid():
        context["error"] = "The planner's inputs are not valid: open the planner to fix them."
        return render(request, "simulator/page.html", context, status=422)
    try:
        with cpu_budget(client=client_key(request)):
            design = design_from_plan_inputs(form.cleaned_data)
            scenarios = page_scenarios(design)
            key = key if key in scenarios else "baseline"
            replicas = int(_number(request.GET.get("replicas"), design.replicas, int))
            if not request.GET.get("replicas", "").strip() and replicas > PAGE_LIMITS.replicas:
                raise RunRefused(
                    f"This plan needs {replicas} replicas; this page simulates up to "
                    f"{PAGE_LIMITS.replicas}. A large fleet behaves like copies of a smaller "
                    "one: plan a share of the load (a lower peak QPS) and simulate that."
                )
            runs = [
                page_run(design, replace(run, replicas=replicas, qps=design.qps))
                for run in scenarios[key]["runs"]
            ]
    except (RunRefused, LimitExceeded) as error:
        # A planner input the engine refuses by its argument's name, as the planner says it.
        context["error"] = in_field_words(str(error), getattr(error, "field", None))
        return render(request, "simulator/page.html", context, status=422)
    context.update(
        design=design,
        replicas=replicas,
        runs=runs,
        charts=run_charts(runs),
        scenario=key,
        scenarios=scenarios,
    )
    return render(request, "simulator/page.html", context, status=status)
