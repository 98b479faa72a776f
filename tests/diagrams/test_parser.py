"""The Mermaid flowchart subset read into a Diagram: every form, errors at their line and
column, the size limits, and hostile input refused fast."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diagrams
from diagrams import Diagram, DiagramError, Edge, Node, Subgraph, parse_diagram
from diagrams.parser import split_mermaid_block


def one_node(text: str) -> Node:
    [node] = parse_diagram(f"flowchart LR\n  {text}").nodes
    return node


def edges_of(text: str) -> list[Edge]:
    return list(parse_diagram(f"flowchart LR\n  {text}").edges)


def error_of(text: str) -> DiagramError:
    with pytest.raises(DiagramError) as caught:
        parse_diagram(text)
    return caught.value


# --- the header ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "direction"),
    [
        ("flowchart LR", "LR"),
        ("flowchart RL", "RL"),
        ("flowchart TD", "TB"),
        ("flowchart TB", "TB"),
        ("flowchart BT", "BT"),
        ("graph LR", "LR"),
        ("graph td", "TB"),
        ("flowchart", "TB"),
    ],
)
def test_the_header_sets_the_direction(header, direction):
    assert parse_diagram(f"{header}\n  a --> b").direction == direction


def test_comments_and_blank_lines_before_the_header_are_skipped():
    diagram = parse_diagram("%% the serving path\n\n%%{init: {}}%%\ngraph LR; a --> b")
    assert diagram.direction == "LR" and [n.id for n in diagram.nodes] == ["a", "b"]


def test_an_empty_diagram_is_an_error_at_line_one():
    error = error_of("  \n%% nothing\n")
    assert (error.line, error.column) == (1, 1)
    assert "empty" in error.message and "flowchart LR" in error.message


def test_a_diagram_other_than_a_flowchart_is_refused():
    error = error_of("sequenceDiagram\n  a->>b: hi")
    assert (error.line, error.column) == (1, 1) and "flowchart" in error.message


def test_an_unknown_direction_points_at_it():
    error = error_of("flowchart XY\n  a --> b")
    assert (error.line, error.column) == (1, 11) and "XY" in error.message


# --- nodes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "label", "shape"),
    [
        ("gw", "gw", "box"),
        ("gw[API gateway]", "API gateway", "box"),
        ("gw(API gateway)", "API gateway", "round"),
        ("gw([API gateway])", "API gateway", "stadium"),
        ("gw[(API gateway)]", "API gateway", "cylinder"),
        ("gw{API gateway}", "API gateway", "diamond"),
        ("gw((API gateway))", "API gateway", "circle"),
        ("gw{{API gateway}}", "API gateway", "hexagon"),
        ("gw[[API gateway]]", "API gateway", "subroutine"),
        ('gw["API gateway: auth (keys), [limits]"]', "API gateway: auth (keys), [limits]", "box"),
        ("gw[API<br>gateway]", "API gateway", "box"),
        ("gw[  API   gateway  ]", "API gateway", "box"),
        ("kv-offload[KV tier]", "KV tier", "box"),
        ("vllm_pool_1[vLLM]", "vLLM", "box"),
    ],
)
def test_every_node_form_gives_its_label_and_shape(written, label, shape):
    node = one_node(written)
    assert (node.label, node.shape) == (label, shape)


def test_a_node_id_with_inner_hyphens_is_one_id():
    assert one_node("kv-offload-tier").id == "kv-offload-tier"


def test_a_bracket_inside_a_label_falls_back_to_the_shorter_shape():
    # "[(" is a cylinder only when ")]" closes it; here the "(" belongs to the label.
    assert one_node("store[(legacy) object store]").label == "(legacy) object store"


@pytest.mark.parametrize(
    ("label", "count"),
    [
        ("vLLM x10", 10),
        ("vLLM ×10", 10),
        ("vLLM X 4", 4),
        ("vLLM replicas (x3)", 3),
        ("10x vLLM", 10),
        ("vLLM", 1),
        ("gpt-4x", 1),
        ("H100x8 box", 1),
    ],
)
def test_a_replica_count_in_a_label_is_read(label, count):
    assert one_node(f"v[{label}]").count == count


def test_a_later_label_replaces_an_earlier_one_and_order_is_first_mention():
    diagram = parse_diagram("flowchart LR\n  a --> b\n  b[Router]\n  a[Gateway]")
    assert [(n.id, n.label) for n in diagram.nodes] == [("a", "Gateway"), ("b", "Router")]


# --- edges --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "label", "directed", "style"),
    [
        ("a --> b", "", True, "solid"),
        ("a-->b", "", True, "solid"),
        ("a ---> b", "", True, "solid"),
        ("a --- b", "", False, "solid"),
        ("a -.-> b", "", True, "dotted"),
        ("a -.- b", "", False, "dotted"),
        ("a ==> b", "", True, "thick"),
        ("a === b", "", False, "thick"),
        ("a -->|prefix hash| b", "prefix hash", True, "solid"),
        ('a -->|"queue depth"| b', "queue depth", True, "solid"),
        ("a -- prefix hash --> b", "prefix hash", True, "solid"),
        ("a -- plain line --- b", "plain line", False, "solid"),
        ("a -. traces .-> b", "traces", True, "dotted"),
        ("a == hot path ==> b", "hot path", True, "thick"),
        ("a -.->|weights| b", "weights", True, "dotted"),
    ],
)
def test_every_edge_form_gives_its_label_and_kind(written, label, directed, style):
    [edge] = edges_of(written)
    assert (edge.source, edge.target) == ("a", "b")
    assert (edge.label, edge.directed, edge.style) == (label, directed, style)


def test_a_chain_is_one_edge_per_arrow_and_shapes_may_sit_inside_it():
    diagram = parse_diagram("flowchart LR\n  gw[Gateway] --> r{Router} -->|hash| v[(vLLM x4)]")
    assert [(e.source, e.target, e.label) for e in diagram.edges] == [
        ("gw", "r", ""),
        ("r", "v", "hash"),
    ]
    assert [n.label for n in diagram.nodes] == ["Gateway", "Router", "vLLM x4"]


def test_an_ampersand_joins_every_source_to_every_target():
    edges = edges_of("gw & lb --> r1[Router] & r2 -->|hash| v")
    assert [(e.source, e.target, e.label) for e in edges] == [
        ("gw", "r1", ""),
        ("gw", "r2", ""),
        ("lb", "r1", ""),
        ("lb", "r2", ""),
        ("r1", "v", "hash"),
        ("r2", "v", "hash"),
    ]


def test_statements_may_share_a_line_separated_by_semicolons():
    diagram = parse_diagram("graph LR; a --> b; b --> c;")
    assert len(diagram.edges) == 2


def test_edge_lines_are_what_the_graders_read():
    diagram = parse_diagram(
        "flowchart LR\n  gw[API gateway] --> r[Router]\n  r -->|prefix hash| v[vLLM x10]"
    )
    assert diagram.edge_lines() == [
        "API gateway -> Router",
        "Router -> vLLM x10 [prefix hash]",
    ]


def test_styling_lines_are_read_and_ignored():
    diagram = parse_diagram(
        "flowchart LR\n  a --> b\n  classDef hot fill:#f96\n  class a hot\n"
        "  style b fill:#bbf,stroke:#333\n  linkStyle 0 stroke:red\n  click a callback"
    )
    assert [n.id for n in diagram.nodes] == ["a", "b"] and len(diagram.edges) == 1


def test_a_comment_may_end_a_line():
    assert len(edges_of("a --> b %% the only edge")) == 1


# --- subgraphs ----------------------------------------------------------------------------


def test_subgraphs_nest_and_nodes_belong_to_the_innermost_one_they_are_first_named_in():
    diagram = parse_diagram(
        "flowchart TB\n"
        "  gw[Gateway] --> r[Router]\n"
        "  subgraph fleet [GPU fleet]\n"
        "    subgraph pool1 [Pool 1]\n"
        "      r --> v1[vLLM]\n"
        "    end\n"
        '    subgraph "Pool 2"\n'
        "      v2[vLLM]\n"
        "    end\n"
        "  end\n"
        "  subgraph control\n"
        "    direction LR\n"
        "    autoscaler\n"
        "  end"
    )
    assert diagram.subgraphs == (
        Subgraph("fleet", "GPU fleet"),
        Subgraph("pool1", "Pool 1", parent="fleet"),
        Subgraph("subgraph-3", "Pool 2", parent="fleet"),
        Subgraph("control", "control"),
    )
    where = {n.id: n.subgraph for n in diagram.nodes}
    # The router was first named outside any subgraph, then inside pool1: it joins pool1,
    # as Mermaid groups a node a subgraph lists.
    assert where == {
        "gw": "",
        "r": "pool1",
        "v1": "pool1",
        "v2": "subgraph-3",
        "autoscaler": "control",
    }


def test_a_subgraph_title_may_be_written_without_brackets():
    diagram = parse_diagram("flowchart LR\n  subgraph gpus GPU pool\n    a\n  end")
    assert diagram.subgraphs[0].title == "gpus GPU pool"


# --- errors at their line and column --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("flowchart LR\n  a --> ", 2, 9, "node id"),
        ("flowchart LR\n  a[API gateway --> b", 2, 4, "not closed"),
        ("flowchart LR\n  a -->|policy b", 2, 8, "not closed"),
        ("flowchart LR\n  a -- policy b", 2, 5, "-->"),
        ("flowchart LR\n  a -. traces b", 2, 5, ".->"),
        ('flowchart LR\n  a["quoted] --> b', 2, 5, "quoted"),
        ("flowchart LR\n  a <--> b", 2, 5, "two-headed"),
        ("flowchart LR\n  a --> b c", 2, 11, "unexpected 'c'"),
        ("flowchart LR\n  a[]", 2, 4, "empty label"),
        ("flowchart LR\n  end", 2, 3, "without an open subgraph"),
        ("flowchart LR\n  subgraph pool\n    a", 2, 12, "not closed"),
        ("flowchart LR\n  a --> end", 2, 9, "keyword"),
        ("flowchart LR\n  subgraph a\n  end\n  a --> b", 4, 3, "subgraph"),
        ("flowchart LR\n  a\n  subgraph a\n  end", 3, 12, "already used"),
        ("flowchart LR\n  direction XY", 2, 13, "unknown direction"),
    ],
)
def test_a_syntax_error_names_its_line_and_column(text, line, column, words):
    error = error_of(text)
    assert (error.line, error.column) == (line, column), error.message
    assert words in error.message
    assert str(error).startswith(f"line {line}, column {column}: ")


def test_columns_count_characters_not_bytes():
    error = error_of("flowchart LR\n  é[Gateway ×2] --> ")
    assert (error.line, error.column) == (2, 21)  # 23 in UTF-8 bytes


# --- limits ---------------------------------------------------------------------------------


def test_the_limits_are_module_constants():
    assert (
        diagrams.MAX_TEXT_CHARS,
        diagrams.MAX_NODES,
        diagrams.MAX_EDGES,
        diagrams.MAX_SUBGRAPH_DEPTH,
        diagrams.MAX_LABEL_CHARS,
    ) == (20_000, 150, 300, 6, 120)


def test_a_diagram_at_every_limit_is_read():
    nodes = "\n".join(f"  n{i}" for i in range(diagrams.MAX_NODES))
    chains = "\n".join(f"  n{i % 150} --> n{(i * 7 + 1) % 150}" for i in range(diagrams.MAX_EDGES))
    nested = "".join(f"subgraph s{i}\n" for i in range(diagrams.MAX_SUBGRAPH_DEPTH))
    label = "x" * diagrams.MAX_LABEL_CHARS
    text = f"flowchart LR\n{nodes}\n{chains}\n{nested}  n0[{label}]\n" + "end\n" * 6
    assert len(text) <= diagrams.MAX_TEXT_CHARS
    diagram = parse_diagram(text)
    assert (len(diagram.nodes), len(diagram.edges)) == (150, 300)


@pytest.mark.parametrize(
    ("text", "words", "line"),
    [
        ("flowchart LR\n" + "\n".join(f"n{i}" for i in range(151)), "more than 150 nodes", 152),
        ("flowchart LR\n" + "\n".join(f"a --> b{i % 2}" for i in range(301)), "300 edges", 302),
        (
            "flowchart LR\n"
            + " & ".join(f"n{i}" for i in range(18))
            + " --> "
            + " & ".join(f"m{i}" for i in range(18)),
            "300 edges",
            2,
        ),
        (
            "flowchart LR\n" + "".join(f"subgraph s{i}\n" for i in range(7)) + "a\n" + "end\n" * 7,
            "nest more than 6",
            8,
        ),
        (f"flowchart LR\n  a[{'x' * 121}]", "the label is 121 characters", 2),
        (f"flowchart LR\n  a -->|{'y' * 200}| b", "the label is 200 characters", 2),
        (
            "flowchart LR\n" + "".join(f"subgraph s{i}\nend\n" for i in range(51)),
            "50 subgraphs",
            102,
        ),
        ("flowchart LR\n  a --> b\n" + "%" * 20_000, "the limit is 20,000", 1),
    ],
)
def test_past_a_limit_is_an_error_that_names_it(text, words, line):
    error = error_of(text)
    assert words in error.message and error.line == line


def test_the_length_limit_is_an_error_of_the_whole_text_not_of_a_place():
    text = "flowchart LR\n  a --> b\n" + "%" * 20_000
    error = error_of(text)
    assert error.located is False
    assert str(error) == f"the diagram is {len(text):,} characters long; the limit is 20,000"
    # A syntax error has its place.
    assert error_of("flowchart LR\n  a -->").located is True


HOSTILE = {
    "5,000 nodes": "flowchart LR\n" + "\n".join(f"n{i} --> n{i + 1}" for i in range(5000)),
    "5,000 nodes on one line": "graph LR;" + ";".join(f"n{i}" for i in range(5000)),
    "a 1 MB label": "flowchart LR\n  a[" + "x" * 1_000_000 + "] --> b",
    "deep nesting": "flowchart LR\n" + "".join(f"subgraph s{i}\n" for i in range(2000)),
    "an unclosed label of 19,000 characters": "flowchart LR\n  a[" + "[(" * 9_500,
    "19,000 dashes": "flowchart LR\n  a " + "-" * 19_000,
    "a label search that never closes": "flowchart LR\n  a -- " + "-x" * 9_000,
    "dotted labels that never close": "flowchart LR\n  a -. " + ".-x" * 6_000,
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_input_is_refused_in_well_under_a_second(name):
    started = time.perf_counter()
    with pytest.raises(DiagramError):
        parse_diagram(HOSTILE[name])
    assert time.perf_counter() - started < 0.25


PIECES = [*'ab_-.=>|[](){}"%; \nx×1', "flowchart LR\n", "end", "subgraph ", "-->", "-.-"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=120).map("".join))
def test_any_text_parses_or_raises_a_diagram_error_with_a_position(text):
    try:
        diagram = parse_diagram(text)
    except DiagramError as exc:
        assert exc.line >= 1 and exc.column >= 1 and exc.message
    else:
        assert isinstance(diagram, Diagram)
        ids = {n.id for n in diagram.nodes}
        assert all(e.source in ids and e.target in ids for e in diagram.edges)
        diagram.edge_lines()


# --- an answer file's ```mermaid block ------------------------------------------------------


def test_the_mermaid_block_of_an_answer_file_is_split_from_the_prose():
    text = "We route by prefix hash.\n\n```mermaid\nflowchart LR\n  a --> b\n```\n\nWe scale."
    prose, diagram = split_mermaid_block(text)
    assert diagram == "flowchart LR\n  a --> b"
    assert prose == "We route by prefix hash.\n\n\nWe scale."


def test_a_longer_fence_holds_backticks_and_other_blocks_stay_prose():
    text = "````mermaid\nflowchart LR\n  a[```] --> b\n````\n```python\nx = 1\n```"
    prose, diagram = split_mermaid_block(text)
    assert diagram == "flowchart LR\n  a[```] --> b"
    assert prose == "```python\nx = 1\n```"


def test_no_mermaid_block_means_no_diagram_and_two_are_refused():
    assert split_mermaid_block("Just prose.") == ("Just prose.", "")
    with pytest.raises(DiagramError) as caught:
        split_mermaid_block("```mermaid\nflowchart LR\n```\ntext\n~~~mermaid\ngraph TD\n~~~")
    assert caught.value.line == 5


# --- what a candidate pastes or forgets (QA) ------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "gw[API gateway --> router[Router]",
        "gw(API gateway --> router(Router)",
        "gw{API gateway --> router{Router}",
        "gw([Clients --> router([Router])",
    ],
)
def test_a_bracket_left_open_before_the_next_node_is_an_error_not_one_long_label(text):
    # The closer found was the next node's: the edge would vanish into the first label.
    error = error_of(f"flowchart LR\n  {text}")
    assert (error.line, error.column) == (2, 5), error.message
    assert "not closed" in error.message


def test_a_class_written_on_a_node_is_read_and_ignored():
    diagram = parse_diagram("flowchart LR\n  gw[API gateway]:::hot --> r:::cold & v:::x-y")
    assert [(n.id, n.label) for n in diagram.nodes] == [
        ("gw", "API gateway"),
        ("r", "r"),
        ("v", "v"),
    ]
    assert diagram.edge_lines() == ["API gateway -> r", "API gateway -> v"]
    assert "class name" in error_of("flowchart LR\n  a::: --> b").message


def test_control_characters_in_a_label_read_as_spaces():
    assert one_node("a[vLLM\x07 x10\x00replicas\x1b]").label == "vLLM x10 replicas"


def test_a_byte_order_mark_and_zero_width_spaces_pasted_in_are_skipped():
    diagram = parse_diagram("\ufeffflowchart LR\n  gw\u200b --> \u200brouter")
    assert diagram.edge_lines() == ["gw -> router"]


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("a --o b", ""),
        ("a --x b", ""),
        ("a ---o b", ""),
        ("a --x|health check| b", "health check"),
        ("a ==o b", ""),
    ],
)
def test_an_edge_ending_in_a_circle_or_a_cross_is_an_edge(written, label):
    # Mermaid's `--o` and `--x` ends: they read "an edge label after '--' must end with '-->'".
    [edge] = edges_of(written)
    assert (edge.source, edge.target, edge.label, edge.directed) == ("a", "b", label, True)
    # A label that starts with o or x is still a label.
    [edge] = edges_of("a --oauth token--> b")
    assert edge.label == "oauth token"
