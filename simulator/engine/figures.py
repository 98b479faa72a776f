"""What a run comes to: latency percentiles, goodput against the SLO, Little's law, when the
SLO broke and when it recovered, and the one-line verdict. Reads a `fleet.Result`."""

from __future__ import annotations

import math
from typing import Any

from .fleet import DONE, FAILED, PENDING, SHED, TIMED_OUT, Result

BIN_S = 5.0  # TTFT is charted, and judged for "when did it break", per 5 s of arrivals
# ...in windows of whole bins holding at least this many requests: the p99 of fewer is their
# slowest but one or their slowest, so at low load one unlucky request would "break" the SLO.
MIN_JUDGED = 100
# A run is said to recover only when the SLO then holds in every bin for this long to the end
# of the window: one good bin after the last bad one (at 235 s of 240) is luck, not recovery.
RECOVERY_HOLD_S = 30.0
# A saved run's TTFT bin whose p99 request never got a first token in time (math.inf in
# `ttft_bins`): JSON has no infinity, and None is a bin with no request to judge.
NEVER = "never"


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0..100) by the nearest rank; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(math.ceil(q / 100 * len(ordered)), 1)
    return ordered[rank - 1]


def _ms(x: float | None) -> float | None:
    return None if x is None else round(x * 1000, 3)


def _ttft_by_bin(result: Result, bin_s: float, *, waiting: bool = False) -> list[list[float]]:
    """The TTFTs in s of the requests that arrived in each bin of the window; a request that
    timed out or was shed counts as infinitely late. With `waiting`, so does one still
    waiting for its first token at the end of the window, longer than the TTFT SLO: an
    overloaded run's last requests never leave its queue, and without them its end looks
    calm."""
    n_bins = max(1, math.ceil(result.seconds / bin_s))
    bins: list[list[float]] = [[] for _ in range(n_bins)]
    for a, f, s in zip(result.arrival, result.first_token, result.status, strict=True):
        k = min(int(a // bin_s), n_bins - 1)
        if not math.isnan(f):
            bins[k].append(f - a)
        elif s in (SHED, TIMED_OUT):
            bins[k].append(math.inf)
        elif waiting and s == PENDING and result.seconds - a > result.ttft_slo_s:
            bins[k].append(math.inf)
    return bins


def ttft_bins(result: Result, bin_s: float = BIN_S) -> list[tuple[float, float | None]]:
    """(bin start, p99 TTFT in s of the requests that arrived in it) over the window, counted
    as `slo_breaks` counts them: math.inf where that p99 request never got its first token in
    time (shed, timed out, or still waiting past the SLO at the end), None where no request
    arrived (at low load most bins are empty: a gap, not a breach)."""
    bins = _ttft_by_bin(result, bin_s, waiting=True)
    return [(k * bin_s, percentile(b, 99)) for k, b in enumerate(bins)]


def tpot_bins(result: Result, bin_s: float = BIN_S) -> list[tuple[float, float | None]]:
    """(bin start, p99 TPOT in s of the requests that arrived in it and finished) over the
    window: None for a bin where none finished (a prefill-only run decodes nothing)."""
    n_bins = max(1, math.ceil(result.seconds / bin_s))
    bins: list[list[float]] = [[] for _ in range(n_bins)]
    if not result.pooled:
        for i, a in enumerate(result.arrival):
            out = result.output_tokens[i]
            if result.status[i] == DONE and out > 1:
                k = min(int(a // bin_s), n_bins - 1)
                bins[k].append((result.finish[i] - result.first_token[i]) / (out - 1))
    return [(k * bin_s, percentile(b, 99)) for k, b in enumerate(bins)]


def qps_text(qps: float) -> str:
    """A load as the verdict says it: to six significant figures, trailing zeros dropped
    ("0.001", "12.5", "400"), so a light load never reads as 0."""
    return f"{qps:g}"


def goodput_text(share: float) -> str:
    """A goodput share as a percentage to one decimal ("99.9%", "23%"), the one rounding the
    verdict and the tables share: a run that lost a request never reads 100%, nor one that
    served one 0%."""
    if share >= 1:
        return "100%"
    if share <= 0:
        return "0%"
    text = f"{min(max(share * 100, 0.1), 99.9):.1f}"
    return f"{text.removesuffix('.0')}%"


def slo_breaks(result: Result) -> list[tuple[float, float]]:
    """When the TTFT SLO broke: (from, to) in s of each stretch of arrivals whose p99 TTFT is
    over it. Arrivals are judged in windows of whole bins holding MIN_JUDGED requests at least
    (a short tail joins the window before it). In a window over its SLO, the break starts at
    the bin of the request that uses up the 1% a p99 allows to be slow, and ends with the bin
    of its last slow request: so at low load, where a window spans minutes, the times are
    still those of the requests that broke it."""
    bins = _ttft_by_bin(result, BIN_S, waiting=True)
    windows: list[list[int]] = []
    held: list[int] = []
    count = 0
    for k, values in enumerate(bins):
        held.append(k)
        count += len(values)
        if count >= MIN_JUDGED:
            windows.append(held)
            held, count = [], 0
    if held:
        if windows and count < MIN_JUDGED:
            windows[-1] += held
        else:
            windows.append(held)
    breaks = []
    for window in windows:
        n = sum(len(bins[k]) for k in window)
        allowed = n - math.ceil(0.99 * n)  # slow requests a p99 within the SLO allows
        slow = [(k, sum(v > result.ttft_slo_s for v in bins[k])) for k in window]
        if not n or sum(c for _, c in slow) <= allowed:
            continue
        seen = 0
        for k, c in slow:
            seen += c
            if seen > allowed:
                first = k
                break
        last = max(k for k, c in slow if c)
        stretch = (first * BIN_S, min((last + 1) * BIN_S, result.seconds))
        if breaks and breaks[-1][1] >= stretch[0]:  # one break across two windows
            stretch = (breaks.pop()[0], stretch[1])
        breaks.append(stretch)
    return breaks


def decodes_nothing(result: Result) -> bool:
    """Whether no request of the run decodes a token past its first: a prefill-only fleet, or
    one whose every answer is a single token (a score, a label), which comes with the end of
    its prefill. Its TTFT is then its whole latency and there is no TPOT."""
    return result.pooled or (bool(result.output_tokens) and max(result.output_tokens) <= 1)


def figures(result: Result, *, wall_s: float | None = None) -> dict[str, Any]:
    """The run's figures (times in ms, rates in req/s): ttft_p50_ms, ttft_p99_ms,
    tpot_p50_ms, tpot_p99_ms, e2e_p99_ms, wait_mean_s, queued_p99_ms (the p99 of the part of
    a TTFT not spent on the request's own prefill: waiting for a batch slot or behind other
    prompts' prefills), own_prefill_p99_ms (the p99 of its own prefill), arrived, completed,
    shed, timed_out, failed, in_flight, goodput (req/s that met both SLOs), goodput_share (of
    the requests that left), holds_slo,
    throughput_tok_s, prefix_hit_rate, prefill_tokens, queue_max, replicas_min/max,
    little_law (L, lambda, W) and little_law_error = |L - lambda W| / L, slo_broken_at_s,
    recovered_at_s, replicas_added_at_s, prefill_only.

    A prefill-only run (`result.pooled`, or any run that `decodes_nothing`) answers each
    request with its one output: its TTFT is the whole latency (ttft and e2e agree), TPOT does
    not apply (None) and the SLO is the p99 latency alone."""
    n = len(result.arrival)
    T = result.seconds
    ttft, tpot, e2e, waits, queued = [], [], [], [], []
    own = [t for t in result.own_prefill if not math.isnan(t)]
    prefill_only = decodes_nothing(result)
    good = 0
    tokens = 0
    sojourn = 0.0
    for i in range(n):
        a, f, d = result.arrival[i], result.first_token[i], result.finish[i]
        if not math.isnan(f):
            ttft.append(f - a)
            if result.own_prefill:
                queued.append(max(f - a - result.own_prefill[i], 0.0))
        if not math.isnan(result.admitted_at[i]):
            waits.append(result.admitted_at[i] - a)
        if result.status[i] == DONE:
            out = result.output_tokens[i]
            per_token = (d - f) / (out - 1) if out > 1 else 0.0
            if not prefill_only:
                tpot.append(per_token)
            e2e.append(d - a)
            tokens += out
            if f - a <= result.ttft_slo_s and per_token <= result.tpot_slo_s:
                good += 1
        # Little's law over the window: each request's time in the system within [0, T].
        left = result.left[i]
        sojourn += (T if math.isnan(left) else min(left, T)) - a
    status = result.status
    counts = {
        k: status.count(v)
        for k, v in (
            ("completed", DONE),
            ("shed", SHED),
            ("timed_out", TIMED_OUT),
            ("failed", FAILED),
        )
    }
    L = result.area_in_system / T
    lam = n / T
    W = sojourn / n if n else 0.0
    little_error = abs(L - lam * W) / L if L > 0 else 0.0
    p99_all = percentile(ttft, 99)
    tpot99 = percentile(tpot, 99)
    # TTFT breaks when its p99 is over the SLO or a request was shed or timed out (those
    # count as infinitely late in the bins).
    ttft_broken = (
        p99_all is None or p99_all > result.ttft_slo_s or bool(counts["shed"] + counts["timed_out"])
    )
    held = not ttft_broken and (tpot99 is None or tpot99 <= result.tpot_slo_s)
    # When it broke (`slo_breaks`), timed only when TTFT is what breaks: a run that holds TTFT
    # overall (it breaks on TPOT, which has no bins) is not said to break, nor to recover, for
    # one unlucky stretch of TTFT.
    broken = slo_breaks(result) if ttft_broken else []
    recovered = None
    if broken and T - broken[-1][1] >= RECOVERY_HOLD_S:
        recovered = broken[-1][1]
    hits = sum(result.prefix_hit)
    return {
        "ttft_p50_ms": _ms(percentile(ttft, 50)),
        "ttft_p99_ms": _ms(p99_all),
        "tpot_p50_ms": _ms(percentile(tpot, 50)),
        "tpot_p99_ms": _ms(tpot99),
        "holds_slo": held,
        "e2e_p99_ms": _ms(percentile(e2e, 99)),
        "wait_mean_s": sum(waits) / len(waits) if waits else None,
        "queued_p99_ms": _ms(percentile(queued, 99)),
        "own_prefill_p99_ms": _ms(percentile(own, 99)),
        "arrived": n,
        **counts,
        "in_flight": n - sum(counts.values()),
        "goodput": good / T,
        # Of the requests that left: those still running at the end are neither good nor bad.
        "goodput_share": good / sum(counts.values()) if sum(counts.values()) else 1.0,
        "throughput_tok_s": tokens / T,
        "prefix_hit_rate": hits / len(ttft) if ttft else 0.0,
        "prefill_tokens": result.prefill_tokens,
        "queue_max": max((w for _, w, _, _ in result.series), default=0),
        "queue_end": result.series[-1][1] if result.series else 0,
        "replicas_min": min((r for *_, r in result.series), default=0),
        "replicas_max": max((r for *_, r in result.series), default=0),
        "little_law": {"L": L, "lambda": lam, "W": W},
        "little_law_error": little_error,
        "slo_broken_at_s": broken[0][0] if broken else None,
        "recovered_at_s": recovered,
        "replicas_added_at_s": list(result.replicas_added),
        "events": [{"t": t, "what": what} for t, what in result.events],
        "prefill_only": prefill_only,
    }


def _fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def _fmt_over(ms: float, slo_ms: float) -> str:
    """A time in ms over its SLO, with the decimals that show it is over (12.04 against a
    12 ms SLO reads 12.04 ms, not 12 or 12.0)."""
    for digits in (0, 1, 2):
        text = f"{ms:.{digits}f}"
        if float(text) > slo_ms:
            return f"{text} ms"
    return f"{ms:.3f} ms"


def _requests(count: int) -> str:
    return f"{count} request{'s' if count != 1 else ''}"


def verdict(
    figs: dict[str, Any],
    *,
    qps: float,
    replicas: int,
    ttft_slo_ms: float,
    tpot_slo_ms: float,
    scenario_text: str = "",
    autoscale: str = "off",
    burst_at: float | None = None,
    burst_factor: float = 2.0,
    max_replicas: int | None = None,
) -> str:
    """One sentence a person reads at a glance: whether the SLO held, when it broke and
    whether (and how fast) it came back. A run whose load grows `burst_factor` times from
    `burst_at` says both loads: an SLO that breaks after the burst broke at the higher one.
    An autoscaler that adds no replica to a fleet already at `max_replicas` (its cap) says
    the cap is why."""
    p99 = figs["ttft_p99_ms"]
    tpot = figs["tpot_p99_ms"]
    pooled = figs.get("prefill_only", False)
    # A prefill-only request's first (and only) output is its answer: its TTFT is its latency.
    latency = "p99 latency" if pooled else "p99 TTFT"
    load = f"{qps_text(qps)} QPS"
    if burst_at is not None:
        grown = "doubled" if burst_factor == 2 else f"raised {burst_factor:g}×"
        load += f", {grown} to {qps_text(qps * burst_factor)} QPS from {burst_at:g} s,"
    head = f"{load} on {replicas} replica{'s' if replicas != 1 else ''}"
    if scenario_text:
        head += f" ({scenario_text})"
    lost = figs["shed"] + figs["timed_out"] + figs["failed"]
    if not figs["arrived"]:
        return (
            f"At {head} no request arrived in the window, so there is nothing to judge: "
            "raise the load or lengthen the window."
        )
    if figs["holds_slo"]:
        if pooled:
            text = (
                f"Holds the SLO at {head}: {latency} {_fmt_s(p99 / 1000)} (one prefill, "
                f"nothing decoded), goodput {goodput_text(figs['goodput_share'])}"
            )
        elif tpot is None:
            # Answers longer than the window: first tokens came but no request finished,
            # and TPOT is measured over a finished request.
            text = (
                f"At {head} p99 TTFT is {_fmt_s(p99 / 1000)}, within the SLO, but no request "
                "finished in the window, so TPOT is not measured: lengthen the window"
            )
        else:
            text = (
                f"Holds the SLO at {head}: p99 TTFT {_fmt_s(p99 / 1000)}, p99 TPOT "
                f"{tpot:.0f} ms, goodput {goodput_text(figs['goodput_share'])}"
            )
        if figs["failed"]:
            text += f"; {_requests(figs['failed'])} running on the dead replica "
            text += "is lost" if figs["failed"] == 1 else "are lost"
        text += "."
    else:
        broke = figs["slo_broken_at_s"]
        when = ""
        if broke is not None:
            when = f" after {broke:.0f} s" if broke > 0 else " from the start"
        # What breaks it, beside the SLO it breaks: the worst of TTFT, TPOT, requests lost.
        lost_said = False
        if p99 is None:
            worst = "no request answered" if pooled else "no first token"
        elif p99 > ttft_slo_ms:
            worst = (
                f"{latency} is {_fmt_s(p99 / 1000)} against the {_fmt_s(ttft_slo_ms / 1000)} SLO"
            )
        elif tpot is not None and tpot > tpot_slo_ms:
            worst = f"p99 TPOT is {_fmt_over(tpot, tpot_slo_ms)} against the {tpot_slo_ms:g} ms SLO"
        else:  # every answer came in time; requests shed or timed out break it
            worst = f"{_requests(lost)} lost ({latency} of those answered {_fmt_s(p99 / 1000)})"
            lost_said = True
        text = f"At {head} the SLO breaks{when}: {worst}"
        if figs["queue_max"] > 0:
            text += f", the queue peaks at {figs['queue_max']}"
        if lost and not lost_said:
            text += f", {_requests(lost)} lost"
        if autoscale != "off":
            signal = "queue depth" if autoscale == "queue" else "GPU utilisation"
            rec = figs["recovered_at_s"]
            added = len(figs["replicas_added_at_s"])
            if not added:
                # Nothing it did can be credited with a recovery.
                text += f"; the autoscaler on {signal} adds no replica"
                if max_replicas is not None and replicas >= max_replicas:
                    text += f": the fleet is already at the {max_replicas}-replica cap"
                if rec is not None and broke is not None:
                    text += f"; it recovers after {rec - broke:.0f} s"
            elif rec is not None and broke is not None:
                text += (
                    f"; with the autoscaler on {signal} it recovers in {rec - broke:.0f} s "
                    f"({added} replica{'s' if added != 1 else ''} added)"
                )
            else:
                text += f"; the autoscaler on {signal} does not bring it back in the window"
        elif figs["recovered_at_s"] is not None and broke is not None:
            text += f"; it recovers after {figs['recovered_at_s'] - broke:.0f} s"
        text += "."
    return text
