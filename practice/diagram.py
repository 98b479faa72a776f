"""The candidate's architecture diagram inside practice: where it is stored, which steps
have one, and the picture a page shows of it.

The diagram is Mermaid flowchart text kept in the step answer's JSON,
`StepAnswer.fields["diagram"]`, so autosave, versions and submissions carry it like the SLO
card. The engine (`diagrams`, no Django) parses it and lays it out with Graphviz; this module
is the thin layer pages call: `diagram_picture(text)` returns the sanitised SVG, or the
syntax error with its line and column, and remembers pictures by their text so a page that
shows the same diagram again (a poll, History, the report) does not run the layout again.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.cache import cache
from django.utils.safestring import SafeString, mark_safe

from questionbank import FollowUp, StepSpec

DIAGRAM_FIELD = "diagram"
# The layout engine's time limit for one picture: Graphviz runs in a subprocess, so this is
# how long a web thread can wait on it.
LAYOUT_TIMEOUT_S = 2.0
# Pictures are remembered by their text for a day: the same text always lays out the same.
PICTURE_CACHE_S = 24 * 3600
# ...and a layout that ran out of time for ten minutes (the machine may be less busy later).
FAILED_LAYOUT_CACHE_S = 600
# Bump when the engine's output changes, so remembered pictures are drawn again.
PICTURE_CACHE_VERSION = "2"

# The palette: common components of a serving design, each inserted as one Mermaid line (an
# id and a label) for a candidate who does not know the syntax. The labels use the words the
# rubric's diagram rules look for (gateway, router, vLLM replicas). Where a design makes a
# choice (the routing policy, the replica count, the scaling signal) the label holds a
# placeholder to replace, not an answer: a line inserted as it stands must not say
# "least-loaded, 4 replicas" beside an answer that says prefix-aware and 7.
PALETTE = (
    ("Gateway", "gateway[API gateway]"),
    ("Router", "router[Router: policy]"),
    ("vLLM replicas", "vllm[vLLM replicas xN]"),
    ("Autoscaler", "autoscaler[Autoscaler: signal]"),
    ("Metrics", "metrics[(Metrics: Prometheus)]"),
    ("Object store", "store[(Object store: weights)]"),
    ("Adapter registry", "adapters[(Adapter registry)]"),
    ("KV offload tier", "kvtier[(KV offload tier: CPU RAM)]"),
)
# What an empty diagram starts with when the palette first inserts into it.
DIAGRAM_HEADER = "flowchart LR"


@dataclass(frozen=True)
class DiagramPicture:
    """A diagram as a page shows it: the Mermaid text, the laid-out SVG (safe markup, empty
    when it could not be drawn) and, when it could not, why (`error`, with `line` and
    `column`, 1-based, for a syntax error)."""

    text: str
    svg: SafeString
    error: str = ""
    line: int | None = None
    column: int | None = None

    @property
    def where(self) -> str:
        """ "Line 3, column 7" for a syntax error; empty otherwise."""
        if self.line is None:
            return ""
        return f"Line {self.line}" + (f", column {self.column}" if self.column else "")

    @property
    def message(self) -> str:
        """Why it could not be drawn, with where ("Line 3, column 7: ..."), as a sentence
        when there is no where; empty if drawn."""
        if not self.error:
            return ""
        if self.where:
            return f"{self.where}: {self.error}"
        return self.error[:1].upper() + self.error[1:]


def step_has_diagram(spec: StepSpec | FollowUp) -> bool:
    """Whether a step shows the diagram box: the architecture step always, another step when
    its question enables it (`diagram: true`, `StepSpec.has_diagram`); a follow-up never."""
    return isinstance(spec, StepSpec) and spec.has_diagram


def diagram_text(fields: dict | None) -> str:
    """The diagram stored in an answer's or a submission's fields ("" when none)."""
    return str((fields or {}).get(DIAGRAM_FIELD, "") or "")


def diagram_from_post(post) -> dict:
    """The diagram box of a posted answer form as fields to store: {"diagram": text}, or
    nothing when the box was left blank (or the step has none)."""
    text = str(post.get(DIAGRAM_FIELD, "") or "").replace("\r\n", "\n")
    return {DIAGRAM_FIELD: text} if text.strip() else {}


def diagram_picture(
    text: str, *, evidence: Sequence[str] = (), timeout_s: float | None = None
) -> DiagramPicture:
    """The diagram laid out: parsed by the engine (a syntax error or a size limit comes back
    as `error` with its line and column; the length limit, of the whole text, without), then
    drawn by Graphviz within `timeout_s` seconds (LAYOUT_TIMEOUT_S by default). A picture
    drawn before is taken from the cache. The nodes and edges named in `evidence` (node
    labels, edge lines as `Diagram.edge_lines` writes them: what a grader found) are marked
    `is-evidence`, so the picture points at them."""
    from diagrams import DiagramError, LayoutError, parse_diagram, render_svg

    if not text.strip():
        return DiagramPicture(text=text, svg=mark_safe(""))
    full_time = timeout_s is None or timeout_s >= LAYOUT_TIMEOUT_S
    timeout_s = LAYOUT_TIMEOUT_S if timeout_s is None else timeout_s
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    key = f"diagram-svg:{PICTURE_CACHE_VERSION}:{digest}"
    failed_key = f"diagram-failed:{PICTURE_CACHE_VERSION}:{digest}"
    svg = cache.get(key)
    diagram = None
    if svg is None:
        try:
            diagram = parse_diagram(text)
        except DiagramError as exc:
            if not exc.located:  # the whole text's length: no line or column to point at
                return DiagramPicture(text=text, svg=mark_safe(""), error=exc.message)
            return DiagramPicture(
                text=text, svg=mark_safe(""), error=exc.message, line=exc.line, column=exc.column
            )
        # A layout that ran out of its full time runs out again: every page that shows this
        # diagram would wait for it, so its failure is remembered for a while too.
        failed = cache.get(failed_key)
        if failed is not None:
            return DiagramPicture(text=text, svg=mark_safe(""), error=failed)
        try:
            svg = render_svg(diagram, timeout_s=timeout_s)
        except LayoutError as exc:
            if full_time:
                cache.set(failed_key, str(exc), FAILED_LAYOUT_CACHE_S)
            return DiagramPicture(text=text, svg=mark_safe(""), error=str(exc))
        cache.set(key, svg, PICTURE_CACHE_S)
    if evidence:
        svg = _mark_evidence(svg, diagram or parse_diagram(text), evidence)
    # The engine's output is sanitised SVG (allow-listed elements and attributes, labels
    # escaped): safe to inline under the site's Content-Security-Policy. Marking only adds
    # a fixed class name to a group the engine wrote.
    return DiagramPicture(text=text, svg=mark_safe(svg))


_GROUP = re.compile(r'<g class="(node|edge)" data-(?:node|edge)="([^"]*)">')


def _mark_evidence(svg: str, diagram, evidence: Sequence[str]) -> str:
    """The engine's SVG with the groups of the nodes and edges in `evidence` marked."""
    wanted = set(evidence)
    edges = {str(i) for i, line in enumerate(diagram.edge_lines()) if line in wanted}
    nodes = {n.id for n in diagram.nodes if n.label in wanted or n.id in wanted}

    def mark(match: re.Match) -> str:
        kind, key = match.group(1), html.unescape(match.group(2))
        if key in (nodes if kind == "node" else edges):
            return match.group(0).replace(f'class="{kind}"', f'class="{kind} is-evidence"', 1)
        return match.group(0)

    return _GROUP.sub(mark, svg)


def diagram_evidence(point: dict) -> list[str]:
    """What a grader found in the diagram for one stored rubric point (node labels or edge
    lines such as "API gateway -> Router"); empty when its evidence came from the prose."""
    if point.get("evidence_source") != "diagram":
        return []
    return [str(e) for e in point.get("diagram_evidence") or [] if str(e).strip()]


def mermaid_block(text: str) -> str:
    """The diagram as a fenced Markdown block that GitHub renders (```mermaid), fenced with
    more backticks than any run inside the text so the text cannot close it early."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}mermaid\n{text.strip()}\n{fence}"
