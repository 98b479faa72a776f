"""Load-testing a design: the fleet a question's brief and seed design (or the candidate's
figures) make, run through the simulator's engine with a scenario, and the runs saved with
a step answer.

Runs are bounded before they start (window, load, replicas and the requests they imply), so
a run from a page cannot hog a web worker; the command allows larger ones.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

from planner.briefs import (
    BRIEF,
    POOLED_DESIGNS,
    QUESTION_DESIGNS,
    REFERENCE_ANSWER,
    REFERENCE_FLEETS,
    ROUTED_PREFIXES,
    plan_inputs_from_brief,
)
from planner.engine import PlanError, plan
from planner.engine.capacity import DEFAULT_PROMPT_SPREAD
from questionbank import Brief
from simulator.engine import (
    HPA_PERIOD_S,
    NEVER,
    ROUTERS,
    PooledDesign,
    Scenario,
    SimulationError,
    Workload,
    figures,
    pooled_replica,
    pooled_replicas,
    replica_from_plan,
    simulate,
    tpot_bins,
    verdict,
)


@dataclass(frozen=True)
class Limits:
    """The largest run allowed: window (s), load (QPS), replicas, and arrivals in all."""

    seconds: float
    qps: float
    replicas: int
    requests: int


COMMAND_LIMITS = Limits(seconds=3600, qps=2000, replicas=256, requests=2_000_000)
PAGE_LIMITS = Limits(seconds=300, qps=400, replicas=64, requests=60_000)
PAGE_WINDOW_S = 240.0
EVENT_AT_S = 60.0  # when a page scenario's event happens
# The least a window cut to the request budget keeps after its last event (`page_window`).
PAGE_TAIL_S = 30.0


@dataclass(frozen=True)
class Design:
    """A fleet to test: planner inputs, replicas, peak QPS, the SLO and the length mix.

    `replicas` and `router` are the fleet the design runs: the question's reference answer's
    where it states them (planner.briefs.REFERENCE_FLEETS; `fleet_from` and `router_from`
    then name who states them), else the capacity planner's sizing (`planned_replicas`, also
    kept when the answer's differs) behind round-robin."""

    plan_kwargs: dict[str, Any]
    replicas: int
    qps: float
    ttft_slo_ms: float
    tpot_slo_ms: float
    input_tokens: float
    output_tokens: float
    source: str = ""
    # A prefill-only service (embeddings, reranking): the engine's replica and fleet for it
    # instead of the planner's, which sizes generating instances. Its SLO is ttft_slo_ms, the
    # p99 latency of the whole request; tpot_slo_ms does not apply.
    pooled: PooledDesign | None = None
    slug: str = ""  # the question's, for a design made from its brief
    # Why the capacity planner marks this design infeasible at its peak (`planner_infeasible`),
    # for the panel to say before any run; "" when the planner says it holds.
    planner_caveat: str = ""
    router: str = "round-robin"
    planned_replicas: int = 0  # the planner's (or the prefill-only model's) sizing
    fleet_from: str = ""  # who sizes `replicas` when the planner does not ("the brief", ...)
    router_from: str = ""  # who names `router` ("": round-robin, the simulator's default)
    fleet_note: str = ""  # a reference fleet the simulator does not run, in a sentence

    @property
    def fleet_in_brief(self) -> bool:
        """Whether the brief itself states the fleet, which is then no answer to hide."""
        return self.fleet_from == BRIEF

    @property
    def router_in_brief(self) -> bool:
        """Whether the brief itself names the router."""
        return self.router_from == BRIEF


@dataclass(frozen=True)
class RunSpec:
    """One run's choices on top of a design (None: the design's)."""

    replicas: int | None = None
    qps: float | None = None
    seconds: float = 600.0
    seed: int = 1
    router: str | None = None  # None: the design's router
    autoscale: str = "off"
    chunked_prefill: bool = False
    kill_at: float | None = None
    restart_after: float | None = None
    burst_at: float | None = None
    burst_factor: float = 2.0
    cold_start_s: float = 60.0
    prefix_groups: int = 0
    prefix_tokens: int = 0
    prefix_share: float = 1.0
    prefix_common: int = 0  # tokens every group's prefix opens with (a system prompt)
    prefix_lifetime_s: float = 0.0  # groups open this long, then new ones (0: fixed groups)
    warm_cache: bool = False
    names_router: bool = False  # the verdict names the router even when it is round-robin
    label: str = ""
    extra: dict = field(default_factory=dict)


class RunRefused(ValueError):
    """A run out of bounds or a design that cannot be planned, in one sentence; `field` names
    the input at fault when it is one (a RunSpec field, a planner input, or "requests" for a
    window and load that together send too many), so a caller can name its own control."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def design_from_brief(brief: Brief, *, slug: str = "") -> Design:
    """The design of a question: the planner's inputs for its brief and the design its
    reference settles on (`planner.briefs`, as the planner page shows it), the simulator's
    defaults for what the brief leaves out, and the planner's fleet size for them. A
    prefill-only brief (one pooled output per request) gets the engine's prefill-only fleet
    (`_pooled_design`)."""
    if brief.prefill_only or slug in POOLED_DESIGNS:
        return _pooled_design(brief, slug=slug)
    kwargs = plan_inputs_from_brief(brief, slug=slug)
    for kind, text in (("model", brief.model), ("gpu", brief.gpu)):
        if kind not in kwargs:
            raise RunRefused(f"The catalogue has no {kind} called {text!r}.")
    kwargs = {"context": 8192, "prompt_len": 512, "out_len": 256, "qps": 10} | kwargs
    result = _plan(kwargs)
    planned = result["n_inst"] or 1
    fleet = {"replicas": planned, "planned_replicas": planned} | _reference_fleet(slug, planned)
    return Design(
        plan_kwargs=kwargs,
        qps=kwargs["qps"],
        ttft_slo_ms=brief.ttft_p99_ms or 1000.0,
        tpot_slo_ms=brief.tpot_p99_ms or 100.0,
        input_tokens=kwargs["prompt_len"],
        output_tokens=kwargs["out_len"],
        source=f"the seed design of {slug}" if slug in QUESTION_DESIGNS else BRIEF,
        slug=slug,
        planner_caveat=planner_infeasible(result, ttft_slo_ms=kwargs.get("ttft_slo_ms")),
        **fleet,
    )


def _reference_fleet(slug: str, planned: int) -> dict[str, Any]:
    """Design fields for the fleet `slug`'s reference answer runs (REFERENCE_FLEETS): its
    replicas and router where it states them and who states them, and the note for one the
    simulator does not run. Empty for a question whose answer runs the planner's fleet."""
    chosen = REFERENCE_FLEETS.get(slug)
    if not chosen:
        return {}
    source = chosen.get("source", REFERENCE_ANSWER)
    fields: dict[str, Any] = {"fleet_note": chosen.get("note", "")}
    replicas = chosen.get("replicas")
    if replicas and replicas != planned:
        fields |= {"replicas": replicas, "fleet_from": source}
    router = chosen.get("router")
    if router and router != "round-robin":
        fields |= {"router": router, "router_from": source}
    return fields


def _pooled_design(brief: Brief, *, slug: str) -> Design:
    """A prefill-only question's design: the model (the catalogue's, or the same-shape model
    POOLED_DESIGNS maps it to), its tokens and fan-out per request, and the replicas that
    carry the brief's peak at the design's utilisation. Its SLO is the brief's p99 latency
    (end to end, else TTFT); there is no TPOT."""
    kwargs = plan_inputs_from_brief(brief, slug=slug)
    chosen = POOLED_DESIGNS.get(slug, {})
    model = chosen.get("model") or kwargs.get("model")
    for kind, key, text in (("model", model, brief.model), ("gpu", kwargs.get("gpu"), brief.gpu)):
        if not key:
            raise RunRefused(f"The catalogue has no {kind} called {text!r}.")
    tokens = chosen.get("tokens") or brief.value_of("input_tokens")
    if not tokens:
        raise RunRefused("A prefill-only brief must give its input tokens per request.")
    qps = brief.value_of("peak_qps") or 10
    pooled = PooledDesign(
        model=model,
        gpu=kwargs["gpu"],
        tokens=tokens,
        seq_len=chosen.get("seq_len") or tokens,
        fanout=chosen.get("fanout", 1),
        rho=chosen.get("rho", 0.7),
        step_tokens=chosen.get("step_tokens") or max(int(kwargs.get("context") or 8192), 1),
        model_note=chosen.get("model_note", ""),
    )
    try:
        replicas = pooled_replicas(pooled, qps)
    except (KeyError, ValueError) as error:
        raise RunRefused(str(error).strip("\"'")) from None
    slo = brief.value_of("e2e_p99_ms") or brief.value_of("ttft_p99_ms") or 1000.0
    return Design(
        plan_kwargs={**kwargs, "model": model, "qps": qps, "rho": pooled.rho},
        replicas=replicas,
        qps=qps,
        ttft_slo_ms=slo,
        tpot_slo_ms=0.0,
        input_tokens=tokens,
        output_tokens=1,
        source=f"the reference design of {slug}" if chosen else BRIEF,
        pooled=pooled,
        slug=slug,
        planned_replicas=replicas,
    )


def planner_infeasible(plan: dict[str, Any], *, ttft_slo_ms: float | None) -> str:
    """Why the capacity planner marks `plan` (a `plan()` result) infeasible at its peak, in a
    sentence for the candidate, or "" when it does not. A TTFT past its SLO is told with its
    cause (a prefix-cache miss prefilling the whole prompt, or one prefill), since no fleet
    size shortens a prefill; anything else is the planner's own reason."""
    if plan.get("feasible") is not False:
        return ""
    head = "The capacity planner marks this design infeasible at the peak: "
    p99 = plan.get("ttft_p99_ms")
    if not (ttft_slo_ms and p99 and p99 > ttft_slo_ms):
        return head + str(plan.get("reason") or "it does not fit.")
    prompt = f"{plan['prompt_tokens']:,.0f}-token prompt"
    hit = plan.get("prefix_hit") or 0.0
    if hit and p99 == plan.get("ttft_miss_ms"):
        why = (
            f"the {(1 - hit) * 100:.0f}% of requests that miss the prefix cache prefill their "
            f"whole {prompt}, so its p99 TTFT is {p99:,.0f} ms"
        )
    else:
        why = f"one prefill of the {prompt} takes {p99:,.0f} ms, its p99 TTFT"
    return (
        f"{head}{why}, against the {ttft_slo_ms:,.0f} ms SLO, and more replicas do not "
        "shorten a prefill. Expect the run to break the SLO too, further than that: a "
        "request also waits behind the prefills ahead of it."
    )


def _planner_gap(
    plan: dict[str, Any], figs: dict, *, spec: RunSpec, replicas: int, ttft_slo_ms: float
) -> str:
    """Said of a run at steady load on at least the planner's fleet whose p99 TTFT breaks an
    SLO the planner says holds: the planner sizes on one prefill with no wait (beside its
    estimate with the queue counted), and the run's p99 wait before a prefill is what that
    leaves out."""
    p99 = figs["ttft_p99_ms"]
    steady = spec.kill_at is None and spec.burst_at is None and spec.autoscale == "off"
    if (
        plan.get("feasible") is False
        or figs["prefill_only"]
        or not steady
        or replicas < (plan.get("n_inst") or 1)
        or p99 is None
        or p99 <= ttft_slo_ms
    ):
        return ""
    queued = plan.get("ttft_p99_queued_ms")
    estimate = (
        f"; its estimate with the queue at the peak counted is {queued:,.0f} ms"
        if queued is not None
        else ""
    )
    return (
        f" The capacity planner sizes this fleet on a p99 TTFT of {plan['ttft_p99_ms']:,.0f} "
        f"ms: one prefill of a mean prompt, with no wait{estimate}. In this run one request "
        f"in a hundred spent {figs['queued_p99_ms'] or 0:,.0f} ms or more of its TTFT beyond "
        "its own prefill, waiting for one of a replica's "
        f"{plan['batch']} batch slots or behind other prompts' prefills, and the longest "
        f"prompts' own prefills took {figs['own_prefill_p99_ms'] or 0:,.0f} ms: the "
        "one-prefill figure counts neither, so the fleet it sizes is too small for this SLO."
    )


def design_from_plan_inputs(kwargs: dict[str, Any]) -> Design:
    """A design from the capacity planner's inputs (its form's cleaned data)."""
    result = _plan(kwargs)
    return Design(
        plan_kwargs=kwargs,
        replicas=result["n_inst"] or 1,
        planned_replicas=result["n_inst"] or 1,
        qps=kwargs["qps"],
        ttft_slo_ms=kwargs.get("ttft_slo_ms") or 1000.0,
        tpot_slo_ms=kwargs.get("tpot_slo_ms") or 100.0,
        input_tokens=result["prompt_tokens"],  # a blank prompt length fills the context
        output_tokens=kwargs["out_len"],
        source="the capacity planner's inputs",
        planner_caveat=planner_infeasible(result, ttft_slo_ms=kwargs.get("ttft_slo_ms")),
    )


def _plan(kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        result = plan(**kwargs)
    except (PlanError, KeyError) as error:
        raise RunRefused(str(error).strip("\"'"), getattr(error, "field", None)) from None
    if not result["fits"]:
        raise RunRefused(result["reason"] or "Nothing fits on this GPU.")
    return result


def router_named(text: str) -> str:
    """The router `text` names (surrounding spaces aside), one of the engine's ROUTERS, which
    the panel's menu and the command's --router offer. RunRefused (field "router") naming
    them for anything else."""
    name = text.strip()
    if name in ROUTERS:
        return name
    *most, last = ROUTERS
    raise RunRefused(
        f"The router must be {', '.join(most)} or {last}, not {text[:30]!r}.", "router"
    )


def _check(value: float, low: float, high: float, what: str, field: str) -> None:
    if not (low <= value <= high) or math.isnan(value):
        raise RunRefused(f"{what} must be between {low:g} and {high:g}.", field)


def fleet_run(design: Design, spec: RunSpec, *, limits: Limits = COMMAND_LIMITS) -> dict:
    """Simulate `design` under `spec` and return the run: {label, params, figures, verdict,
    series (t, waiting, running, replicas), ttft_bins and tpot_bins (t, p99 s), note}. Raises
    RunRefused for a run past `limits` or a design the planner refuses. A spec without
    replicas or a router runs the design's."""
    router = design.router if spec.router is None else spec.router
    spec = replace(spec, router=router_named(router))
    replicas = spec.replicas if spec.replicas is not None else design.replicas
    qps = spec.qps if spec.qps is not None else design.qps
    _check(spec.seconds, 1, limits.seconds, "The simulated window (s)", "seconds")
    _check(qps, 0.001, limits.qps, "The load (QPS)", "qps")
    _check(replicas, 1, limits.replicas, "The number of replicas", "replicas")
    _check(spec.burst_factor, 1, 10, "The burst factor", "burst_factor")
    _check(spec.cold_start_s, 0, 3600, "The cold start (s)", "cold_start_s")
    for name, at in (("kill", spec.kill_at), ("burst", spec.burst_at)):
        if at is not None:
            _check(at, 0, spec.seconds, f"The {name} time (s)", f"{name}_at")
    expected = expected_requests(spec, qps=qps)
    if expected > limits.requests:
        raise RunRefused(
            f"That run would send about {expected:,.0f} requests; the limit here is "
            f"{limits.requests:,}. Shorten the window or lower the load.",
            "requests",
        )
    if design.pooled is not None:
        if spec.prefix_groups or spec.chunked_prefill:
            raise RunRefused(
                "A prefill-only request keeps no KV and has nothing to decode: shared "
                "prefixes and chunked prefill do not apply."
            )
        calibration = pooled_replica(design.pooled)
        result = None
    else:
        kwargs = {**design.plan_kwargs, "qps": qps}
        if (kwargs.get("mean_qps") or 0) > qps:
            # Testing a lighter load than the brief's mean is fair: the mean only prices the
            # autoscaled month, which no run reads, and the planner refuses a mean above the
            # peak.
            kwargs["mean_qps"] = None
        result = _plan(kwargs)
        calibration = replica_from_plan(
            result,
            model=design.plan_kwargs["model"],
            output_tokens=design.output_tokens,
            prefix_len=design.plan_kwargs.get("prefix_len"),
        )
    # The plan's prefix-cache hits are the traffic's, unless the run sends prefixes of its own
    # (the routing scenario's conversations), which then decide what hits.
    if spec.prefix_groups:
        cache = {
            "prefix_groups": spec.prefix_groups,
            "prefix_tokens": spec.prefix_tokens,
            "prefix_share": spec.prefix_share,
            "common_tokens": spec.prefix_common,
            "prefix_lifetime_s": spec.prefix_lifetime_s,
        }
    else:
        cache = calibration.prefix.workload_fields()
    workload = Workload(
        qps=qps,
        input_tokens=design.input_tokens,
        output_tokens=design.output_tokens,
        context=int(design.plan_kwargs.get("context") or 0),
        pooled=design.pooled is not None,
        fanout=design.pooled.fanout if design.pooled is not None else 1,
        # The planner's prompt spread where the design comes from its page (a question's design
        # leaves it at the default both share).
        input_spread=design.plan_kwargs.get("prompt_spread", DEFAULT_PROMPT_SPREAD),
        **cache,
    )
    scenario = Scenario(
        replicas=replicas,
        seconds=spec.seconds,
        seed=spec.seed,
        router=spec.router,
        autoscale=spec.autoscale,
        chunked_prefill=spec.chunked_prefill,
        kill_at=spec.kill_at,
        restart_after=spec.restart_after,
        burst_at=spec.burst_at,
        burst_factor=spec.burst_factor,
        cold_start_s=spec.cold_start_s,
        warm_cache=spec.warm_cache,
        max_replicas=min(limits.replicas, max(2 * replicas, replicas + 8)),
        ttft_slo_s=design.ttft_slo_ms / 1000,
        tpot_slo_s=design.tpot_slo_ms / 1000,
    )
    started = time.process_time()
    try:
        run = simulate(calibration.replica, workload, scenario)
    except SimulationError as error:
        raise RunRefused(str(error)) from None
    figs = figures(run)
    figs["wall_s"] = round(time.process_time() - started, 4)
    figs["replica_batch"] = calibration.replica.max_batch
    figs["replica_req_s"] = calibration.saturated_req_s
    return {
        "label": spec.label or scenario_text(spec),
        "params": {
            "replicas": replicas,
            "qps": qps,
            "seconds": spec.seconds,
            "seed": spec.seed,
            "router": spec.router,
            "autoscale": spec.autoscale,
            "chunked_prefill": spec.chunked_prefill,
            "kill_at": spec.kill_at,
            "restart_after": spec.restart_after,
            "burst_at": spec.burst_at,
            "burst_factor": spec.burst_factor,
            "prefix_groups": spec.prefix_groups,
            "prefix_tokens": spec.prefix_tokens,
            "prefix_share": spec.prefix_share,
            "prefix_common": spec.prefix_common,
            "prefix_lifetime_s": spec.prefix_lifetime_s,
            "warm_cache": spec.warm_cache,
            "ttft_slo_ms": design.ttft_slo_ms,
            "tpot_slo_ms": design.tpot_slo_ms,
        },
        "figures": figs,
        "verdict": verdict(
            figs,
            qps=qps,
            replicas=replicas,
            ttft_slo_ms=design.ttft_slo_ms,
            tpot_slo_ms=design.tpot_slo_ms,
            scenario_text=scenario_text(spec, burst=False),
            autoscale=spec.autoscale,
            burst_at=spec.burst_at,
            burst_factor=spec.burst_factor,
            max_replicas=scenario.max_replicas,
        )
        + _too_short_to_scale(spec)
        + _one_replica_to_route(spec, replicas),
        "series": [list(row) for row in run.series],
        "ttft_bins": [[t, NEVER if p == math.inf else p] for t, p in _bins(run)],
        "tpot_bins": [[t, p] for t, p in tpot_bins(run)],
        "note": calibration.note
        + _prefix_override(calibration, spec)
        + _planner_says(result, figs, spec=spec, replicas=replicas, design=design),
    }


def _planner_says(
    plan: dict[str, Any] | None, figs: dict, *, spec: RunSpec, replicas: int, design: Design
) -> str:
    """What the capacity planner said of this run's load that the run bears out or corrects:
    that it marks the design infeasible, or what its p99 TTFT leaves out (`_planner_gap`)."""
    if plan is None:  # a prefill-only fleet, which the planner does not size
        return ""
    slo = design.ttft_slo_ms
    infeasible = planner_infeasible(plan, ttft_slo_ms=design.plan_kwargs.get("ttft_slo_ms"))
    if infeasible:
        return " " + infeasible
    return _planner_gap(plan, figs, spec=spec, replicas=replicas, ttft_slo_ms=slo)


def _too_short_to_scale(spec: RunSpec) -> str:
    """Said of an autoscaling run whose window ends before the autoscaler could act."""
    tail = autoscaler_tail_s(spec)
    after = spec.seconds - (spec.burst_at or 0.0)
    if not tail or after >= tail:
        return ""
    since = "burst" if spec.burst_at is not None else "start"
    return (
        f" The window ends {after:g} s after the {since}, too short for the autoscaler to "
        "act: a replica it asks for is ready a scaling "
        f"period ({HPA_PERIOD_S:g} s) and a {spec.cold_start_s:g} s cold start later, so this "
        "run says nothing about the autoscaler."
    )


def _one_replica_to_route(spec: RunSpec, replicas: int) -> str:
    """Said of a run that compares routers (`names_router`) on one replica, where every
    router sends every request to it: the runs come out the same, which reads as a fault
    unless it is said."""
    if not spec.names_router or replicas != 1:
        return ""
    return (
        " With one replica every request goes to it, whichever the router: the routers "
        "differ only across replicas."
    )


def expected_requests(spec: RunSpec, *, qps: float) -> float:
    """About how many requests a run sends: `qps` over its window, times the burst factor
    from the burst's start (`spec.qps` is not read: the caller says which load)."""
    if spec.burst_at is None:
        return qps * spec.seconds
    before = min(spec.burst_at, spec.seconds)
    return qps * before + qps * spec.burst_factor * (spec.seconds - before)


def page_window(spec: RunSpec, *, limits: Limits = PAGE_LIMITS) -> RunSpec:
    """A page scenario's run at its load (`spec.qps`), its window cut short when the whole
    window would send more than `limits.requests`: a page has no box for the window, so
    "shorten the window" is done for the candidate (400 QPS, the voice-agent brief's peak,
    runs 150 s instead of 240). The events keep their times and the window keeps at least
    PAGE_TAIL_S seconds after the last; the label says how long it ran (`page_run` says why).
    Returned unchanged when it fits, or when no such window does (fleet_run then refuses it)."""
    qps = spec.qps
    if qps is None or not (0 < qps < math.inf):
        return spec
    budget = limits.requests
    if expected_requests(spec, qps=qps) <= budget:
        return spec
    if spec.burst_at is None or qps * spec.burst_at >= budget:
        seconds = budget / qps
    else:
        seconds = spec.burst_at + (budget - qps * spec.burst_at) / (qps * spec.burst_factor)
    seconds = float(math.floor(seconds))
    tail = autoscaler_tail_s(spec)
    if spec.burst_at is not None and tail > PAGE_TAIL_S and seconds < spec.burst_at + tail:
        # An autoscaler needs a scaling period to ask and a cold start to get a replica, and a
        # period more to show what it did: the burst comes earlier so the window keeps that
        # tail (the steady load before it still gets a scaling period).
        burst_at = float(math.floor((budget - qps * spec.burst_factor * tail) / qps))
        if burst_at >= HPA_PERIOD_S:
            burst_at = min(burst_at, spec.burst_at)
            label = spec.label or scenario_text(spec) or "the run"
            label = label.replace(f"from {spec.burst_at:g} s", f"from {burst_at:g} s")
            if spec.burst_at != burst_at and f"from {burst_at:g} s" not in label:
                label += f", burst at {burst_at:g} s"
            return replace(
                spec,
                burst_at=burst_at,
                seconds=burst_at + tail,
                label=f"{label} over {burst_at + tail:g} s",
            )
    last_event = max(
        (spec.kill_at + (spec.restart_after or 0)) if spec.kill_at is not None else 0.0,
        spec.burst_at or 0.0,
    )
    if seconds < last_event + PAGE_TAIL_S:
        return spec
    label = f"{spec.label or scenario_text(spec) or 'the run'} over {seconds:g} s"
    return replace(spec, seconds=seconds, label=label)


def autoscaler_tail_s(spec: RunSpec) -> float:
    """The least window an autoscaling run needs after its burst for the autoscaler to act and
    be seen: a cold start and two scaling periods (0 without an autoscaler)."""
    if spec.autoscale == "off":
        return 0.0
    return spec.cold_start_s + 2 * HPA_PERIOD_S


def page_run(design: Design, spec: RunSpec) -> dict:
    """A page's run: `fleet_run` within PAGE_LIMITS over the window `page_window` fits, its
    note saying so when the window was cut. `spec.qps` is the load (set it)."""
    fitted = page_window(spec)
    run = fleet_run(design, fitted, limits=PAGE_LIMITS)
    if fitted.seconds != spec.seconds:
        moved = ""
        if fitted.burst_at != spec.burst_at:
            moved = (
                f" The burst comes at {fitted.burst_at:g} s, not {spec.burst_at:g}, so the "
                f"{autoscaler_tail_s(fitted):g} s after it leave the autoscaler a scaling "
                f"period to ask, a {fitted.cold_start_s:g} s cold start and a period more."
            )
        run["note"] = (
            f"Simulated over {fitted.seconds:g} s, not {spec.seconds:g}: a page runs up to "
            f"{PAGE_LIMITS.requests:,} requests, and {spec.qps:g} QPS sends that many sooner "
            f"(manage.py simulate runs longer windows).{moved} " + run["note"]
        )
    return run


def _prefix_override(calibration: Any, spec: RunSpec) -> str:
    """Said when the run's own shared prefixes replace the hits the plan counts."""
    if spec.extra.get("traffic_note"):
        return " " + spec.extra["traffic_note"]
    if spec.extra.get("unrouted"):
        return " " + _unrouted_note(calibration.prefix)
    if not spec.prefix_groups or not calibration.prefix.workload_fields():
        return ""
    return (
        f" This run's {spec.prefix_groups} shared prefixes replace the plan's prefix-cache "
        "hits: what hits is what the router keeps cached."
    )


def _bins(run: Any) -> list:
    from simulator.engine import ttft_bins

    return ttft_bins(run)


def scenario_text(spec: RunSpec, *, burst: bool = True) -> str:
    """The events and choices of a run in a few words ("replica killed at 60 s, ..."); without
    `burst` they leave the burst out (the verdict says it beside the load). Round-robin, the
    simulator's default, goes unsaid unless the run compares routers (`names_router`)."""
    parts = []
    if spec.kill_at is not None:
        parts.append(
            f"a replica killed at {spec.kill_at:g} s"
            + (
                f", back cold after {spec.restart_after:g} s"
                if spec.restart_after is not None
                else ""
            )
        )
    if burst and spec.burst_at is not None:
        parts.append(f"{spec.burst_factor:g}× load from {spec.burst_at:g} s")
    if spec.router not in (None, "round-robin") or (spec.router and spec.names_router):
        parts.append(spec.router)
    if spec.prefix_groups and spec.prefix_lifetime_s:
        parts.append(
            f"{spec.prefix_share * 100:.0f}% of requests repeating a prefix of the last "
            f"{spec.prefix_lifetime_s:g} s"
        )
    elif spec.prefix_groups:
        parts.append(f"{spec.prefix_groups} shared prefixes")
    if spec.chunked_prefill:
        parts.append("chunked prefill")
    return "; ".join(parts)


@dataclass(frozen=True)
class RoutedTraffic:
    """A routing run's prefixes: `groups` of `tokens` tokens (the first `common` shared by
    all) on `share` of the requests, and what one replica's KV pool keeps of them."""

    groups: int
    tokens: int
    common: int
    share: float
    per_replica: int  # group prefixes one replica holds beside a full batch
    question_groups: int | None  # the question's own count, when it states one
    note: str
    lifetime_s: float = 0.0  # groups come and go (`Workload.prefix_lifetime_s`); 0: fixed


def routed_traffic(design: Design) -> RoutedTraffic | None:
    """The prefix groups of `design`'s question for the routing scenario (ROUTED_PREFIXES),
    or None when its reference does not route by prefix. The groups are the question's
    count, or when it states none or its count is more than the design's replicas hold,
    as many as they hold: each replica's KV pool beside a full batch of streams, over one
    group's own part. Prefix-aware routing can then keep every group hot on one replica,
    while round-robin sends each group to every replica, whose pool holds one replica's
    share of them (a hit about one time in `replicas`)."""
    if design.pooled is not None:
        return None
    if design.slug in REPEATED_PREFIXES:
        return _repeated_traffic(design, REPEATED_PREFIXES[design.slug])
    chosen = ROUTED_PREFIXES.get(design.slug)
    if chosen is None:
        return None
    result = _plan(design.plan_kwargs)
    calibration = replica_from_plan(
        result,
        model=design.plan_kwargs["model"],
        output_tokens=design.output_tokens,
        prefix_len=design.plan_kwargs.get("prefix_len"),
    )
    prefix = calibration.prefix
    prompt = int(design.input_tokens)
    if prefix.share and prefix.tokens:
        tokens, share = prefix.tokens, prefix.share
    elif prefix.cached_share:
        tokens, share = round(prefix.cached_share * prompt), 1.0
    else:
        return None
    tokens = min(tokens, prompt - 1)
    common = min(int(chosen["common"]), tokens - 1)
    replica = calibration.replica
    own = prompt - tokens + design.output_tokens
    room = replica.kv_tokens - common - replica.max_batch * own
    per_replica = max(int(room // (tokens - common)), 1)
    # Hashing deals the groups out unevenly (a replica's count is about binomial): the fleet
    # holds m groups a replica on average when m plus two standard deviations fit one pool.
    held = max(math.floor((math.sqrt(1 + per_replica) - 1) ** 2 * design.replicas), 1)
    question = chosen["groups"]
    groups = min(question, held) if question else held
    kv = f"{tokens:,}-token prefixes" + (f" ({common:,} shared by all)" if common else "")
    note = (
        f"This run's traffic: {share * 100:.0f}% of requests open with one of {groups:,} "
        f"{kv}; one replica's KV pool keeps {per_replica:,} of them beside a full batch, and "
        f"hashing deals {held:,} over the {design.replicas} replicas with room to spare for "
        "its uneven shares. The replicas start with the prefixes serving this traffic left "
        "in their caches."
    )
    if question and question > held:
        note += (
            f" The question has {question:,}, more than the pools hold: the rest need a "
            "host-memory KV tier or a smaller KV (FP8), which this simulator does not model, "
            f"so the run sends {groups:,}."
        )
    elif not question:
        note += " The question does not say how many, so the run sends as many as they hold."
    return RoutedTraffic(groups, tokens, common, share, per_replica, question, note)


# Prefixes a question's requests repeat for a while and then drop, which its plan does not
# count on (ROUTED_PREFIXES holds the prefixes a plan counts): tokens, the part every prefix
# opens with (`common`), the share of requests that repeat one, and how long one is repeated.
# Each figure is the question's own; `says` holds its words for them (tests hold them there).
REPEATED_PREFIXES: dict[str, dict[str, Any]] = {
    "vision-language-api": {
        # A follow-up question on an image reuses the system prompt and the image's tokens and
        # prefills only its question: the capped image's 1280 tokens (the estimate step's
        # tok_cap) after 60 of the 120 text tokens (text_tok), the question the other 60. The
        # plan counts the vision encoder in every prompt token's prefill, so a hit skips the
        # encoder's pass too, as vLLM's encoder cache does for a repeated image.
        "tokens": 1280 + 60,
        "common": 60,
        # Four questions an image on average, within a minute of each other: one request in
        # four brings a new image and three repeat one sent in the last minute.
        "share": 1 - 1 / 4,
        "lifetime_s": 60.0,
        "says": (
            "Users often ask several questions about the same image within a minute.",
            "about 60 tokens with the template instead of 1400",
            "If four questions per image is the average",
        ),
    },
}


def _repeated_traffic(design: Design, chosen: dict[str, Any]) -> RoutedTraffic:
    """A routing run's traffic of prefixes that come and go (REPEATED_PREFIXES): as many open
    at the start as the brief's peak opens in one lifetime, and what one replica's KV pool
    keeps of them beside a full batch."""
    result = _plan(design.plan_kwargs)
    replica = replica_from_plan(
        result, model=design.plan_kwargs["model"], output_tokens=design.output_tokens
    ).replica
    prompt = int(design.input_tokens)
    tokens = min(int(chosen["tokens"]), prompt - 1)
    common = min(int(chosen["common"]), tokens - 1)
    share, lifetime = float(chosen["share"]), float(chosen["lifetime_s"])
    groups = max(round(design.qps * (1 - share) * lifetime), 1)
    own = prompt - tokens + design.output_tokens
    room = replica.kv_tokens - common - replica.max_batch * own
    per_replica = max(int(room // (tokens - common)), 1)
    repeats = round(1 / (1 - share)) - 1
    note = (
        f"This run's traffic: one request in {round(1 / (1 - share))} brings a new image and "
        f"the other {repeats} repeat one sent in the last {lifetime:g} s. An image's "
        f"{tokens:,}-token prefix (the {common:,}-token system prompt every request shares, "
        f"then the image) is cached only on the replicas that prefilled it; {groups:,} images "
        "are live at "
        f"{design.qps:g} QPS, and one replica's KV pool keeps {per_replica:,} beside a full "
        "batch. The replicas start with the last minute's images in their caches."
    )
    return RoutedTraffic(groups, tokens, common, share, per_replica, None, note, lifetime)


# The bottlenecks step's scenario buttons: one run, or two to compare.
def scenario_titles(design: Design) -> dict[str, str]:
    """key -> title of the scenarios `page_scenarios` runs, for the buttons: without building
    the runs (the routing scenario's traffic asks the planner), so showing a panel costs
    nothing a run does not need."""
    titles = dict(SCENARIO_TITLES)
    if design.pooled is not None:
        del titles["routing"]
    return titles


SCENARIO_TITLES = {
    "baseline": "Peak load",
    "double-load": "2× load",
    "kill-replica": "Kill a replica",
    "cold-start": "Cold start",
    "autoscaling": "GPU-utilisation vs queue-depth autoscaling",
    "routing": "Round-robin vs prefix-aware",
}


def page_scenarios(design: Design) -> dict[str, dict[str, Any]]:
    """key -> {title, runs: [RunSpec, ...]} for the step panel's buttons."""
    base = RunSpec(seconds=PAGE_WINDOW_S)
    scenarios = {
        "baseline": {
            "title": SCENARIO_TITLES["baseline"],
            "runs": [replace(base, label="peak load")],
        },
        "double-load": {
            "title": SCENARIO_TITLES["double-load"],
            "runs": [replace(base, burst_at=EVENT_AT_S, label=f"2× load from {EVENT_AT_S:g} s")],
        },
        "kill-replica": {
            "title": SCENARIO_TITLES["kill-replica"],
            "runs": [
                replace(base, kill_at=EVENT_AT_S, label=f"a replica dies at {EVENT_AT_S:g} s")
            ],
        },
        "cold-start": {
            "title": SCENARIO_TITLES["cold-start"],
            "runs": [
                replace(
                    base,
                    kill_at=EVENT_AT_S,
                    restart_after=60.0,
                    label="a replica dies and comes back cold after 60 s",
                ),
            ],
        },
        "autoscaling": {
            "title": SCENARIO_TITLES["autoscaling"],
            "runs": [
                replace(
                    base,
                    burst_at=EVENT_AT_S,
                    autoscale="utilisation",
                    cold_start_s=30.0,
                    label="2× load, autoscaling on GPU utilisation",
                ),
                replace(
                    base,
                    burst_at=EVENT_AT_S,
                    autoscale="queue",
                    cold_start_s=30.0,
                    label="2× load, autoscaling on queue depth",
                ),
            ],
        },
    }
    if design.pooled is None:
        scenarios["routing"] = {
            "title": SCENARIO_TITLES["routing"],
            "runs": _routing_runs(design, base),
        }  # nothing outlives a prefill-only request, so no prefix is cached to route by
    return scenarios


def _unrouted_note(prefix: Any) -> str:
    """What the routing scenario's runs share of the cache when the question's traffic has no
    prefix groups to route by, from the plan's prefix-cache hits (`prefix`, a PlanPrefix): one
    shared prefix, which every replica caches after its first miss (the run's "Prefix hits"
    are the requests that open with it), or no shared prefix at all, so that nothing hits."""
    if prefix.share and prefix.tokens:
        shared = (
            f"one prefix of {prefix.tokens:,} tokens opens {prefix.share * 100:.0f}% of the "
            "requests, and every replica caches it after its first miss"
        )
    elif prefix.cached_share:
        shared = (
            f"the first {prefix.cached_share * 100:.0f}% of every prompt is shared, and every "
            "replica caches it after its first miss"
        )
    else:
        shared = (
            "the requests share no prompt prefix, so none hits a prefix cache (0% under "
            "either router)"
        )
    return (
        f"This question's traffic has no prefix groups to route by ({shared}): the two "
        "routers differ only in how they balance the load."
    )


def _routing_runs(design: Design, base: RunSpec) -> list[RunSpec]:
    """The routing scenario's two runs on the question's own prefix traffic
    (`routed_traffic`), or on its plain traffic when its reference does not route by prefix
    (the plan's one shared prefix, which every replica caches, or none)."""
    routers = ("round-robin", "prefix-aware")
    traffic = routed_traffic(design)
    if traffic is None:
        # The note is written with the run, from the prefix hits its plan counts.
        return [
            replace(base, router=router, names_router=True, label=router, extra={"unrouted": True})
            for router in routers
        ]
    # The label names the router alone: both runs send the same traffic, which the note says
    # once, and a label repeated in the heading "A vs B" wrapped to five lines on a phone.
    return [
        replace(
            base,
            router=router,
            prefix_groups=traffic.groups,
            prefix_tokens=traffic.tokens,
            prefix_share=traffic.share,
            prefix_common=traffic.common,
            prefix_lifetime_s=traffic.lifetime_s,
            warm_cache=True,
            names_router=True,
            label=router,
            extra={"traffic_note": traffic.note},
        )
        for router in routers
    ]
