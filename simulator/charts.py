"""A run's charts as server-side SVG geometry, drawn by the planner's chart template
(planner/_chart.html) with simulator.css (the planner's stylesheet, and larger text on a
phone): p99 TTFT and p99 TPOT against their SLOs over time, the queue over time, and the
replicas serving over time. One line per run, so two runs compare on one chart."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from planner.charts import Chart as PlannerChart
from planner.charts import nice_ticks
from planner.engine import format_number
from simulator.engine import NEVER

# Line styles from planner.css, one per run compared.
RUN_CSS = ("pl-series", "pl-bound pl-mem")
TTFT_CAP = 4.0  # p99 latency is drawn up to 4x its SLO (a queue past that runs off the chart)


# The band above the plot, in chart units, sized for the largest text simulator.css sets (24
# units on a phone): the axis's title hangs from y = 14 (simulator.css) and ends by
# TITLE_BOTTOM; each event's note has a row of NOTE_ROW below it; the top tick's label,
# centred on the plot's top edge, needs half a line clear of whatever is above it.
TITLE_BOTTOM = 44
NOTE_ROW = 28
TICK_CLEAR = 16


@dataclass
class Chart(PlannerChart):
    """The planner's chart with room for its labels at the larger size simulator.css gives
    them on a phone: "1000" left of the axis, the axis's title and a row for each event's
    note above the plot (a note in the plot would sit on the lines it labels), and the time
    ticks clear of the axis's title below."""

    height: int = 340
    note_rows: int = 0
    plot_left: ClassVar[int] = 72

    @property
    def plot_top(self) -> int:
        return TITLE_BOTTOM + NOTE_ROW * self.note_rows + TICK_CLEAR

    @property
    def plot_bottom(self) -> int:
        return self.height - 64

    def note_baseline(self, row: int) -> int:
        """The baseline of the event note in `row` (0 first), above the plot."""
        return TITLE_BOTTOM + NOTE_ROW * (row + 1) - 6


def _xy(chart: Chart, x_top: float, y_top: float, x: float, y: float) -> str:
    left, right = chart.plot_left, chart.plot_right
    top, bottom = chart.plot_top, chart.plot_bottom
    px = left + (right - left) * x / x_top
    py = bottom - (bottom - top) * min(y, y_top) / y_top
    return f"{px:.1f},{py:.1f}"


def _axes(chart: Chart, x_ticks: list[float], y_ticks: list[float]) -> None:
    x_top, y_top = x_ticks[-1], y_ticks[-1]
    for t in x_ticks:
        chart.x_ticks.append(
            {"x": float(_xy(chart, x_top, y_top, t, 0).split(",")[0]), "label": format_number(t)}
        )
    for t in y_ticks:
        chart.y_ticks.append(
            {"y": float(_xy(chart, x_top, y_top, 0, t).split(",")[1]), "label": format_number(t)}
        )


def _marks(runs: list[dict]) -> list[tuple[float, str]]:
    """The first run's events (a replica dies, a burst starts): (time, what)."""
    params = runs[0]["params"]
    marks = [(params.get("kill_at"), "replica dies"), (params.get("burst_at"), "burst")]
    return [(at, text) for at, text in marks if at is not None]


def _chart(runs: list[dict], extra_rows: int = 0, **fields) -> Chart:
    """A chart of `runs` with a note row above its plot for each event, and `extra_rows`
    more after them."""
    return Chart(note_rows=len(_marks(runs)) + extra_rows, **fields)


def _events(chart: Chart, runs: list[dict], x_top: float, y_top: float) -> None:
    """A line where the first run's events happen, and a note in its row above the plot:
    beside the line, on the side with more room (sim-note-after sets its text to start at
    x; the planner's notes end at x)."""
    for row, (at, text) in enumerate(_marks(runs)):
        x = float(_xy(chart, x_top, y_top, at, 0).split(",")[0])
        chart.paths.append(
            {
                "d": f"M{x:.1f},{chart.plot_top}V{chart.plot_bottom}",
                "css": "pl-limit pl-pool",
                "label": f"{text} at {at:g} s",
            }
        )
        after = x < (chart.plot_left + chart.plot_right) / 2
        chart.notes.append(
            {
                "x": x + 6 if after else x - 6,
                "y": chart.note_baseline(row),
                "css": "pl-pool sim-note-after" if after else "pl-pool",
                "text": f"{text} {at:g} s",
            }
        )


def _bin_ms(p: float | str | None) -> float | None:
    """A bin's p99 in ms from a run's saved bins (s): None for a bin with nothing to draw (no
    request arrived in it, or for TPOT none finished), math.inf for one whose p99 request never
    got a first token in time (NEVER as saved; math.inf straight from the engine). Runs
    saved before NEVER existed wrote None for both: their shed bins now draw as gaps."""
    if p is None:
        return None
    if p == NEVER or p == math.inf:
        return math.inf
    return float(p) * 1000


def _latency_chart(
    runs: list[dict], *, key: str, slo: float, what: str, title: str, description: str
) -> Chart:
    """p99 `what` of each 5 s of arrivals (ms) from each run's `key` bins (s), with the SLO as
    a dashed line. A bin with nothing to judge is a gap in the line (the line runs on from
    the bin before to the bin after; a run with one bin to judge is a dot); one whose p99
    request never got a first token is drawn along the top edge, off the chart."""
    seconds = runs[0]["params"]["seconds"]
    values = [_bin_ms(p) for r in runs for _, p in r[key]]
    worst = max((v for v in values if v is not None and v != math.inf), default=slo)
    y_ticks = nice_ticks(min(max(worst, slo * 1.2), slo * TTFT_CAP))
    # A value past the top tick (or a bin whose requests never got a first token) is drawn
    # along the top edge: a note in a row of its own above the plot says so, since a line
    # there reads as a value of the top tick.
    off = worst > y_ticks[-1] or math.inf in values
    chart = _chart(
        runs,
        extra_rows=1 if off else 0,
        title=title,
        description=description + " " + " ".join(r["verdict"] for r in runs),
        x_label="Time (s)",
        y_label=f"p99 {what} (ms)",
    )
    x_ticks = nice_ticks(seconds)
    _axes(chart, x_ticks, y_ticks)
    x_top, y_top = x_ticks[-1], y_ticks[-1]
    for css, run in zip(RUN_CSS, runs, strict=False):
        # _xy draws a value past the top (math.inf among them) along the top edge.
        points = [
            _xy(chart, x_top, y_top, t + 2.5, ms)
            for t, ms in ((t, _bin_ms(p)) for t, p in run[key])
            if ms is not None
        ]
        if len(points) == 1:
            # A line through one point draws nothing: a run with one bin to judge (one
            # request in the window) is a dot instead, a zero-length path whose round caps
            # simulator.css draws wide (sim-dot), with the line's class and title.
            chart.paths.append(
                {"d": f"M{points[0]}h0", "css": f"{css} sim-dot", "label": run["label"]}
            )
        elif points:
            chart.paths.append({"d": "M" + "L".join(points), "css": css, "label": run["label"]})
    y = _xy(chart, x_top, y_top, 0, slo).split(",")[1]
    chart.paths.append(
        {
            "d": f"M{chart.plot_left},{y}H{chart.plot_right}",
            "css": "pl-limit pl-memory",
            "label": "SLO",
        }
    )
    chart.notes.append(
        {
            "x": chart.plot_right - 4,
            "y": float(y) - 6,
            "css": "pl-memory",
            "text": f"SLO {format_number(slo)} ms",
        }
    )
    _events(chart, runs, x_top, y_top)
    if off:
        chart.notes.append(
            {
                "x": chart.plot_right,
                "y": chart.note_baseline(chart.note_rows - 1),
                "css": "pl-memory",
                "text": f"▲ off the chart above {format_number(y_top)} ms",
            }
        )
    return chart


def ttft_chart(runs: list[dict]) -> Chart:
    """p99 TTFT of each 5 s of arrivals (ms), with the SLO as a dashed line."""
    # A prefill-only request's first output is its answer: its TTFT is its whole latency.
    what = "latency" if runs[0]["figures"].get("prefill_only") else "TTFT"
    slo = runs[0]["params"]["ttft_slo_ms"]
    return _latency_chart(
        runs,
        key="ttft_bins",
        slo=slo,
        what=what,
        title=f"p99 {what} over time",
        description=(
            f"p99 {'latency' if what == 'latency' else 'time to first token'} of the "
            "requests arriving in each 5 s, against the "
            f"{format_number(slo)} ms SLO (dashed); a request that never got one counts as "
            "off the chart."
        ),
    )


def tpot_chart(runs: list[dict]) -> Chart:
    """p99 TPOT of each 5 s of arrivals (ms) that finished, with the SLO as a dashed line: the
    verdict names TPOT beside TTFT, and a run can break on it while TTFT stays low."""
    slo = runs[0]["params"]["tpot_slo_ms"]
    return _latency_chart(
        runs,
        key="tpot_bins",
        slo=slo,
        what="TPOT",
        title="p99 TPOT over time",
        description=(
            "p99 time per output token of the requests arriving in each 5 s that finished, "
            f"against the {format_number(slo)} ms SLO (dashed)."
        ),
    )


def _series_chart(runs: list[dict], *, column: int, title: str, y_label: str, what: str) -> Chart:
    seconds = runs[0]["params"]["seconds"]
    chart = _chart(
        runs,
        title=title,
        description=f"{what} over the {format_number(seconds)} s window, one line per run.",
        x_label="Time (s)",
        y_label=y_label,
    )
    top = max((row[column] for r in runs for row in r["series"]), default=1)
    y_ticks = nice_ticks(max(top, 1), whole=True)
    x_ticks = nice_ticks(seconds)
    _axes(chart, x_ticks, y_ticks)
    x_top, y_top = x_ticks[-1], y_ticks[-1]
    for css, run in zip(RUN_CSS, runs, strict=False):
        points = [_xy(chart, x_top, y_top, row[0], row[column]) for row in run["series"]]
        if points:
            chart.paths.append({"d": "M" + "L".join(points), "css": css, "label": run["label"]})
    _events(chart, runs, x_top, y_top)
    return chart


def run_charts(runs: list[dict]) -> list[Chart]:
    """The charts of a set of runs (one, or two compared): p99 TTFT, p99 TPOT where the runs
    decode and were saved with its bins, requests waiting and replicas serving."""
    decodes = not runs[0]["figures"].get("prefill_only")
    tpot = [tpot_chart(runs)] if decodes and all("tpot_bins" in r for r in runs) else []
    return [
        ttft_chart(runs),
        *tpot,
        _series_chart(
            runs,
            column=1,
            title="Requests waiting",
            y_label="waiting",
            what="Requests waiting for a batch slot, summed over the replicas",
        ),
        _series_chart(
            runs,
            column=3,
            title="Replicas serving",
            y_label="replicas",
            what="Replicas up and serving",
        ),
    ]
