"""Reading a candidate's architecture diagram against the rubric: what both graders take
from it.

A rubric point's `diagram` rule (`questionbank.spec.DiagramRule`) says what the diagram must
show: a chain of edges (`path`) or one node (`node`). `diagram_verdict` checks one rule and
returns the matched node labels and edge lines as evidence; phrases match labels exactly as
the offline grader's `recognise` phrases match sentences (`grading.text.find_phrase`: folded
words, each at the start of a word, compounds, and not where the label denies it, "no router").

`read_diagram` turns the Mermaid text the candidate wrote into a `Diagram`, or the reason it
cannot be read, for either grader; `diagram_lines` are the lines the model grader is shown
and may quote: every edge line (`Diagram.edge_lines`) and every node label.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from diagrams import Diagram, DiagramError, Edge, Node, parse_diagram
from grading.text import Phrase, find_phrase, normalise_for_quote, phrase_variants, read_answer
from questionbank.spec import DiagramRule


@dataclass(frozen=True)
class DiagramReading:
    """The candidate's diagram as the graders see it: parsed, or why it could not be."""

    diagram: Diagram | None
    problem: str = ""

    @property
    def warning(self) -> str:
        """The grade's warning when a diagram was written but could not be read ("" else)."""
        if not self.problem:
            return ""
        return f"the diagram could not be read ({self.problem}); graded on the prose alone"


def read_diagram(text: str) -> DiagramReading:
    """The diagram of an answer: None (and no problem) when none was written."""
    if not (text or "").strip():
        return DiagramReading(None)
    try:
        return DiagramReading(parse_diagram(text))
    except DiagramError as exc:
        return DiagramReading(None, problem=str(exc))


@dataclass(frozen=True)
class DiagramVerdict:
    """What a diagram earns for one rule: "hit", "partial" or "miss", the node labels and edge
    lines that show it (in the candidate's own labels), and one sentence saying so."""

    verdict: str
    evidence: tuple[str, ...] = ()
    comment: str = ""


@lru_cache(maxsize=4096)
def _label_has(label: str, phrase: str) -> bool:
    """Whether a label holds a phrase (or one of its generic equivalents), not denied."""
    for variant in phrase_variants(phrase):
        wanted = Phrase.parse(variant)
        for sentence in read_answer(label).sentences:
            if any(not o.negated for o in find_phrase(sentence, wanted)):
                return True
    return False


def _names(node: Node, group: Iterable[str]) -> bool:
    """Whether a node's label or id holds a phrase of the group."""
    return any(_label_has(node.label, p) or _label_has(node.id, p) for p in group)


def _labelled(text: str, group: Iterable[str]) -> bool:
    return bool(text) and any(_label_has(text, p) for p in group)


def diagram_verdict(rule: DiagramRule, diagram: Diagram) -> DiagramVerdict:
    """How a diagram stands against one rubric point's rule (see `DiagramRule`)."""
    if rule.path:
        return _path_verdict(rule, diagram)
    return _node_verdict(rule, diagram)


def _path_verdict(rule: DiagramRule, diagram: Diagram) -> DiagramVerdict:
    nodes = {node.id: node for node in diagram.nodes}
    outgoing: dict[str, list[Edge]] = {}
    for edge in diagram.edges:
        outgoing.setdefault(edge.source, []).append(edge)
        if not edge.directed:  # a plain line reads either way
            outgoing.setdefault(edge.target, []).append(
                Edge(edge.target, edge.source, edge.label, directed=False, style=edge.style)
            )
    # Chains found so far, one per node reached (the first found), as the edges taken.
    chains: dict[str, tuple[Edge, ...]] = {
        node.id: () for node in diagram.nodes if _names(node, rule.path[0])
    }
    for group in rule.path[1:]:
        reached: dict[str, tuple[Edge, ...]] = {}
        for node_id, chain in chains.items():
            for edge in outgoing.get(node_id, ()):
                target = nodes[edge.target]
                if edge.target != node_id and edge.target not in reached and _names(target, group):
                    reached[edge.target] = (*chain, edge)
        chains = reached
        if not chains:
            return DiagramVerdict("miss", comment=_missing_path(rule))
    if not rule.edge_label:
        chain = next(iter(chains.values()))
        return DiagramVerdict("hit", _chain_lines(chain, diagram), "Shown in the diagram")
    for chain in chains.values():
        if _chain_names(chain, nodes, rule.edge_label):
            return DiagramVerdict("hit", _chain_lines(chain, diagram), "Shown in the diagram")
    chain = next(iter(chains.values()))
    wanted = " or ".join(f'"{p}"' for p in rule.edge_label[:3])
    return DiagramVerdict(
        "partial",
        _chain_lines(chain, diagram),
        f"The diagram shows the path but does not name {wanted} on it",
    )


def _chain_names(chain: tuple[Edge, ...], nodes: dict[str, Node], phrases: tuple[str, ...]) -> bool:
    """Whether a phrase is written on an edge of the chain or in the label of one of its nodes."""
    on_nodes = {chain[0].source, *(edge.target for edge in chain)}
    return any(_labelled(edge.label, phrases) for edge in chain) or any(
        _labelled(nodes[node_id].label, phrases) for node_id in on_nodes
    )


def _chain_lines(chain: tuple[Edge, ...], diagram: Diagram) -> tuple[str, ...]:
    """The chain's edges as the candidate's edge lines (an undirected edge as written)."""
    written = {(e.source, e.target, e.label): e for e in diagram.edges}
    lines = []
    for edge in chain:
        original = written.get((edge.source, edge.target, edge.label)) or written.get(
            (edge.target, edge.source, edge.label)
        )
        lines.append(diagram.edge_line(original or edge))
    return tuple(lines)


def _missing_path(rule: DiagramRule) -> str:
    steps = " -> ".join(group[0] for group in rule.path)
    return f"The diagram has no path {steps}"


def _node_verdict(rule: DiagramRule, diagram: Diagram) -> DiagramVerdict:
    first, rest = rule.node[0], rule.node[1:]
    for node in diagram.nodes:
        if not _names(node, first):
            continue
        touching = [e for e in diagram.edges if node.id in (e.source, e.target) and e.label]
        used: list[Edge] = []
        for group in rest:
            if _labelled(node.label, group):
                continue
            edge = next((e for e in touching if _labelled(e.label, group)), None)
            if edge is None:
                break
            if edge not in used:
                used.append(edge)
        else:
            evidence = (node.label, *(diagram.edge_line(e) for e in used))
            return DiagramVerdict("hit", evidence, "Shown in the diagram")
    wanted = " with ".join(group[0] for group in rule.node)
    return DiagramVerdict("miss", comment=f"The diagram has no node {wanted}")


def diagram_lines(diagram: Diagram) -> list[str]:
    """What the model grader is shown of a diagram and may quote: every node label, then
    every edge line, each once."""
    return list(dict.fromkeys([*(node.label for node in diagram.nodes), *diagram.edge_lines()]))


def quoted_lines(quote: str, diagram: Diagram) -> list[str] | None:
    """The diagram lines a grader's quote cites, or None when any part of it is not one.

    A quote may cite several lines separated by ";" or new lines; each part must be a node
    label or an edge line of the diagram, compared as quotes are (case and whitespace
    folded), so a quote citing an edge the diagram does not have is refused like an invented
    quote of the prose.
    """
    known = {normalise_for_quote(line): line for line in diagram_lines(diagram)}
    whole = known.get(normalise_for_quote(quote))
    if whole is not None:
        return [whole]
    parts = [p.strip() for chunk in quote.splitlines() for p in chunk.split(";")]
    parts = [p for p in parts if p]
    if not parts:
        return None
    found = [known.get(normalise_for_quote(p)) for p in parts]
    if any(line is None for line in found):
        return None
    return list(dict.fromkeys(line for line in found if line))
