"""The shipped questions' diagram rules read against candidates' diagrams: the path through a
router is credited, a gateway wired straight to the replicas is not, and the self-check
helper (the offline grader) says the diagram gave the evidence."""

from __future__ import annotations

import pytest

from diagrams import parse_diagram
from grading.diagram import diagram_verdict
from grading.offline import grade_offline
from questionbank import DiagramRule, load_question_spec

# Per shipped question: its path point (gateway -> router -> replicas, with the routing policy
# named), the policy as a candidate writes it, and its node points with a node that meets each.
SHIPPED = {
    "chat-api-50qps": {
        "path_point": "arch-prefix-router",
        "policy": "prefix-aware",
        "nodes": {
            "arch-gateway": "gwx[API gateway: API keys, rate limits]",
            "arch-autoscale-queue": "scaler[Autoscaler: queue depth]",
        },
    },
    "long-context-rag": {
        "path_point": "a3-prefix-router",
        "policy": "hash of the KB prefix",
        "nodes": {"a3-offload": "tier[(KV offload tier: CPU RAM)]"},
    },
    "multi-tenant-lora": {
        "path_point": "a2-adapter-routing",
        "policy": "adapter-aware",
        "nodes": {
            "a2-registry": "registry[(Adapter registry)]",
            "a2-autoscale": "scaler[Autoscaler: num_requests_waiting]",
        },
    },
}
# Prose that earns none of the architecture points by itself.
NEUTRAL_PROSE = "The diagram shows my design."


def architecture(slug: str):
    return load_question_spec(slug).step("architecture")


def point(slug: str, point_id: str):
    return next(p for p in architecture(slug).rubric if p.id == point_id)


def verdict_of(slug: str, point_id: str, diagram: str):
    graded = grade_offline(architecture(slug), NEUTRAL_PROSE, diagram=diagram)
    return next(p for p in graded.points if p.id == point_id)


@pytest.mark.parametrize("slug", SHIPPED)
def test_each_architecture_step_has_a_reference_diagram_and_two_diagram_points(slug):
    step = architecture(slug)
    assert step.has_diagram
    assert parse_diagram(step.reference_diagram).edges
    assert len([p for p in step.rubric if p.diagram is not None]) >= 2


@pytest.mark.parametrize("slug", SHIPPED)
def test_the_path_through_a_router_with_its_policy_is_credited(slug):
    policy = SHIPPED[slug]["policy"]
    found = verdict_of(
        slug,
        SHIPPED[slug]["path_point"],
        f"flowchart LR\n  gw[API gateway] --> router[Router] -->|{policy}| vllm[vLLM x10]",
    )
    assert (found.verdict, found.evidence_source) == ("hit", "diagram")
    assert found.diagram_evidence == ["API gateway -> Router", f"Router -> vLLM x10 [{policy}]"]
    assert found.evidence == f"API gateway -> Router; Router -> vLLM x10 [{policy}]"


@pytest.mark.parametrize("slug", SHIPPED)
def test_the_policy_may_be_written_on_the_router_node_instead(slug):
    policy = SHIPPED[slug]["policy"]
    found = verdict_of(
        slug,
        SHIPPED[slug]["path_point"],
        f"flowchart TD\n  gw[API gateway] --> router{{Router: {policy}}}\n  router --> v[vLLM]",
    )
    assert (found.verdict, found.evidence_source) == ("hit", "diagram")


@pytest.mark.parametrize("slug", SHIPPED)
def test_the_path_without_the_policy_is_partly_credited(slug):
    found = verdict_of(
        slug,
        SHIPPED[slug]["path_point"],
        "flowchart LR\n  gw[API gateway] --> router[Router] --> vllm[vLLM x10]",
    )
    assert (found.verdict, found.evidence_source) == ("partial", "diagram")
    assert "does not name" in found.comment


@pytest.mark.parametrize("slug", SHIPPED)
def test_a_gateway_wired_straight_to_the_replicas_is_not_credited(slug):
    policy = SHIPPED[slug]["policy"]
    found = verdict_of(
        slug,
        SHIPPED[slug]["path_point"],
        f"flowchart LR\n  gw[API gateway] -->|{policy}| vllm[vLLM x10]\n  router[Router] --> vllm",
    )
    assert (found.verdict, found.evidence_source, found.diagram_evidence) == ("miss", "", [])


@pytest.mark.parametrize("slug", SHIPPED)
def test_arrows_against_the_path_are_not_credited(slug):
    policy = SHIPPED[slug]["policy"]
    found = verdict_of(
        slug,
        SHIPPED[slug]["path_point"],
        f"flowchart LR\n  vllm[vLLM x10] -->|{policy}| router[Router] --> gw[API gateway]",
    )
    assert found.verdict == "miss"


@pytest.mark.parametrize(
    ("slug", "point_id"), [(s, p) for s, v in SHIPPED.items() for p in v["nodes"]]
)
def test_each_node_point_is_credited_by_a_node_that_shows_it(slug, point_id):
    node = SHIPPED[slug]["nodes"][point_id]
    found = verdict_of(slug, point_id, f"flowchart LR\n  {node} --> vllm[vLLM]")
    assert (found.verdict, found.evidence_source) == ("hit", "diagram")
    assert found.diagram_evidence[0] == parse_diagram(f"graph LR\n{node}").nodes[0].label


@pytest.mark.parametrize(
    ("slug", "point_id"), [(s, p) for s, v in SHIPPED.items() for p in v["nodes"]]
)
def test_a_node_point_is_not_credited_by_the_component_alone(slug, point_id):
    bare = SHIPPED[slug]["nodes"][point_id].split("[")[0]  # the id, no label
    found = verdict_of(slug, point_id, f"flowchart LR\n  {bare}[Box] --> vllm[vLLM]")
    assert found.verdict == "miss"


def test_a_node_rule_reads_the_label_of_an_edge_touching_the_node():
    rule = point("chat-api-50qps", "arch-autoscale-queue").diagram
    drawn = parse_diagram("flowchart LR\n  vllm[vLLM] -->|queue depth| scaler[Autoscaler]")
    found = diagram_verdict(rule, drawn)
    assert found.verdict == "hit"
    assert found.evidence == ("Autoscaler", "vLLM -> Autoscaler [queue depth]")
    elsewhere = parse_diagram(
        "flowchart LR\n  vllm[vLLM] -->|queue depth| m[Metrics]\n  m --> scaler[Autoscaler]"
    )
    assert diagram_verdict(rule, elsewhere).verdict == "miss"


def test_a_denied_label_does_not_match():
    rule = DiagramRule(path=(("gateway",), ("router",), ("vllm",)))
    drawn = parse_diagram("flowchart LR\n  gw[Gateway] --> r[No router here] --> v[vLLM]")
    assert diagram_verdict(rule, drawn).verdict == "miss"


def test_a_line_without_an_arrow_head_counts_either_way():
    rule = DiagramRule(path=(("gateway",), ("router",), ("vllm",)))
    drawn = parse_diagram("flowchart LR\n  r[Router] --- gw[Gateway]\n  r --> v[vLLM]")
    found = diagram_verdict(rule, drawn)
    assert found.verdict == "hit"
    assert found.evidence == ("Router -> Gateway", "Router -> vLLM")


def test_ids_name_nodes_too_and_the_first_chain_found_is_the_evidence():
    rule = DiagramRule(path=(("gateway",), ("router",), ("replica",)))
    drawn = parse_diagram(
        "flowchart LR\n  gateway --> router\n  router --> replica_a[A]\n  router --> replica_b[B]"
    )
    assert diagram_verdict(rule, drawn).evidence == ("gateway -> router", "router -> A")


def test_the_prose_still_earns_a_point_when_the_diagram_does_not():
    step = architecture("chat-api-50qps")
    prose = "A prefix-aware router sends requests that share the system prompt to the same replica."
    graded = grade_offline(step, prose, diagram="flowchart LR\n  gw[Gateway] --> v[vLLM]")
    found = next(p for p in graded.points if p.id == "arch-prefix-router")
    assert (found.verdict, found.evidence_source, found.evidence) == ("hit", "prose", prose)


def test_an_unreadable_diagram_is_graded_without_and_says_where_it_broke():
    graded = grade_offline(
        architecture("chat-api-50qps"), NEUTRAL_PROSE, diagram="flowchart LR\n  gw --> "
    )
    assert graded.warnings[0] == (
        "the diagram could not be read (line 2, column 10: expected a node id (letters, "
        "digits, _) but found the end of the line); graded on the prose alone"
    )
    assert all(p.evidence_source != "diagram" for p in graded.points)
