"""A lenient or misled model cannot hand out points: what a quote must be to back a point.

Each test runs the real model grader against FakeChatServer (a real HTTP server) scripted to
answer as a model would, and checks what the app lets through.
"""

from __future__ import annotations

import pytest

from grading import GraderConfig, grade, grade_offline
from grading.evidence import (
    Backing,
    StepVocabulary,
    content_terms,
    limit_shared_sentences,
    step_vocabulary,
)
from grading.fake_server import FakeChatServer, ScriptedReply, grade_content, response_ids
from grading.types import rubric_points

GENERIC = "I would use some servers for this system here. It should work fine."
GENERIC_QUOTE = "I would use some servers for this system here."

# A strong answer to the fixture's architecture step in words its recognise phrases do not
# know: no "router", "prefix", "autoscale", "gateway".
PARAPHRASE = {
    "prefix-aware-router": (
        "Conversations that open with the same instructions are steered to the GPU box that "
        "already holds that opening in memory, so it is never computed twice."
    ),
    "queue-autoscaling": (
        "We grow the fleet when the line of unanswered calls gets long, instead of watching "
        "how busy the GPUs look."
    ),
    "gateway": (
        "Every call first passes a front service that checks credentials and caps how often "
        "each tenant may call."
    ),
}
PARAPHRASED_ANSWER = " ".join(PARAPHRASE.values())


def every_point_hit_with(quote: str):
    """A model that marks every rubric point hit, quoting the same words each time."""

    def respond(request: dict) -> ScriptedReply:
        return ScriptedReply(
            content=grade_content(
                [
                    {"id": i, "evidence": quote, "verdict": "hit", "comment": "Covered."}
                    for i in response_ids(request)
                ]
            )
        )

    return respond


def quoting(evidence: dict[str, str]):
    """A model that marks each point hit with its own quote."""

    def respond(request: dict) -> ScriptedReply:
        return ScriptedReply(
            content=grade_content(
                [
                    {"id": i, "evidence": evidence[i], "verdict": "hit", "comment": "Covered."}
                    for i in response_ids(request)
                ]
            )
        )

    return respond


@pytest.fixture
def step(fixture_question):
    return fixture_question["steps"]["architecture"]


def llm_grade(step, answer, responder, context=None):
    with FakeChatServer(responder) as server:
        config = GraderConfig(base_url=server.base_url, timeout_s=5, max_retries=0)
        return grade(step, answer, mode="llm", context=context, config=config)


def test_one_generic_sentence_marked_hit_everywhere_earns_nothing(step):
    result = llm_grade(step, GENERIC, every_point_hit_with(GENERIC_QUOTE))
    assert result.grader == "llm"
    assert result.score <= 0.25
    assert result.score == 0.0
    assert sum("no term of this step's subject" in w for w in result.warnings) == 3


@pytest.mark.parametrize("slug", ["chat-api-50qps", "multi-tenant-lora", "long-context-rag"])
@pytest.mark.parametrize("step_key", ["architecture", "bottlenecks", "tradeoffs"])
def test_the_generic_sentence_earns_nothing_on_any_shipped_step(shipped_question, slug, step_key):
    spec = shipped_question(slug)
    context = {"slug": slug, "title": spec["title"], "brief": spec["brief"], "step_key": step_key}
    result = llm_grade(
        spec["steps"][step_key], GENERIC, every_point_hit_with(GENERIC_QUOTE), context
    )
    assert result.score <= 0.25, [(p.id, p.verdict) for p in result.points]


ON_TOPIC = {
    # One sentence in the words that run through the whole step's rubric.
    "agentic-prefix-sharing": "We keep each session's prefix in the KV cache for its next turn",
    "long-context-rag": "The prefix cache keeps the long prompts' KV so prefill is skipped",
    "metered-gateway-overload": "Overload control keeps each tenant under its token budget",
}


@pytest.mark.parametrize("slug", sorted(ON_TOPIC))
@pytest.mark.parametrize("step_key", ["architecture", "bottlenecks", "tradeoffs"])
def test_one_on_topic_sentence_marked_hit_everywhere_backs_a_point_or_two(
    shipped_question, slug, step_key
):
    # A lenient model quoting one real sentence for every point: the words "prefix", "KV"
    # or "overload" are in most of these rubrics' points, so they name none of them.
    spec = shipped_question(slug)
    context = {"slug": slug, "title": spec["title"], "brief": spec["brief"], "step_key": step_key}
    sentence = ON_TOPIC[slug]
    result = llm_grade(
        spec["steps"][step_key], sentence + ". That is my design.", every_point_hit_with(sentence),
        context,
    )  # fmt: skip
    # A word of the sentence that only one point uses still sets that point apart ("long"
    # for the long-context evals of FP8), so two may keep it; every one of them did before.
    hits = [p.id for p in result.points if p.verdict == "hit"]
    assert 1 <= len(hits) <= 2, hits
    assert result.score < 0.5


def test_a_paraphrased_strong_answer_keeps_the_models_credit(step):
    offline = grade_offline(step, PARAPHRASED_ANSWER)
    model = llm_grade(step, PARAPHRASED_ANSWER, quoting(PARAPHRASE))
    assert offline.score == 0.0  # the recogniser knows none of these words
    assert model.score == 1.0
    assert [p.evidence for p in model.points] == [q.rstrip(".") for q in PARAPHRASE.values()]
    assert not any("evidence rejected" in w for w in model.warnings)


def test_one_on_topic_sentence_backs_only_the_point_it_states(step):
    answer = (
        "A prefix-aware router sends chats that share the system prompt to the same replica. "
        "The rest is standard."
    )
    quote = "A prefix-aware router sends chats that share the system prompt to the same replica."
    result = llm_grade(step, answer, every_point_hit_with(quote))
    verdicts = {p.id: p.verdict for p in result.points}
    assert verdicts == {
        "prefix-aware-router": "hit",
        "queue-autoscaling": "miss",
        "gateway": "miss",
    }
    assert result.score == pytest.approx(2 / 5)
    shared = [w for w in result.warnings if "backs prefix-aware-router" in w]
    assert len(shared) == 2


def test_a_point_refused_for_a_shared_sentence_tells_the_candidate_in_words(step):
    answer = "A prefix-aware router sends chats that share the system prompt to one replica."
    result = llm_grade(step, answer, every_point_hit_with(answer.rstrip(".")))
    refused = [p for p in result.points if p.verdict == "miss"]
    assert refused
    for p in refused:  # the audit's warnings keep the ids; the candidate reads no rubric id
        assert "prefix-aware-router" not in p.comment and "quotes the" not in p.comment
        assert "the sentence that backs another point" in p.comment


def test_a_sentence_that_states_two_points_backs_both(step):
    answer = (
        "An API gateway checks keys and rate limits, and behind it a prefix-aware router "
        "sends shared prompts to one replica."
    )
    result = llm_grade(
        step,
        answer,
        quoting(
            {
                "gateway": "An API gateway checks keys and rate limits",
                "prefix-aware-router": "a prefix-aware router sends shared prompts to one replica",
                "queue-autoscaling": "An API gateway checks keys and rate limits",
            }
        ),
    )
    verdicts = {p.id: p.verdict for p in result.points}
    assert verdicts == {"prefix-aware-router": "hit", "queue-autoscaling": "miss", "gateway": "hit"}


def test_when_no_sharing_point_is_stated_the_first_keeps_the_sentence(step):
    # On topic (memory, the peak) but in none of the points' own words: the model's word
    # backs one point at most.
    answer = "We buy enough memory for the peak. Nothing else matters."
    result = llm_grade(step, answer, every_point_hit_with("We buy enough memory for the peak."))
    verdicts = {p.id: p.verdict for p in result.points}
    assert verdicts == {
        "prefix-aware-router": "hit",
        "queue-autoscaling": "miss",
        "gateway": "miss",
    }


def test_generic_words_are_not_subject_terms(step, fixture_question):
    vocabulary = step_vocabulary(step, rubric_points(step), None)
    assert not content_terms(GENERIC) & vocabulary.step
    for sentence in PARAPHRASE.values():
        assert content_terms(sentence) & vocabulary.step, sentence


def test_a_list_of_engine_flags_backs_only_a_point_that_asks_for_settings(shipped_question):
    # The same rule as the offline grader's: flags are the configuration a point asks for, and
    # back nothing else.
    step = shipped_question("chat-api-50qps")["steps"]["architecture"]
    flags = "Engine flags: --max-model-len 8192, --gpu-memory-utilization 0.90, --enforce-eager"
    result = llm_grade(step, flags + ".", every_point_hit_with(flags))
    verdicts = {p.id: p.verdict for p in result.points}
    assert verdicts["arch-engine-config"] == "hit"
    assert verdicts["arch-prefix-router"] == "miss"
    assert "evidence rejected for arch-prefix-router (comes from a bare list" in " ".join(
        result.warnings
    )


def test_a_refused_points_comment_restates_the_point_whole_or_not_at_all(shipped_question):
    """A long reason and a long point do not fit one comment: the point is never cut off
    mid-word (the candidate reads the comment under the point)."""
    spec = shipped_question("chat-api-50qps")
    step = spec["steps"]["architecture"]
    quote = "We put a load balancer in front of vLLM replicas with continuous batching"
    result = llm_grade(step, quote + ". Autoscale on queue depth.", every_point_hit_with(quote))
    says = {p.id: p.says for p in rubric_points(step)}
    refused = [p for p in result.points if p.comment.startswith("Not awarded")]
    assert any("backs" in p.comment for p in refused), [p.comment for p in result.points]
    for p in refused:
        assert p.comment.endswith(".") or p.comment.endswith(says[p.id]), p.comment


def test_a_point_is_judged_against_the_points_sharing_its_own_sentence():
    # "overload" quotes both sentences; "scale" the first and "shed" the second. "shed" is
    # set apart from "overload" (the one point sharing its sentence) by "queue", which only
    # "scale", whose quote shares nothing with its own, also has: "shed" keeps its credit.
    wording = {
        "scale": "Autoscale on queue depth rather than GPU utilisation",
        "overload": "Under overload shed load with 429 and autoscale",
        "shed": "Shed load by queue",
    }
    vocabulary = StepVocabulary(
        step=frozenset().union(*(content_terms(w) for w in wording.values())),
        points={k: content_terms(v) for k, v in wording.items()},
    )
    first = "Autoscale on queue depth, not GPU utilisation"
    second = "Shed load with a 429 when the queue is full"
    backings = [
        Backing("scale", first, frozenset({0})),
        Backing("overload", f"{first}. {second}", frozenset({0, 1})),
        Backing("shed", second, frozenset({1})),
    ]
    lost = limit_shared_sentences(backings, vocabulary)
    assert "shed" not in lost
    # Whoever loses is told of a point whose quote shares its sentence.
    for point, keeper in lost.items():
        mine = next(b for b in backings if b.point_id == point).sentences
        assert mine & next(b for b in backings if b.point_id == keeper).sentences
