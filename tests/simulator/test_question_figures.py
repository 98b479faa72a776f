"""The simulator's per-question figures (planner.briefs: the routing scenario's prefix traffic
and the prefill-only designs) are the figures each question's own estimate step gives, so a
question edited in content/ without its design fails here rather than simulating stale
traffic."""

from __future__ import annotations

import pytest

from planner.briefs import POOLED_DESIGNS, ROUTED_PREFIXES
from simulator.services import routed_traffic
from tests.planner.agreement import QuestionFigures
from tests.simulator.bank import reference_design

# slug -> the estimate step's names for the tokens every group's prefix opens with (a given)
# and the groups its traffic has (a given or a quantity); None where the question names none.
ROUTED_FROM = {
    "long-context-rag": (None, None),
    "agentic-prefix-sharing": ("n_static", "idle_sessions"),
    "voice-agent-latency-budget": ("n_sys", "calls"),
}


def _figure(figures: QuestionFigures, name: str) -> float:
    if name in figures.quantity_ids:
        return figures.question(name)
    return figures.given(name)


@pytest.mark.parametrize("slug", sorted(ROUTED_FROM))
def test_the_routing_scenarios_prefixes_are_the_questions_own(slug: str) -> None:
    assert set(ROUTED_PREFIXES) == set(ROUTED_FROM)
    common, groups = ROUTED_FROM[slug]
    figures = QuestionFigures(slug)
    chosen = ROUTED_PREFIXES[slug]
    assert chosen["common"] == (_figure(figures, common) if common else 0)
    assert chosen["groups"] == (round(_figure(figures, groups)) if groups else None)
    # And the routing runs send them: the question's count where the pools hold it, and its
    # shared part at the head of every group's prefix.
    traffic = routed_traffic(reference_design(slug))
    assert traffic.question_groups == chosen["groups"]
    assert traffic.common == min(chosen["common"], traffic.tokens - 1)


def test_the_rerank_design_sends_the_questions_tokens() -> None:
    figures = QuestionFigures("embedding-rerank-service")
    query, passage, pairs = (figures.given(n) for n in ("q_len", "p_len", "k_rerank"))
    design = POOLED_DESIGNS["embedding-rerank-service"]
    assert design["tokens"] == query + pairs * (query + passage)  # the query, then its pairs
    assert design["seq_len"] == query + passage  # attention spans one pair
    assert reference_design("embedding-rerank-service").pooled.tokens == design["tokens"]
