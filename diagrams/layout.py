"""A parsed `Diagram` laid out by Graphviz (`dot -Tsvg`) and sanitised for inlining.

Why Graphviz: it is a real layered layout engine (the same family Mermaid's own layout
copies), a Debian package with no network or browser needed, and it runs as a separate
process that a time limit can kill, so a slow layout never holds the web process for long.

What comes back is not Graphviz's markup: it is parsed and written out again from an
allow-list (svg, g, path, polygon, polyline, ellipse, text; a fixed set of attributes per
element, each value checked against its own pattern). No <script>, <style>, style=, event
handler, href or <foreignObject> can get through, whatever a label holds: labels reach Graphviz
as escaped DOT strings and leave it as text nodes, which are escaped again here. The SVG is
safe to inline under a strict Content-Security-Policy. Colours are Graphviz's presentation
attributes (black strokes, no fill); a stylesheet may override them (CSS wins over them).

Each node's group carries `data-node="<Mermaid id>"`, each edge's `data-edge="<index into
Diagram.edges>"` and each subgraph's `data-subgraph="<id>"`, so a page can point at one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from html import escape

from diagrams.model import Diagram, LayoutError

# The Graphviz program; tests point it elsewhere to see a missing or slow layout engine.
DOT_PROGRAM = "dot"
FONT = "Helvetica,Arial,sans-serif"
RANKDIR = {"LR": "LR", "RL": "RL", "TB": "TB", "BT": "BT"}
# Mermaid shape -> Graphviz node attributes.
SHAPE_ATTRS = {
    "box": 'shape=box style="rounded" ',
    "round": 'shape=box style="rounded" ',
    "stadium": 'shape=box style="rounded" ',
    "subroutine": "shape=box peripheries=2 ",
    "cylinder": "shape=cylinder ",
    "diamond": "shape=diamond ",
    "circle": "shape=circle ",
    "hexagon": "shape=hexagon ",
}
EDGE_STYLE_ATTRS = {"solid": "", "dotted": 'style="dashed" ', "thick": "penwidth=2 "}

SVG_NS = "http://www.w3.org/2000/svg"

_NUMBERS = re.compile(r"^[-+0-9.,eE ]{0,20000}$")
_PATH = re.compile(r"^[-+0-9.,eE MCLZHVQSTAmclzhvqsta]{0,50000}$")
_COLOUR = re.compile(r"^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{1,20})$")
_LENGTH = re.compile(r"^[0-9.]{1,12}(pt|px)?$")
_FONT = re.compile(r"^[A-Za-z ,\-]{1,80}$")
_TRANSFORM = re.compile(r"^((scale|rotate|translate)\([-0-9.eE ]{1,40}\) ?){1,3}$")
_DASHES = re.compile(r"^[0-9., ]{1,40}$")
_ENUMS = {
    "text-anchor": {"start", "middle", "end"},
    "class": {"graph", "node", "edge", "cluster"},
    "font-weight": {"bold", "normal"},
    "font-style": {"italic", "normal"},
}
_PAINT = {
    "fill": _COLOUR,
    "stroke": _COLOUR,
    "stroke-width": _LENGTH,
    "stroke-dasharray": _DASHES,
}
ALLOWED = {
    "svg": {"width": _LENGTH, "height": _LENGTH, "viewBox": _NUMBERS},
    "g": {"class": "enum", "transform": _TRANSFORM},
    "path": {**_PAINT, "d": _PATH},
    "polygon": {**_PAINT, "points": _NUMBERS},
    "polyline": {**_PAINT, "points": _NUMBERS},
    "ellipse": {**_PAINT, "cx": _NUMBERS, "cy": _NUMBERS, "rx": _NUMBERS, "ry": _NUMBERS},
    "text": {
        "text-anchor": "enum",
        "x": _NUMBERS,
        "y": _NUMBERS,
        "font-family": _FONT,
        "font-size": _LENGTH,
        "font-weight": "enum",
        "font-style": "enum",
        "fill": _COLOUR,
    },
}


def render_svg(diagram: Diagram, *, timeout_s: float = 2.0) -> str:
    """The diagram laid out by Graphviz as sanitised SVG markup (one <svg> element).

    Raises LayoutError when `dot` is not installed, runs longer than `timeout_s` seconds (it
    is killed), fails, or returns markup that is not SVG.
    """
    program = shutil.which(DOT_PROGRAM)
    if program is None:
        raise LayoutError(
            "the layout engine (Graphviz's 'dot') is not installed: apt-get install graphviz"
        )
    deadline = time.monotonic() + timeout_s
    done = _dot(program, to_dot(diagram), timeout_s)
    if done.returncode != 0 and RANKING_TROUBLE in done.stderr:
        # Graphviz ranks clusters one by one and gives up on some whose members call each
        # other both ways over labelled edges (a gateway and its replicas replying). Ranking
        # the whole graph at once (newrank) draws them; it is the maintainers' own workaround,
        # and only the retry uses it, as it draws most diagrams less compactly.
        remaining = max(deadline - time.monotonic(), 0.05)
        done = _dot(program, to_dot(diagram, newrank=True), remaining, timeout_s)
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LayoutError(f"the layout engine failed: {reason[0] if reason else done.returncode}")
    return sanitise_svg(done.stdout, diagram)


# What Graphviz's per-cluster ranking prints when it gives up on a graph.
RANKING_TROUBLE = b"trouble in init_rank"


def _dot(
    program: str, dot: str, timeout_s: float, limit_s: float | None = None
) -> subprocess.CompletedProcess:
    """`dot -Tsvg` run on `dot` for at most `timeout_s` seconds; `limit_s` is the whole
    layout's limit that the error names (`timeout_s` when not given)."""
    try:
        return subprocess.run(
            [program, "-Tsvg"],
            input=dot.encode("utf-8"),
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        limit = timeout_s if limit_s is None else limit_s
        raise LayoutError(f"the layout took longer than {limit:g} s and was stopped") from None
    except OSError as exc:
        raise LayoutError(f"the layout engine could not start: {exc.strerror or exc}") from None


# --- DOT ---------------------------------------------------------------------------------


def _dot_string(text: str) -> str:
    """A DOT quoted string showing `text` as written: backslashes and quotes escaped (so
    Graphviz's `\\N`-style escapes stay literal), `&` written as an entity (Graphviz passes
    entities through to the SVG)."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
    return f'"{text}"'


def to_dot(diagram: Diagram, *, newrank: bool = False) -> str:
    """The DOT text Graphviz lays out: node `n<i>`, edge `e<i>`, cluster `s<i>` by position;
    with `newrank`, ranked as one graph rather than cluster by cluster."""
    node_index = {node.id: i for i, node in enumerate(diagram.nodes)}
    sub_index = {sub.id: i for i, sub in enumerate(diagram.subgraphs)}
    members: dict[str, list[str]] = {}
    for i, node in enumerate(diagram.nodes):
        members.setdefault(node.subgraph, []).append(
            f'n{i} [id="n{i}" {SHAPE_ATTRS.get(node.shape, "")}label={_dot_string(node.label)}];'
        )
    children: dict[str, list[str]] = {}
    for sub in diagram.subgraphs:
        children.setdefault(sub.parent, []).append(sub.id)

    lines = [
        "digraph diagram {",
        f'graph [rankdir={RANKDIR.get(diagram.direction, "TB")} bgcolor="transparent" '
        f'fontname="{FONT}" fontsize=12 nodesep=0.3 ranksep=0.4 pad=0.1'
        f"{' newrank=true' if newrank else ''}];",
        f'node [fontname="{FONT}" fontsize=12 margin="0.15,0.06" height=0.3];',
        f'edge [fontname="{FONT}" fontsize=11];',
    ]

    def cluster(sub_id: str, depth: int) -> None:
        i = sub_index[sub_id]
        title = next(s.title for s in diagram.subgraphs if s.id == sub_id)
        lines.append(f'subgraph cluster_s{i} {{ id="s{i}"; label={_dot_string(title)};')
        lines.extend(members.get(sub_id, ()))
        for child in children.get(sub_id, ()):
            cluster(child, depth + 1)
        lines.append("}")

    for top in children.get("", ()):
        cluster(top, 1)
    lines.extend(members.get("", ()))
    for i, edge in enumerate(diagram.edges):
        attrs = f'id="e{i}" {EDGE_STYLE_ATTRS.get(edge.style, "")}'
        if not edge.directed:
            attrs += "dir=none "
        if edge.label:
            attrs += f"label={_dot_string(edge.label)} "
        lines.append(f"n{node_index[edge.source]} -> n{node_index[edge.target]} [{attrs}];")
    lines.append("}")
    return "\n".join(lines)


# --- sanitising --------------------------------------------------------------------------


def sanitise_svg(markup: bytes | str, diagram: Diagram) -> str:
    """Graphviz's SVG written out again from the allow-list (see the module docstring), with
    Graphviz's ids turned into data-node / data-edge / data-subgraph attributes."""
    try:
        root = ET.fromstring(markup)
    except ET.ParseError as exc:
        raise LayoutError(f"the layout engine returned markup that is not SVG: {exc}") from None
    if root.tag != f"{{{SVG_NS}}}svg":
        raise LayoutError("the layout engine returned markup that is not SVG")
    nodes = len(diagram.nodes)
    label = (
        f"Architecture diagram: {nodes} component{'s' if nodes != 1 else ''}, "
        f"{len(diagram.edges)} connection{'s' if len(diagram.edges) != 1 else ''}"
    )
    out: list[str] = []
    _write(root, out, diagram, extra=f' role="img" aria-label="{escape(label)}"')
    return "".join(out)


def _data_attribute(element_id: str, diagram: Diagram) -> str:
    """Graphviz's id of a group (n3, e0, s1) as the data attribute naming what it draws."""
    match = re.fullmatch(r"([nes])(\d{1,4})", element_id or "")
    if not match:
        return ""
    kind, index = match.group(1), int(match.group(2))
    if kind == "n" and index < len(diagram.nodes):
        return f' data-node="{escape(diagram.nodes[index].id)}"'
    if kind == "e" and index < len(diagram.edges):
        return f' data-edge="{index}"'
    if kind == "s" and index < len(diagram.subgraphs):
        return f' data-subgraph="{escape(diagram.subgraphs[index].id)}"'
    return ""


def _write(element: ET.Element, out: list[str], diagram: Diagram, extra: str = "") -> None:
    tag = element.tag.removeprefix(f"{{{SVG_NS}}}")
    allowed = ALLOWED.get(tag)
    if allowed is None:  # <title>, comments, anything Graphviz may add: left out, with children
        return
    attrs = []
    if tag == "svg":
        attrs.append(f'xmlns="{SVG_NS}"')
    for name, value in element.attrib.items():
        rule = allowed.get(name)
        if rule is None:
            continue
        if rule == "enum":
            ok = value in _ENUMS[name]
        else:
            ok = bool(rule.match(value))
        if ok:
            attrs.append(f'{name}="{escape(value)}"')
    if tag == "g":
        attrs_text = _data_attribute(element.get("id", ""), diagram)
    else:
        attrs_text = ""
    out.append(f"<{tag} {' '.join(attrs)}{attrs_text}{extra}>".replace(" >", ">"))
    if tag == "text":
        out.append(escape("".join(element.itertext()), quote=False))
    else:
        for child in element:
            _write(child, out, diagram)
    out.append(f"</{tag}>")
