"""The progress chart as plain geometry for a template (as planner/charts.py does): one row
per step, concept or drill kind, one cell per week, shaded by the mean verdict, with the
figures written in each cell's title and in a table beside it. No script, no inline style."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from django.utils.html import format_html
from django.utils.safestring import mark_safe

from drills.selectors import Cell, Row

LABEL_W = 230
CELL_W, CELL_H, GAP = 34, 26, 3
TOTAL_GAP = 14
TOP = 30


def band(mean: float | None) -> str:
    """The CSS class of a cell's shade, by its mean verdict (none: no verdict that week)."""
    if mean is None:
        return "pg-none"
    if mean < 0.4:
        return "pg-low"
    if mean < 0.7:
        return "pg-mid"
    if mean < 0.9:
        return "pg-good"
    return "pg-top"


def cell_title(title: str, when: str, cell: Cell) -> str:
    """What a cell's tooltip and its table row say: the mean, the count, and how many of the
    verdicts were self-checked, from mock interviews, or drills."""
    if not cell.count:
        return f"{title}, {when}: no verdicts"
    marks = [
        f"{n} {label}"
        for n, label in (
            (cell.self_checked, "self-checked"),
            (cell.mock, "from mock interviews"),
            (cell.drills, "drills"),
        )
        if n
    ]
    extra = f" ({', '.join(marks)})" if marks else ""
    plural = "verdict" if cell.count == 1 else "verdicts"
    return f"{title}, {when}: mean {cell.mean:.0%} over {cell.count} {plural}{extra}"


@dataclass
class HeatChart:
    chart_id: str
    title: str
    description: str
    width: int
    height: int
    columns: list[dict] = field(default_factory=list)  # {x, label}
    rows: list[dict] = field(default_factory=list)
    table_rows: list[str] = field(default_factory=list)  # the figures, one <tr> a cell

    # The row names' strip: the page draws it as a picture of its own, beside the weeks,
    # which crop it off their left edge, so that the names stay put while the weeks scroll.
    label_width: int = LABEL_W

    @property
    def weeks_width(self) -> int:
        return self.width - self.label_width

    @property
    def links(self) -> list[dict]:
        """Rows with a page of their own (a concept's note), linked under the chart: a link
        inside an image would be a control nested in another."""
        return [r for r in self.rows if r["url"]]


def heat_chart(chart_id: str, title: str, description: str, rows: list[Row],
               weeks: list[date]) -> HeatChart:  # fmt: skip
    """Lay out `rows` (each with one cell per week of `weeks`, and an overall cell)."""
    width = LABEL_W + len(weeks) * (CELL_W + GAP) + TOTAL_GAP + CELL_W + 8
    height = TOP + len(rows) * (CELL_H + GAP) + 4
    chart = HeatChart(chart_id, title, description, width, height)
    for i, week in enumerate(weeks):
        x = LABEL_W + i * (CELL_W + GAP)
        # Every other week labelled, counted back from this week (always labelled).
        label = week.strftime("%d %b") if (len(weeks) - 1 - i) % 2 == 0 else ""
        chart.columns.append({"x": _n(x + CELL_W / 2), "label": label})
    total_x = LABEL_W + len(weeks) * (CELL_W + GAP) + TOTAL_GAP
    chart.columns.append({"x": _n(total_x + CELL_W / 2), "label": "All"})
    for r, row in enumerate(rows):
        y = TOP + r * (CELL_H + GAP)
        cells = []
        for i, cell in enumerate(row.cells):
            cells.append(_cell(LABEL_W + i * (CELL_W + GAP), y, row.title,
                               f"week of {weeks[i]:%d %b}", cell))  # fmt: skip
        for c in cells:
            if c["count"]:
                chart.table_rows.append(
                    format_html(
                        '<tr><th scope="row">{}</th><td>{}</td><td>{}%</td><td>{}</td>'
                        "<td>{}</td><td>{}</td><td>{}</td></tr>",
                        row.title,
                        f"{c['week']:%b %-d}",
                        c["text"],
                        c["count"],
                        c["self_checked"],
                        c["mock"],
                        c["drills"],
                    )  # fmt: skip
                )
        chart.rows.append(
            {
                "title": row.title,
                "url": row.url,
                "text_y": _n(y + CELL_H / 2 + 4),
                "cells": cells,
                "overall": _cell(total_x, y, row.title, f"last {len(weeks)} weeks", row.overall),
                "row": row,
            }
        )
    return chart


def _n(x: float) -> str:
    """A coordinate as the SVG prints it (a string, so the template does no number work)."""
    return f"{x:g}"


def _cell(x: float, y: float, title: str, when: str, cell: Cell) -> dict:
    mark = "".join(
        letter for n, letter in ((cell.self_checked, "S"), (cell.mock, "M")) if n
    )  # self-checked, mock: marked in the cell itself, not only in its title
    css = band(cell.mean)
    label = ""
    if cell.count:
        top = mark_safe(' class="pg-top-text"') if css == "pg-top" else ""  # a constant
        label = format_html(
            '<text{} x="{}" y="{}" text-anchor="middle">{}</text>',
            top, _n(x + CELL_W / 2), _n(y + CELL_H / 2 + 4), f"{round(cell.mean * 100)}%",
        )  # fmt: skip
    if mark:
        label += format_html(
            '<text class="pg-mark" x="{}" y="{}" text-anchor="end">{}</text>',
            _n(x + CELL_W - 2), _n(y + 9), mark,
        )  # fmt: skip
    # One cell's markup built here, escaped by format_html: a chart has hundreds of cells,
    # and the figures ride along as data attributes a reader's tools (and the tests) check.
    svg = format_html(
        '<g class="pg-cell" data-mean="{}" data-count="{}" data-self="{}" data-mock="{}" '
        'data-drills="{}"><title>{}</title><rect class="{}" x="{}" y="{}" width="{}" '
        'height="{}" rx="4"/>{}</g>',
        "" if cell.mean is None else cell.mean, cell.count, cell.self_checked, cell.mock,
        cell.drills, cell_title(title, when, cell), css, _n(x), _n(y), CELL_W, CELL_H, label,
    )  # fmt: skip
    return {
        "svg": svg,
        "text": f"{round(cell.mean * 100)}" if cell.count else "",
        "count": cell.count,
        "self_checked": cell.self_checked,
        "mock": cell.mock,
        "drills": cell.drills,
        "week": cell.week,
    }
