"""Server-side SVG charts for the capacity planner, as plain geometry for a template.

The template draws what this module computes (paths, ticks, labels), so the charts need no
JavaScript and no inline styles; colours come from planner.css classes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from planner.engine import fleet_curve, format_number, kv_curve, memory_bound_curve

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 24, 52
GiB = 1024**3


@dataclass
class Chart:
    title: str
    description: str
    x_label: str
    y_label: str
    width: int = WIDTH
    height: int = HEIGHT
    paths: list[dict] = field(default_factory=list)  # {d, css, label}
    points: list[dict] = field(default_factory=list)  # {x, y, label, css}
    x_ticks: list[dict] = field(default_factory=list)  # {x, label}
    y_ticks: list[dict] = field(default_factory=list)  # {y, label}
    notes: list[dict] = field(default_factory=list)  # {x, y, text, css}
    # The plot area: the chart less its margins for the tick labels and the axis titles.
    plot_left: ClassVar[int] = LEFT
    plot_top: ClassVar[int] = TOP

    @property
    def plot_right(self) -> int:
        return self.width - RIGHT

    @property
    def plot_bottom(self) -> int:
        return self.height - BOTTOM


def nice_ticks(top: float, count: int = 5, whole: bool = False) -> list[float]:
    """Round tick values from 0 to at least `top` (1-2-5 steps; whole steps for counts)."""
    if top <= 0:
        return [0, 1]
    raw = max(top / count, 1) if whole else top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    n = math.ceil(top / step - 1e-9)
    return [i * step for i in range(n + 1)]


class _Scale:
    """Data onto a chart's plot area, each axis running from 0 to its last tick; the ticks are
    written onto the chart here, so every chart labels its axes the same way."""

    def __init__(self, chart: Chart, x_ticks: list[float], y_ticks: list[float]) -> None:
        self.chart, self.x_max, self.y_max = chart, x_ticks[-1], y_ticks[-1]
        chart.x_ticks = [{"x": self.x(t), "label": format_number(t)} for t in x_ticks]
        chart.y_ticks = [{"y": self.y(t), "label": format_number(t)} for t in y_ticks]

    def x(self, value: float) -> float:
        span = self.chart.plot_right - self.chart.plot_left
        return round(self.chart.plot_left + span * value / self.x_max, 1)

    def y(self, value: float) -> float:
        span = self.chart.plot_bottom - self.chart.plot_top
        return round(self.chart.plot_bottom - span * min(value, self.y_max) / self.y_max, 1)

    def here(self, x: float, y: float, label: str) -> None:
        """Mark the point the plan sits at."""
        self.chart.points.append({"x": self.x(x), "y": self.y(y), "css": "pl-here", "label": label})


def fleet_chart(
    *,
    r_inst_req_s: float,
    rho: float,
    tp: int,
    qps: float,
    load_req_s: float | None = None,
    prefill_s: float | None = None,
    r_decode_req_s: float | None = None,
) -> Chart:
    """GPUs against peak QPS, 0 to twice the planned peak, by the plan's own fleet rule (see
    `fleet_curve`: the load each instance carries, or the two pools of a disaggregated plan);
    a step each time the rounded-up instance count grows."""
    pools = prefill_s is not None and r_decode_req_s is not None
    if pools:
        per_instance = (
            f"prefill instances for {format_number(prefill_s or 0)} s of prefill a request and "
            f"decode instances of {format_number(r_decode_req_s or 0)} req/s, at ρ = "
            f"{format_number(rho)}"
        )
    elif load_req_s is not None:
        per_instance = f"{format_number(load_req_s)} req/s carried by each instance"
    else:
        per_instance = (
            f"{format_number(r_inst_req_s)} req/s per instance and ρ = {format_number(rho)}"
        )
    chart = Chart(
        title="Fleet size against peak QPS",
        description=(
            f"GPUs needed as peak traffic grows from 0 to {format_number(2 * qps)} QPS, at "
            f"{per_instance}."
        ),
        x_label="Peak QPS (req/s)",
        y_label="GPUs",
    )
    rule = {
        "r_inst_req_s": r_inst_req_s, "rho": rho, "tp": tp, "load_req_s": load_req_s,
        "prefill_s": prefill_s, "r_decode_req_s": r_decode_req_s,
    }  # fmt: skip
    x_top = 2 * qps
    samples = [x_top * i / 200 for i in range(201)]
    curve = fleet_curve(**rule, qps_values=samples)
    x_ticks = nice_ticks(x_top)
    y_ticks = nice_ticks(max(g for _, g in curve) or 1, whole=True)
    scale = _Scale(chart, x_ticks, y_ticks)
    d, previous = [], None
    for q, gpus in curve:
        if previous is None:
            d.append(f"M{scale.x(q)},{scale.y(gpus)}")
        elif gpus != previous:
            d.append(f"H{scale.x(q)}V{scale.y(gpus)}")
        previous = gpus
    d.append(f"H{scale.x(curve[-1][0])}")
    chart.paths.append({"d": "".join(d), "css": "pl-series", "label": "GPUs"})
    here = next(g for q, g in fleet_curve(**rule, qps_values=[qps]))
    scale.here(qps, here, f"{format_number(qps)} QPS → {here} GPUs")
    return chart


def kv_chart(
    *,
    kv_bytes_per_token: float,
    kv_pool_bytes: float,
    memory_bytes: float,
    context: int,
    max_context: int,
    tokens_per_stream: float | None = None,
) -> Chart:
    """KV bytes of one stream against the tokens it holds, with the KV pool and the GPU memory
    as horizontal lines: where the stream crosses the pool, not even one sequence fits. The
    plan's stream (tokens_per_stream: its prompt and output) is marked, and a stream that
    fills the whole context (context, max-model-len) beside it when that is longer."""
    chart = Chart(
        title="KV cache per stream against context length",
        description=(
            "One sequence's KV cache grows linearly with its context; the dashed lines are "
            "the memory left for KV after weights and overhead, and the GPU memory."
        ),
        x_label="Tokens a stream holds (k)",
        y_label="GiB",
    )
    # Out to 128k at least: the KV wall shows where long contexts leave room for few streams.
    x_ticks = nice_ticks(max(2 * context, max_context, 131072) / 1000)
    x_top = x_ticks[-1] * 1000
    contexts = [int(x_top * i / 50) for i in range(51)]
    curve = kv_curve(kv_bytes_per_token=kv_bytes_per_token, contexts=contexts)
    y_top = max(curve[-1][1], kv_pool_bytes, memory_bytes) * 1.05 / GiB
    y_ticks = nice_ticks(y_top)
    scale = _Scale(chart, x_ticks, y_ticks)
    chart.paths.append(
        {
            "d": "M" + "L".join(f"{scale.x(c / 1000)},{scale.y(b / GiB)}" for c, b in curve),
            "css": "pl-series",
            "label": "KV per stream",
        }
    )
    for value, css, text in [
        (memory_bytes, "pl-limit pl-memory", "GPU memory"),
        (max(kv_pool_bytes, 0), "pl-limit pl-pool", "KV pool"),
    ]:
        y = scale.y(value / GiB)
        chart.paths.append(
            {"d": f"M{chart.plot_left},{y}H{chart.plot_right}", "css": css, "label": text}
        )
        chart.notes.append(
            {
                "x": chart.plot_right - 4,
                "y": y - 6,
                "css": css,
                "text": f"{text} {format_number(value / GiB)} GiB",
            }
        )
    held = context if tokens_per_stream is None else tokens_per_stream
    here = kv_bytes_per_token * held
    scale.here(
        held / 1000,
        here / GiB,
        f"the plan's stream, {format_number(held)} tokens → {format_number(here / GiB)} GiB",
    )
    if context > held:
        full = kv_bytes_per_token * context
        chart.points.append(
            {
                "x": scale.x(context / 1000),
                "y": scale.y(full / GiB),
                "css": "pl-here pl-full",
                "label": f"a full {format_number(context)}-token context → "
                f"{format_number(full / GiB)} GiB",
            }
        )
    return chart


def bounds_chart(
    *,
    r_speed_req_s: float,
    kv_pool_bytes: float,
    kv_bytes_per_token: float,
    hold_s: float,
    context: int,
    max_context: int,
    binding: str | None,
    r_inst_req_s: float | None = None,
    split: bool = False,
) -> Chart:
    """The two bounds on one instance's rate against context length, side by side: the speed
    bound (knee throughput per request, flat) and the memory bound (streams that fit over the
    time each holds its slot, falling as contexts grow). r_inst is the lower of the two.

    With prefill and decode split (`split`), these are a shared GPU's bounds, which the page
    compares with the pools': the title says so, and that the pools size the fleet."""
    here = memory_bound_curve(
        kv_pool_bytes=kv_pool_bytes,
        kv_bytes_per_token=kv_bytes_per_token,
        hold_s=hold_s,
        contexts=[context],
    )[0][1]
    binds = {
        "memory": "the memory bound binds",
        "tpot": "the speed bound binds",
        "ttft": "prefill binds",
        "stall": "prefill stalls bind",
    }.get(binding or "", "nothing fits")
    what = "Requests per instance"
    if split:
        what, binds = (
            "Requests per shared-GPU instance, without the split",
            (f"{binds} there; the prefill and decode pools size this fleet"),
        )
    chart = Chart(
        title=f"{what}: speed bound and memory bound ({binds})",
        description=(
            f"At {format_number(context)} tokens the speed bound is "
            f"{format_number(r_speed_req_s)} req/s and the memory bound "
            f"{format_number(here)} req/s; "
            + (
                # Prefill takes its share of the GPU's time first: an instance sustains less
                # than either bound, which is why prefill binds.
                f"its prefills take their share of the GPU first, so it sustains less than "
                f"the lower of the two: {binds}."
                if binding in ("ttft", "stall")
                else f"an instance sustains the lower, so {binds}."
            )
        ),
        x_label="Tokens a stream holds (k)",
        y_label="req/s per instance",
    )
    x_ticks = nice_ticks(max(2 * context, max_context, 131072) / 1000)
    x_top = x_ticks[-1] * 1000
    contexts = sorted({max(1, int(x_top * i / 200)) for i in range(201)} | {context})
    curve = memory_bound_curve(
        kv_pool_bytes=kv_pool_bytes,
        kv_bytes_per_token=kv_bytes_per_token,
        hold_s=hold_s,
        contexts=contexts,
    )
    # The memory bound soars at short contexts; the chart shows the range where it matters.
    y_ticks = nice_ticks(max(2 * r_speed_req_s, 1.3 * here, 1e-3))
    scale = _Scale(chart, x_ticks, y_ticks)
    memory_path = "M" + "L".join(f"{scale.x(c / 1000)},{scale.y(r)}" for c, r in curve)
    speed_y = scale.y(r_speed_req_s)
    chart.paths += [
        {
            "d": f"M{chart.plot_left},{speed_y}H{chart.plot_right}",
            "css": "pl-bound pl-speed",
            "label": f"Speed bound {format_number(r_speed_req_s)} req/s",
        },
        {
            "d": memory_path,
            "css": "pl-bound pl-mem",
            "label": f"Memory bound ({format_number(hold_s)} s per request)",
        },
    ]
    chart.notes += [
        {
            "x": chart.plot_right - 4,
            "y": speed_y - 6,
            "css": "pl-speed",
            "text": f"speed bound {format_number(r_speed_req_s)} req/s",
        },
        {
            "x": chart.plot_right - 4,
            "y": chart.plot_top + 14,
            "css": "pl-mem",
            "text": f"memory bound: streams that fit / {format_number(hold_s)} s",
        },
    ]
    # Without a measured knee prefill shares the GPU too, so r_inst can sit below both lines.
    r_inst = min(r_speed_req_s, here) if r_inst_req_s is None else min(r_inst_req_s, here)
    scale.here(
        context / 1000,
        r_inst,
        f"{format_number(context)} tokens → speed {format_number(r_speed_req_s)}, "
        f"memory {format_number(here)} req/s; {binds}",
    )
    return chart
