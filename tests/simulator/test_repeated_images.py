"""Prefixes that come and go: vision-language-api's users ask several questions about one image
within a minute, so a follow-up repeats the image's tokens as a prefix, and routing that keeps
an image on the replica holding its KV beats round-robin, which scatters the follow-ups over
replicas that never saw the image."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from questionbank import load_question_spec
from simulator.engine import ReplicaModel, Scenario, Workload, simulate
from simulator.services import REPEATED_PREFIXES, fleet_run, page_scenarios, routed_traffic
from tests.planner.agreement import QuestionFigures
from tests.simulator.bank import reference_design

SLUG = "vision-language-api"


def replica() -> ReplicaModel:
    return ReplicaModel(
        max_batch=32,
        kv_tokens=10**8,
        step_base_s=0.001,
        step_per_stream_s=0.0,
        prefill_s_per_token=1e-6,
    )


def images(router: str, replicas: int) -> tuple[float, int]:
    """Four questions an image within a minute, on a pool that never evicts: the share of
    requests that hit and the groups (images) the run opened."""
    w = Workload(qps=40, input_tokens=1400, output_tokens=4, length_dist="fixed",
                 prefix_groups=600, prefix_tokens=1340, common_tokens=60, prefix_share=0.75,
                 prefix_lifetime_s=60)  # fmt: skip
    s = Scenario(replicas=replicas, seconds=120, router=router, warm_cache=True)
    result = simulate(replica(), w, s)
    seated = [i for i, a in enumerate(result.admitted_at) if not math.isnan(a)]
    return sum(result.prefix_hit[i] for i in seated) / len(seated), len(seated)


def test_a_new_group_misses_everywhere_and_its_repeats_hit_where_it_was_prefilled():
    # One replica holds every image it prefilled: the repeats hit, the new images miss.
    hits, _ = images("round-robin", 1)
    assert hits == pytest.approx(0.75, abs=0.02)
    # Eighteen replicas in turn: a follow-up finds its image only on the replicas that took
    # its earlier questions; prefix-aware sends it to the one that holds it.
    scattered, _ = images("round-robin", 18)
    kept, _ = images("prefix-aware", 18)
    assert scattered < 0.2 < 0.7 < kept


def test_the_images_traffic_is_the_questions_own():
    figures = QuestionFigures(SLUG)
    chosen = REPEATED_PREFIXES[SLUG]
    # The capped image after the half of the text ahead of it; the question is the other half.
    assert chosen["tokens"] == figures.question("tok_cap") + figures.given("text_tok") / 2
    assert chosen["common"] == figures.given("text_tok") / 2
    spec = load_question_spec(SLUG)
    text = " ".join(_strings(spec))  # every string the question file holds
    for words in chosen["says"]:
        assert words in text, words
    traffic = routed_traffic(reference_design(SLUG))
    # 40 QPS, one request in four a new image, each repeated for a minute: 600 images live,
    # fewer than the 18 pools keep, each holding hundreds beside a full batch.
    assert (traffic.tokens, traffic.common, traffic.share, traffic.lifetime_s) == (
        1340, 60, 0.75, 60
    )  # fmt: skip
    assert traffic.groups == 600 < 18 * traffic.per_replica
    assert "one request in 4 brings a new image" in traffic.note


def _strings(value):
    """Every string inside a question spec (dataclasses, lists, dicts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            yield from _strings(getattr(value, name))


def routing(replicas: int) -> tuple[dict, dict]:
    design = reference_design(SLUG)
    runs = page_scenarios(design)["routing"]["runs"]
    rr, aware = (
        fleet_run(design, replace(spec, replicas=replicas, qps=design.qps))["figures"]
        for spec in runs
    )
    return rr, aware


def test_prefix_aware_routing_beats_round_robin_on_repeated_images():
    # Before, the question's routing runs sent no prefix groups: both routers hit nothing,
    # prefilled the same tokens and tied.
    rr, aware = routing(18)
    assert aware["prefix_hit_rate"] > 0.7 > 0.2 > rr["prefix_hit_rate"]
    # A follow-up prefills its question, not the image: a third of the prefill work, and the
    # median first token without the image's 140 ms prefill.
    assert aware["prefill_tokens"] < rr["prefill_tokens"] / 2
    assert aware["ttft_p50_ms"] < rr["ttft_p50_ms"] / 3
    assert aware["tpot_p50_ms"] < rr["tpot_p50_ms"]
    # Fewer replicas than the reference's 18 hold the SLO only where the follow-ups hit.
    rr, aware = routing(12)
    assert aware["holds_slo"] and not rr["holds_slo"]
    assert aware["tpot_p99_ms"] < rr["tpot_p99_ms"]
