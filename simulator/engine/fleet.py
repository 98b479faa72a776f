"""A discrete-event simulator of an inference fleet: open-loop arrivals, a router, N replicas
with continuous batching, an autoscaler, and failure events.

Why plain `heapq` and not SimPy or Ciw: a replica under continuous batching is not a server
with a service time per request. All its running streams advance one token per step, and a
step's length depends on how many run, so the useful events are "the batch changes" (a stream
joins after its prefill, a stream finishes) and the steps between them can be counted rather
than simulated. That jump from batch change to batch change is what makes a ten-minute window
at 50 QPS answer in well under a second; a process per request (SimPy) or a fixed service
distribution (Ciw) would either step every token or not model batching at all.

A replica's life is a sequence of phases, each of constant step length:
- a prefill phase (chunked prefill off): the prompts admitted at a step boundary are
  prefilled together; running streams wait (vLLM without chunked prefill schedules prefill
  first); each new stream's first token comes at the end;
- a decode phase: `steps` of `t_step(batch)` each; every running stream gains one token per
  step;
- a chunked phase (chunked prefill on): the admitted prompts are prefilled in chunks of
  `chunk_tokens`, each chunk riding on a decode step, so running streams keep decoding while
  the new ones' first tokens come at the end of the last chunk.
- a prefill-only request (`Workload.pooled`: an embedding or a cross-encoder score) is done
  at the end of its prefill: its one pooled output is the whole answer, nothing decodes and no
  KV outlives it. A step holds at most `ReplicaModel.max_batched_tokens` tokens (vLLM's
  --max-num-batched-tokens) and never takes less than `prefill_floor_s`, the time to read the
  weights once. Such a request may fan out (`Workload.fanout`): its tokens are split into
  parts sent to different replicas at once, and it is done when its last part is, as a search
  that scatters its rerank pairs over replicas and gathers the scores.
Units: seconds and tokens throughout.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import OrderedDict, deque
from dataclasses import dataclass, field

ROUTERS = ("round-robin", "least-loaded", "prefix-aware")
AUTOSCALERS = ("off", "queue", "utilisation")
LENGTH_DISTS = ("fixed", "uniform", "exponential")
ARRIVALS = ("poisson", "bursty")

# Request outcomes.
PENDING, DONE, SHED, TIMED_OUT, FAILED = 0, 1, 2, 3, 4
# The cache key of the part every group's prefix shares (`Workload.common_tokens`).
COMMON = -2

# Kubernetes HPA's default scale-up policy: at most double the replicas (or add 4) per period.
HPA_PERIOD_S = 15.0
# A utilisation gauge is an average over a window (DCGM exporters and dashboards average over
# tens of seconds); the queue is read as it stands at each scrape.
UTILISATION_WINDOW_S = 60.0


@dataclass(frozen=True)
class ReplicaModel:
    """One replica as the planner sizes it.

    max_batch: streams decoded together (vLLM --max-num-seqs at the knee); kv_tokens: tokens
    the KV pool holds (running streams and the prefix cache share it); step_base_s and
    step_per_stream_s: a decode step takes step_base_s + step_per_stream_s x batch;
    prefill_s_per_token and prefill_s_per_token2: prefilling n new tokens after c cached ones
    takes prefill_s_per_token x (n - c) + prefill_s_per_token2 x (n^2 - c^2) (the linear
    layers, then causal attention over the whole prompt); prefill_floor_s: the shortest a
    prefill step takes, however few its tokens (every weight read once; 0: not modelled);
    max_batched_tokens: the most prompt tokens one prefill step takes in (0: no cap; the
    first prompt is always taken in).
    """

    max_batch: int
    kv_tokens: int
    step_base_s: float
    step_per_stream_s: float
    prefill_s_per_token: float
    prefill_s_per_token2: float = 0.0
    prefill_floor_s: float = 0.0
    max_batched_tokens: int = 0

    def step_s(self, batch: int) -> float:
        return self.step_base_s + self.step_per_stream_s * batch

    def prefill_s(self, tokens: float, cached: float = 0.0) -> float:
        return self.prefill_s_per_token * (tokens - cached) + self.prefill_s_per_token2 * (
            tokens * tokens - cached * cached
        )


@dataclass(frozen=True)
class Workload:
    """Open-loop traffic: qps (req/s), mean input and output tokens and their spread
    ("fixed", "uniform" over ±50% of the mean, "exponential"), Poisson or bursty arrivals
    (gamma gaps with a squared coefficient of variation of 4), and what the prefix cache can
    serve:

    - a shared-prefix mix: a `prefix_share` of the requests (all by default) open with one
      of `prefix_groups` prefixes of `prefix_tokens` tokens (drawn uniformly; 0 groups:
      nothing shared). Such a prompt is its prefix, then its own tokens with the length
      spread (their mean: the mean prompt less the prefix), so a mix keeps the mean prompt.
      A replica holds a prefix's KV once, shared by every stream that uses it (vLLM's
      automatic prefix caching shares blocks by reference), and keeps it after they finish
      until it needs the room. The first `common_tokens` of every prefix are the same for
      all groups (a system prompt ahead of each conversation's own history): a replica holds
      them once, and a request whose group misses still finds them (it prefills its group's
      part and its own tokens);
    - groups that come and go, with `prefix_lifetime_s` (0: the groups stay for the whole
      run): a `prefix_share` of the requests repeat the prefix of a group opened within the
      last `prefix_lifetime_s` seconds (drawn uniformly among them), and every other request
      opens a new group with its own prefix (a new image, the follow-up questions on it coming
      within a minute). A new group misses on every replica, and its repeats hit only where
      the router sends them to a replica that holds it. `prefix_groups` groups are open at the
      start, opened evenly over the lifetime before it;
    - `cached_share`: the share of every other prompt a cache of its own serves (an agent's
      or a chat's earlier turns, kept between its requests): only the rest is prefilled,
      and the stream holds all its KV, as a plan's token hit rate counts it.

    `input_spread`: with the uniform spread, how far prompts' lengths spread either side of
    their mean, as a share of it (0.5: ±50%, as the capacity planner assumes by default; the
    planner's prompt_spread); outputs keep ±50%.

    `context` (0: none): no request is longer than the context (max-model-len): a prompt the
    spread would draw longer is cut to the context less its output, as a client must.

    `pooled`: every request is prefill only (an embedding, a rerank score): it answers with
    one pooled output at the end of its prefill, so its latency is its TTFT and TPOT does not
    apply; `output_tokens` is read as 1. `fanout` (pooled only): a request's `input_tokens`
    are split over that many parts, each with the length spread around input_tokens / fanout,
    routed to different replicas when there are enough; the request is done when all are.
    """

    qps: float
    input_tokens: float
    output_tokens: float
    length_dist: str = "uniform"
    arrivals: str = "poisson"
    prefix_groups: int = 0
    prefix_tokens: int = 0
    prefix_share: float = 1.0
    cached_share: float = 0.0
    common_tokens: int = 0
    context: int = 0
    pooled: bool = False
    fanout: int = 1
    input_spread: float = 0.5
    prefix_lifetime_s: float = 0.0


@dataclass(frozen=True)
class Scenario:
    """What happens to the fleet: replicas at the start, the window (s), the random seed, the
    router and autoscaler, chunked prefill, and the events: a replica killed at kill_at (and
    back, cold, restart_after seconds later), a burst of burst_factor x the load from burst_at
    for burst_seconds (None: to the end). Requests wait at most timeout_s for their first
    token and a replica queues at most max_queue before the router sheds.

    warm_cache: the replicas start with the prefixes a fleet that has served this traffic
    holds (the common prefix, and the groups the router sent each replica most recently, as
    many as its KV pool keeps beside a full batch), so the window measures the cache the
    router keeps rather than a cold fleet's first sightings."""

    replicas: int
    seconds: float
    seed: int = 1
    router: str = "round-robin"
    autoscale: str = "off"
    chunked_prefill: bool = False
    chunk_tokens: int = 8192
    kill_at: float | None = None
    restart_after: float | None = None
    burst_at: float | None = None
    burst_factor: float = 2.0
    burst_seconds: float | None = None
    cold_start_s: float = 60.0
    max_replicas: int = 64
    queue_target: float = 4.0  # waiting requests per replica the queue autoscaler aims at
    utilisation_target: float = 0.8
    timeout_s: float = 30.0
    max_queue: int = 1024
    ttft_slo_s: float = 0.3
    tpot_slo_s: float = 0.05
    samples: int = 120  # points in each time series
    warm_cache: bool = False


@dataclass
class Result:
    """Every request's times, the time series and the run's counters (`figures()` sums up)."""

    seconds: float
    arrival: list[float]
    first_token: list[float]  # NaN: no first token within the window
    finish: list[float]  # NaN: not finished within the window
    output_tokens: list[int]
    status: list[int]
    prefix_hit: list[bool]
    admitted_at: list[float]  # when its prefill began (NaN: never)
    left: list[float]  # when it left the system, however (NaN: still in it at the end)
    series: list[tuple[float, int, int, int]]  # (t, waiting, running, replicas ready)
    events: list[tuple[float, str]]
    area_in_system: float  # integral of the number of requests in the system over time
    prefill_tokens: int  # prompt tokens actually prefilled (after prefix-cache hits)
    replicas_added: list[float]  # when each autoscaled replica became ready
    ttft_slo_s: float
    tpot_slo_s: float
    extra: dict = field(default_factory=dict)
    pooled: bool = False  # prefill-only requests: latency is TTFT, no TPOT
    # Each request's own prefill time, as if the GPU were its alone (NaN: never prefilled):
    # the rest of its TTFT is queueing, for a slot or behind other prompts' prefills.
    own_prefill: list[float] = field(default_factory=list)


class _Replica:
    __slots__ = (
        "index",
        "ready",
        "alive",
        "waiting",
        "running",
        "steps",
        "phase",
        "phase_start",
        "phase_dt",
        "phase_steps",
        "phase_end",
        "admitted",
        "version",
        "cache",
        "cache_tokens",
        "users",
        "busy_area",
        "busy_since",
        "reserved",
    )

    def __init__(self, index: int, ready: bool) -> None:
        self.index = index
        self.ready = ready
        self.alive = True
        self.waiting: deque[int] = deque()
        self.running: list[tuple[int, int]] = []  # heap of (finish step, request)
        self.steps = 0  # decode steps done since the replica started
        self.phase = "idle"  # idle | prefill | decode | chunk
        self.phase_start = 0.0
        self.phase_dt = 0.0
        self.phase_steps = 0  # self.steps when the phase began
        self.phase_end = math.inf
        self.admitted: list[int] = []
        self.version = 0
        self.cache: OrderedDict[int, None] = OrderedDict()  # prefix ids, least recent first
        self.cache_tokens = 0  # KV tokens the cached prefixes hold, once each
        self.users: dict[int, int] = {}  # prefix id -> streams admitted or running on it
        self.busy_area = 0.0  # integral of running streams over time (for utilisation)
        self.busy_since = 0.0
        self.reserved = 0  # KV tokens of running and admitted streams, their prefixes apart

    def load(self) -> int:
        return len(self.running) + len(self.admitted) + len(self.waiting)

    def queued_first(self) -> tuple[int, int]:
        """Least-loaded's order: fewest requests waiting or in prefill (num_requests_waiting),
        then fewest decoding: a replica busy prefilling makes a newcomer wait the longest."""
        return len(self.waiting) + len(self.admitted), len(self.running)


class SimulationError(ValueError):
    """A scenario or workload the simulator refuses, told in one sentence."""


def _lengths(rng: random.Random, mean: float, dist: str, n: int, spread: float = 0.5) -> list[int]:
    if dist == "fixed":
        return [max(1, round(mean))] * n
    if dist == "uniform":
        low = 1 - spread
        return [max(1, round(mean * (low + 2 * spread * rng.random()))) for _ in range(n)]
    return [max(1, round(rng.expovariate(1 / mean))) for _ in range(n)]


def arrival_times(workload: Workload, scenario: Scenario, rng: random.Random) -> list[float]:
    """Arrival times in [0, seconds): Poisson (or gamma-gap bursty) at workload.qps, times
    burst_factor inside the burst. The process restarts at the burst's edges (memoryless for
    Poisson; a close enough cut for the bursty one)."""
    edges = [0.0, scenario.seconds]
    if scenario.burst_at is not None and 0 <= scenario.burst_at < scenario.seconds:
        end = scenario.seconds
        if scenario.burst_seconds is not None:
            end = min(end, scenario.burst_at + scenario.burst_seconds)
        edges = sorted({0.0, scenario.burst_at, end, scenario.seconds})
    times: list[float] = []
    for start, stop in zip(edges, edges[1:], strict=False):
        in_burst = (
            scenario.burst_at is not None
            and start >= scenario.burst_at
            and (
                scenario.burst_seconds is None or start < scenario.burst_at + scenario.burst_seconds
            )
        )
        rate = workload.qps * (scenario.burst_factor if in_burst else 1.0)
        t = start
        shape = 0.25
        while True:
            if workload.arrivals == "bursty":
                t += rng.gammavariate(shape, 1 / (rate * shape))
            else:
                t += rng.expovariate(rate)
            if t >= stop:
                break
            times.append(t)
    return times


def _validate(replica: ReplicaModel, workload: Workload, scenario: Scenario) -> None:
    if scenario.router not in ROUTERS:
        raise SimulationError(f"router must be one of {', '.join(ROUTERS)}.")
    if scenario.autoscale not in AUTOSCALERS:
        raise SimulationError(f"autoscale must be one of {', '.join(AUTOSCALERS)}.")
    if workload.length_dist not in LENGTH_DISTS:
        raise SimulationError(f"length_dist must be one of {', '.join(LENGTH_DISTS)}.")
    if not 0 <= workload.input_spread <= 1:
        raise SimulationError("input_spread must be between 0 and 1.")
    if workload.arrivals not in ARRIVALS:
        raise SimulationError(f"arrivals must be one of {', '.join(ARRIVALS)}.")
    if replica.max_batch < 1:
        raise SimulationError("A replica must decode at least one stream.")
    if scenario.replicas < 1:
        raise SimulationError("The fleet needs at least one replica.")
    if scenario.seconds <= 0 or workload.qps <= 0:
        raise SimulationError("The window and the load must be positive.")
    if min(replica.step_base_s + replica.step_per_stream_s, replica.step_base_s) <= 0:
        raise SimulationError("A decode step must take some time.")
    if not 0 <= workload.prefix_share <= 1 or not 0 <= workload.cached_share < 1:
        raise SimulationError("A prefix share must be between 0 and 1 (a cached share below 1).")
    if workload.fanout < 1 or (workload.fanout > 1 and not workload.pooled):
        raise SimulationError("Only a prefill-only request fans out, over 1 or more parts.")
    if workload.pooled and (
        (workload.prefix_groups and workload.prefix_tokens) or workload.cached_share
    ):
        raise SimulationError(
            "A prefill-only request keeps no KV after it, so there is no prefix cache to hit."
        )
    if workload.prefix_lifetime_s < 0:
        raise SimulationError("A prefix's lifetime cannot be negative.")
    if workload.fanout > workload.input_tokens:
        raise SimulationError("A request cannot fan out into more parts than it has tokens.")


def simulate(replica: ReplicaModel, workload: Workload, scenario: Scenario) -> Result:
    """Run the fleet for scenario.seconds and return every request's times and the series.

    Deterministic for a seed. Requests still in the system at the end keep NaN times; the
    figures count them apart (`in_flight`)."""
    _validate(replica, workload, scenario)
    rng = random.Random(scenario.seed)
    requests = arrival_times(workload, scenario, rng)
    # The simulation runs on parts: a request is one part unless it fans out.
    k = workload.fanout
    arrivals = [t for t in requests for _ in range(k)]
    parent = [j for j in range(len(requests)) for _ in range(k)]
    n = len(arrivals)
    in_tok = _lengths(
        rng, workload.input_tokens / k, workload.length_dist, n, workload.input_spread
    )
    if workload.pooled:
        out_tok = [1] * n
    else:
        out_tok = _lengths(rng, workload.output_tokens, workload.length_dist, n)
    open_parts = [k] * len(requests)
    placed: list[set[int]] = [set() for _ in requests] if k > 1 else []
    groups = workload.prefix_groups
    shared = min(workload.prefix_tokens, int(workload.input_tokens) - 1) if groups else 0
    if groups and shared <= 0:
        groups = 0
    # The part every group's prefix shares (held once per replica) and each group's own part.
    common = min(max(workload.common_tokens, 0), shared) if groups else 0
    group_kv = shared - common
    if groups and workload.prefix_lifetime_s > 0:
        prefix = _turnover(arrivals, groups, workload.prefix_share, workload.prefix_lifetime_s, rng)
    else:
        prefix = [rng.randrange(groups) for _ in range(n)] if groups else [-1] * n
    if groups and workload.prefix_share < 1 and workload.prefix_lifetime_s <= 0:
        prefix = [p if rng.random() < workload.prefix_share else -1 for p in prefix]
    if groups:
        # A prompt with a prefix: the prefix, then its own tokens with the same spread.
        own_mean = workload.input_tokens - shared
        scale = own_mean / workload.input_tokens
        for i in range(n):
            if prefix[i] >= 0:
                in_tok[i] = shared + max(1, round(in_tok[i] * scale))
    if workload.context:
        for i in range(n):
            out_tok[i] = min(out_tok[i], workload.context - 2)
            least = shared + 1 if prefix[i] >= 0 else 1
            in_tok[i] = max(min(in_tok[i], workload.context - out_tok[i]), least)
    # Tokens of each prompt the cache serves, and the KV its stream holds on its own.
    cached_tok = [
        shared if p >= 0 else min(int(workload.cached_share * k), k - 1)
        for p, k in zip(prefix, in_tok, strict=True)
    ]
    own_kv = [
        k - (shared if p >= 0 else 0) + o for p, k, o in zip(prefix, in_tok, out_tok, strict=True)
    ]
    nan = math.nan
    first = [nan] * n
    finish = [nan] * n
    status = [PENDING] * n
    hit = [False] * n
    admitted_at = [nan] * n  # when its prefill began
    own_prefill = [nan] * n
    left = [nan] * n
    patience_set = [False] * n

    end = scenario.seconds
    reps = [_Replica(i, True) for i in range(scenario.replicas)]
    ready: list[_Replica] = list(reps)
    heap: list[tuple[float, int, int, int, int]] = []  # (time, order, kind, a, b)
    order = 0
    ARRIVE, WAKE, KILL, READY, SCALE, TIMEOUT = range(6)  # noqa: N806

    def push(t: float, kind: int, a: int = 0, b: int = 0) -> None:
        nonlocal order
        order += 1
        heapq.heappush(heap, (t, order, kind, a, b))

    for i, t in enumerate(arrivals):
        push(t, ARRIVE, i)
    if scenario.kill_at is not None and scenario.kill_at < end:
        push(scenario.kill_at, KILL, scenario.replicas - 1)
    if scenario.autoscale != "off":
        push(HPA_PERIOD_S, SCALE)
    if scenario.warm_cache and groups:
        shared_own = [own_kv[i] for i in range(n) if prefix[i] >= 0]
        beside = replica.max_batch * (sum(shared_own) / len(shared_own) if shared_own else 0)
        room = replica.kv_tokens - beside
        _warm(reps, scenario.router, groups, group_kv, common, room, scenario.seed)

    last_area_t = 0.0
    in_system = 0
    area = 0.0
    waiting_total = 0
    running_total = 0
    prefill_tokens = 0
    rr = 0
    series: list[tuple[float, int, int, int]] = []
    sample_dt = end / scenario.samples
    next_sample = 0.0
    events: list[tuple[float, str]] = []
    added: list[float] = []
    pending_ready = 0
    util_hist: deque[tuple[float, float, int]] = deque()  # (t, busy area, capacity slots)

    def advance(r: _Replica, t: float) -> None:
        """Count the decode steps r has done up to the boundary t of its current phase."""
        if r.phase in ("decode", "chunk") and r.phase_dt > 0:
            r.steps = r.phase_steps + round((t - r.phase_start) / r.phase_dt)

    def busy(r: _Replica, t: float) -> None:
        # A prefill-only replica holds no streams: it is busy while it prefills.
        if workload.pooled:
            streams = replica.max_batch if r.phase == "prefill" else 0
        else:
            streams = len(r.running)
        r.busy_area += streams * (t - r.busy_since)
        r.busy_since = t

    def wake_at(r: _Replica, t: float) -> None:
        r.version += 1
        push(t, WAKE, r.index, r.version)

    def depart(i: int, t: float, outcome: int) -> None:
        nonlocal in_system
        status[i] = outcome
        open_parts[parent[i]] -= 1
        if not open_parts[parent[i]]:  # its last part: the request leaves
            in_system -= 1
        left[i] = t
        if outcome == DONE:
            finish[i] = t

    def route(i: int, t: float) -> None:
        nonlocal rr, waiting_total
        if not ready:
            depart(i, t, SHED)
            return
        # A fanned-out request's parts go to different replicas while there are enough.
        pool = ready
        if placed:
            taken = placed[parent[i]]
            pool = [x for x in ready if x.index not in taken] or ready
        if scenario.router == "round-robin":
            rr = (rr + 1) % len(ready)
            r = ready[rr]
            if pool is not ready:
                r = next(x for x in ready[rr:] + ready[:rr] if x in pool)
        elif scenario.router == "prefix-aware" and prefix[i] >= 0:
            # The least busy replica that holds the prefix (every replica, for a prefix all
            # requests share); none holds it: rendezvous hashing picks its owner, which keeps
            # a prefix on one replica as replicas come and go. A replica far busier than the
            # least loaded one gives the request away.
            holders = [x for x in ready if prefix[i] in x.cache]
            if holders:
                r = min(holders, key=_Replica.queued_first)
            else:
                r = _prefix_owner(prefix[i], ready)
            least = min(ready, key=_Replica.queued_first)
            if r.load() > least.load() + replica.max_batch // 2:
                r = least
        else:
            rr = (rr + 1) % len(ready)
            r = min([x for x in ready[rr:] + ready[:rr] if x in pool], key=_Replica.queued_first)
        if placed:
            placed[parent[i]].add(r.index)
        if len(r.waiting) >= scenario.max_queue:
            depart(i, t, SHED)
            return
        r.waiting.append(i)
        waiting_total += 1
        if not patience_set[i] and r.load() > replica.max_batch:
            # It will queue: the client gives up timeout_s after it sent the request.
            patience_set[i] = True
            push(arrivals[i] + scenario.timeout_s, TIMEOUT, i)
        if r.phase == "idle":
            wake_at(r, t)
        elif r.phase == "decode":
            # Joins at the next step boundary.
            k = math.ceil((t - r.phase_start) / r.phase_dt - 1e-9)
            boundary = r.phase_start + k * r.phase_dt
            if boundary < r.phase_end:
                r.phase_end = boundary
                wake_at(r, boundary)

    def kv_room(r: _Replica, i: int) -> int:
        """KV tokens request i needs on r beyond what r holds: its own, and its prefix's
        unless r has it cached."""
        p = prefix[i]
        if p < 0:
            return own_kv[i]
        return (
            own_kv[i]
            + (group_kv if p not in r.cache else 0)
            + (common if common and COMMON not in r.cache else 0)
        )

    def evict(r: _Replica, need: int, keep: int) -> None:
        """Drop cached prefixes no stream uses, least recent first, until `need` tokens
        are free (or none is left to drop); `keep`, the newcomer's own, and the common
        prefix it opens with stay."""
        for p in list(r.cache):
            if r.reserved + r.cache_tokens + need <= replica.kv_tokens:
                return
            if p != keep and not (keep >= 0 and p == COMMON) and not r.users.get(p):
                del r.cache[p]
                r.cache_tokens -= common if p == COMMON else group_kv

    def release(r: _Replica, i: int) -> None:
        r.reserved -= own_kv[i]
        p = prefix[i]
        if p >= 0:
            r.users[p] -= 1
            if common:
                r.users[COMMON] -= 1

    def prefill_time(r: _Replica, i: int) -> float:
        """Seat i's KV on r (its prefix cached once, shared) and return its prefill time."""
        nonlocal prefill_tokens
        p = prefix[i]
        cached = 0
        if p >= 0:
            # A cached block counts only behind cached blocks: the group's part hits when the
            # common part before it does (it is used by every group, so it is the last evicted).
            common_hit = not common or COMMON in r.cache
            if p in r.cache and common_hit:
                r.cache.move_to_end(p)
                cached = group_kv
                hit[i] = True
            elif p not in r.cache:  # a miss prefills its group's part and leaves it cached
                r.cache[p] = None
                r.cache_tokens += group_kv
            r.users[p] = r.users.get(p, 0) + 1
            if common:
                if COMMON in r.cache:
                    r.cache.move_to_end(COMMON)
                    cached += common
                else:
                    r.cache[COMMON] = None
                    r.cache_tokens += common
                r.users[COMMON] = r.users.get(COMMON, 0) + 1
        else:
            cached = cached_tok[i]
            hit[i] = cached > 0
        prefill_tokens += in_tok[i] - cached
        own_prefill[i] = replica.prefill_s(in_tok[i], cached)
        return own_prefill[i]

    def step(r: _Replica, t: float) -> None:
        """r is at a step boundary at t: finish streams, seat the admitted, admit, plan."""
        nonlocal waiting_total, running_total
        advance(r, t)
        busy(r, t)
        if r.phase in ("prefill", "chunk") and t >= r.phase_end - 1e-12:
            for i in r.admitted:  # their first token comes with the end of the prefill
                first[i] = t
                heapq.heappush(r.running, (r.steps + out_tok[i] - 1, i))
                running_total += 1
            r.admitted = []
        while r.running and r.running[0][0] <= r.steps:
            _, i = heapq.heappop(r.running)
            running_total -= 1
            release(r, i)
            depart(i, t, DONE)
        if r.admitted:  # mid-chunk: a stream finished, the chunked phase goes on
            dt = r.phase_dt
            nxt = r.phase_end
            if r.running:
                nxt = min(nxt, r.phase_start + (r.running[0][0] - r.phase_steps) * dt)
            wake_at(r, nxt)
            return
        admit: list[int] = []
        prefills: list[float] = []
        step_tokens = 0
        while r.waiting and len(r.running) + len(admit) < replica.max_batch:
            i = r.waiting[0]
            if status[i] != PENDING:  # timed out while waiting
                r.waiting.popleft()
                continue
            budget = replica.max_batched_tokens
            if budget and admit and step_tokens + in_tok[i] > budget:
                break  # the step's token budget is spent: it waits for the next step
            step_tokens += in_tok[i]
            need = kv_room(r, i)
            if r.reserved + r.cache_tokens + need > replica.kv_tokens:
                evict(r, need, prefix[i])
                if r.reserved + r.cache_tokens + need > replica.kv_tokens and (r.running or admit):
                    break
            r.waiting.popleft()
            waiting_total -= 1
            r.reserved += own_kv[i]
            admitted_at[i] = t
            admit.append(i)
            prefill_s = prefill_time(r, i)  # seats its prefix, so the next one sees it
            prefills.append(prefill_s)
        if admit:
            # A step is never shorter than reading the weights once.
            prefill = max(sum(prefills), replica.prefill_floor_s)
            r.admitted = admit
            if scenario.chunked_prefill and r.running:
                chunks = max(1, math.ceil(sum(in_tok[i] for i in admit) / scenario.chunk_tokens))
                dt = replica.step_s(len(r.running)) + prefill / chunks
                r.phase, r.phase_start, r.phase_dt, r.phase_steps = "chunk", t, dt, r.steps
                r.phase_end = t + chunks * dt
                nxt = min(r.phase_end, t + (r.running[0][0] - r.steps) * dt)
            else:
                r.phase, r.phase_start, r.phase_dt, r.phase_steps = "prefill", t, prefill, r.steps
                r.phase_end = nxt = t + prefill
            wake_at(r, nxt)
        elif r.running:
            dt = replica.step_s(len(r.running))
            r.phase, r.phase_start, r.phase_dt, r.phase_steps = "decode", t, dt, r.steps
            r.phase_end = nxt = t + (r.running[0][0] - r.steps) * dt
            wake_at(r, nxt)
        else:
            r.phase, r.phase_end = "idle", math.inf

    def kill(r: _Replica, t: float) -> None:
        nonlocal waiting_total, running_total
        r.alive = False
        r.version += 1
        if r in ready:
            ready.remove(r)
        for _, i in r.running:
            running_total -= 1
            depart(i, t, FAILED)
        for i in r.admitted:
            depart(i, t, FAILED)
        r.running, r.admitted = [], []
        queued = [i for i in r.waiting if status[i] == PENDING]
        waiting_total -= len(queued)
        r.waiting.clear()
        r.phase = "idle"
        events.append((t, f"replica {r.index + 1} dies"))
        for i in queued:  # the router sends what was waiting elsewhere
            route(i, t)

    def autoscale(t: float) -> None:
        current = len(ready) + pending_ready
        if not ready:
            # No replica to measure. An empty fleet (every replica dead, none starting) gets
            # one back: an autoscaler's floor is one replica, which it keeps even when no
            # metric can be read (every request is shed meanwhile).
            if current == 0:
                start(t, 1)
            return
        if scenario.autoscale == "queue":
            metric, target = waiting_total / len(ready), scenario.queue_target
        else:
            for r in ready:
                busy(r, t)
            area_now = sum(r.busy_area for r in reps)
            util_hist.append((t, area_now, len(ready) * replica.max_batch))
            while util_hist and util_hist[0][0] < t - UTILISATION_WINDOW_S:
                util_hist.popleft()
            t0, a0, _ = util_hist[0]
            if t - t0 < HPA_PERIOD_S / 2:
                return
            slots = sum(c for _, _, c in util_hist) / len(util_hist)
            metric, target = (
                min((area_now - a0) / ((t - t0) * slots), 1.0),
                (scenario.utilisation_target),
            )
        if metric <= target:
            return
        desired = math.ceil(len(ready) * metric / target)
        desired = min(desired, current + max(current, 4), scenario.max_replicas)
        if desired > current:
            start(t, desired - current)

    def start(t: float, count: int) -> None:
        """The autoscaler asks for `count` more replicas, ready after a cold start."""
        nonlocal pending_ready
        for _ in range(count):
            r = _Replica(len(reps), False)
            reps.append(r)
            pending_ready += 1
            push(t + scenario.cold_start_s, READY, r.index)
        events.append((t, f"autoscaler asks for {count} more"))

    while heap:
        t, _, kind, a, b = heapq.heappop(heap)
        if t > end:
            break
        while next_sample <= t:
            series.append((next_sample, waiting_total, running_total, len(ready)))
            next_sample += sample_dt
        area += in_system * (t - last_area_t)
        last_area_t = t
        if kind == ARRIVE:
            if a == 0 or parent[a - 1] != parent[a]:  # a request's first part
                in_system += 1
            route(a, t)
        elif kind == WAKE:
            r = reps[a]
            if r.alive and b == r.version:
                step(r, t)
        elif kind == TIMEOUT:
            if status[a] == PENDING and math.isnan(admitted_at[a]):  # still waiting: gives up
                waiting_total -= 1
                depart(a, t, TIMED_OUT)
        elif kind == KILL:
            r = reps[a]
            if r.alive:
                kill(r, t)
                if scenario.restart_after is not None:
                    fresh = _Replica(len(reps), False)
                    reps.append(fresh)
                    pending_ready += 1
                    push(t + scenario.restart_after, READY, fresh.index)
        elif kind == READY:
            r = reps[a]
            r.ready = True
            r.busy_since = t
            ready.append(r)
            pending_ready -= 1
            added.append(t)
            events.append((t, f"replica {r.index + 1} ready (cold start)"))
        elif kind == SCALE:
            autoscale(t)
            push(t + HPA_PERIOD_S, SCALE)
    area += in_system * (end - last_area_t)
    while next_sample <= end + 1e-9 and len(series) <= scenario.samples:
        series.append((next_sample, waiting_total, running_total, len(ready)))
        next_sample += sample_dt
    if k > 1:  # each request's times are its last part's
        arrivals, first, finish, admitted_at, left, status, hit, out_tok = _gather(
            k, requests, first, finish, admitted_at, left, status
        )
        own_prefill = [max(own_prefill[j * k : (j + 1) * k]) for j in range(len(requests))]
    return Result(
        seconds=end,
        arrival=arrivals,
        first_token=first,
        finish=finish,
        output_tokens=out_tok,
        status=status,
        prefix_hit=hit,
        series=series,
        events=events,
        area_in_system=area,
        prefill_tokens=prefill_tokens,
        replicas_added=added,
        ttft_slo_s=scenario.ttft_slo_s,
        tpot_slo_s=scenario.tpot_slo_s,
        admitted_at=admitted_at,
        left=left,
        extra={"waiting_at_end": waiting_total, "in_system_at_end": in_system},
        pooled=workload.pooled,
        own_prefill=own_prefill,
    )


def _turnover(
    arrivals: list[float], groups: int, share: float, lifetime: float, rng: random.Random
) -> list[int]:
    """Each request's group when groups come and go (`Workload.prefix_lifetime_s`): a `share`
    of the requests repeat a group opened within `lifetime` seconds before they arrive, the
    rest open a new one; `groups` are open at the start. A group's id is its place in the
    order the groups opened, so the open ones are a run of ids ending with the newest."""
    opened = [lifetime * ((g + 0.5) / groups - 1) for g in range(groups)]
    oldest = 0  # the first id still open
    chosen = []
    for t in arrivals:
        while oldest < len(opened) and opened[oldest] < t - lifetime:
            oldest += 1
        if oldest < len(opened) and rng.random() < share:
            chosen.append(rng.randrange(oldest, len(opened)))
        else:
            chosen.append(len(opened))
            opened.append(t)
    return chosen


def _prefix_owner(p: int, ready: list[_Replica]) -> _Replica:
    """Prefix-aware routing's owner of prefix `p`: rendezvous hashing over the ready replicas
    keeps a prefix on one replica as replicas come and go."""
    return max(ready, key=lambda x: hash((p, x.index)))


def _warm(
    reps: list[_Replica],
    router: str,
    groups: int,
    group_kv: int,
    common: int,
    room: float,
    seed: int,
) -> None:
    """Fill the replicas' caches as serving this traffic before the window leaves them: the
    common prefix on every replica, then the groups of a stream of earlier requests (drawn
    apart from the window's own, four per group) sent where the router sends them at no
    load, each replica keeping the most recent that fit in `room` tokens."""
    rng = random.Random(f"warm-{seed}")
    rr = 0
    for r in reps:
        if common:
            r.cache[COMMON] = None
            r.cache_tokens += common
    for _ in range(4 * groups):
        p = rng.randrange(groups)
        if router == "prefix-aware":
            r = _prefix_owner(p, reps)
        else:  # round-robin, and least-loaded at no load: each replica in turn
            rr = (rr + 1) % len(reps)
            r = reps[rr]
        if p in r.cache:
            r.cache.move_to_end(p)
        else:
            r.cache[p] = None
            r.cache_tokens += group_kv
        if common:
            r.cache.move_to_end(COMMON)
        while r.cache_tokens > room and len(r.cache) > (2 if common else 1):
            oldest = next(q for q in r.cache if q != COMMON)
            del r.cache[oldest]
            r.cache_tokens -= group_kv


def _gather(
    k: int,
    requests: list[float],
    first: list[float],
    finish: list[float],
    admitted_at: list[float],
    left: list[float],
    status: list[int],
) -> tuple:
    """Fold the parts of fanned-out requests (k consecutive parts each) into the requests:
    a time is the last part's (NaN while any part has none), the outcome is DONE when every
    part is done, PENDING while any part is still in the system, else the first part's loss."""

    def last(values: list[float], j: int) -> float:
        part = values[j * k : (j + 1) * k]
        return math.nan if any(math.isnan(v) for v in part) else max(part)

    m = len(requests)
    outcome = []
    for j in range(m):
        part = status[j * k : (j + 1) * k]
        if all(s == DONE for s in part):
            outcome.append(DONE)
        elif PENDING in part:
            outcome.append(PENDING)
        else:
            outcome.append(next(s for s in part if s != DONE))
    return (
        list(requests),
        [last(first, j) for j in range(m)],
        [last(finish, j) if outcome[j] == DONE else math.nan for j in range(m)],
        [last(admitted_at, j) for j in range(m)],
        [last(left, j) for j in range(m)],
        outcome,
        [False] * m,
        [1] * m,
    )
