"""Architecture diagrams: Mermaid flowchart text a candidate writes, read and laid out.

    parse_diagram(text) -> Diagram            (raises DiagramError: message, line, column)
    render_svg(diagram, timeout_s=2.0) -> str (raises LayoutError: message)
    split_mermaid_block(markdown) -> (prose, diagram text)   (an answer file's ```mermaid block)

`parser.py` reads the Mermaid subset into typed, immutable data (`model.py`); `layout.py`
lays it out with Graphviz in a subprocess under a time limit and returns sanitised SVG. No
Django imports: the practice pages, the graders and the `grade` command call this package.
"""

from diagrams.layout import render_svg
from diagrams.model import Diagram, DiagramError, Edge, LayoutError, Node, Subgraph
from diagrams.parser import (
    MAX_EDGES,
    MAX_LABEL_CHARS,
    MAX_NODES,
    MAX_SUBGRAPH_DEPTH,
    MAX_SUBGRAPHS,
    MAX_TEXT_CHARS,
    parse_diagram,
    split_mermaid_block,
)

__all__ = [
    "MAX_EDGES",
    "MAX_LABEL_CHARS",
    "MAX_NODES",
    "MAX_SUBGRAPHS",
    "MAX_SUBGRAPH_DEPTH",
    "MAX_TEXT_CHARS",
    "Diagram",
    "DiagramError",
    "Edge",
    "LayoutError",
    "Node",
    "Subgraph",
    "parse_diagram",
    "render_svg",
    "split_mermaid_block",
]
