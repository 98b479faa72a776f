"""A parsed architecture diagram as typed, immutable data, and the errors about one."""

from __future__ import annotations

from dataclasses import dataclass


class DiagramError(ValueError):
    """A diagram that cannot be read: a syntax error or a size limit, at a line and column
    (both 1-based, counted in characters). An error of the whole text (its length) has no
    place: `located` is False and the line and column are those of its start."""

    def __init__(
        self, message: str, line: int = 1, column: int = 1, *, located: bool = True
    ) -> None:
        super().__init__(f"line {line}, column {column}: {message}" if located else message)
        self.message = message
        self.line = line
        self.column = column
        self.located = located


class LayoutError(RuntimeError):
    """The layout engine could not draw a parsed diagram: it is missing, ran past its time
    limit or failed. `message` says which, in a sentence a candidate can read."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Node:
    """One component: its Mermaid id, its label (the id when none is written), the replica
    count written in the label (`vLLM x10` is 10; 1 when none), the id of the innermost
    subgraph it was first written in ("" for none) and its shape ("box", "round", "stadium",
    "cylinder", "diamond", "circle", "hexagon", "subroutine")."""

    id: str
    label: str
    count: int = 1
    subgraph: str = ""
    shape: str = "box"


@dataclass(frozen=True)
class Edge:
    """A connection from one node id to another, with its label ("" for none). `directed` is
    False for a line without an arrow head (`---`); `style` is "solid", "dotted" or "thick"."""

    source: str
    target: str
    label: str = ""
    directed: bool = True
    style: str = "solid"


@dataclass(frozen=True)
class Subgraph:
    """A titled group of nodes; `parent` is the id of the subgraph it sits in ("" for none)."""

    id: str
    title: str
    parent: str = ""


@dataclass(frozen=True)
class Diagram:
    """A flowchart: its direction ("LR", "RL", "TB" or "BT"; "TD" is read as "TB"), its nodes
    in the order they first appear, its edges in written order, and its subgraphs."""

    direction: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    subgraphs: tuple[Subgraph, ...] = ()

    def node(self, node_id: str) -> Node:
        """The node with this id; LookupError when there is none."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise LookupError(f"no node {node_id!r}")

    def edge_line(self, edge: Edge) -> str:
        """One edge as the graders read and quote it: "<source label> -> <target label>",
        plus " [<edge label>]" when the edge is labelled."""
        return _edge_line(edge, {node.id: node.label for node in self.nodes})

    def edge_lines(self) -> list[str]:
        """Every edge as `edge_line` writes it, in written order."""
        labels = {node.id: node.label for node in self.nodes}
        return [_edge_line(edge, labels) for edge in self.edges]


def _edge_line(edge: Edge, labels: dict[str, str]) -> str:
    line = f"{labels[edge.source]} -> {labels[edge.target]}"
    return f"{line} [{edge.label}]" if edge.label else line
