"""What a quote must be before it can back a rubric point the model awarded.

The model proposes verdicts and quotes; these rules decide which quotes stand:

1. The quote is found verbatim in the answer (`text.quote_span`), is at least 12 characters,
   and lies in a sentence that may earn (not a bare list, not text addressed to the grader;
   a list of engine flags may back a point whose wording names a flag).
2. The quote carries at least one term of the step's subject matter. The terms are the
   content words of everything the step is about (its prompt, rubric, reference and concepts,
   and the question's title and brief) plus a small lexicon of LLM-serving terms, minus common
   English and words that fit any design ("system", "server", "work", "scale"). So "I would
   use some servers for this system here" backs nothing, while a paraphrase in words the
   offline recogniser does not know ("conversations that open with the same instructions go
   to the GPU that already holds them in memory") still can.
3. One sentence backs one point on the model's word alone. When the quotes for several
   points come from the same sentence, each of those points keeps its credit only if its own
   quote carries a term that sets the point apart from the others claiming that sentence: a
   term of its own wording (what it `says`, its concepts) that none of theirs has. "Prefix"
   or "KV" run through a whole prefix-caching rubric and say which point nothing. When no
   point's quote sets it apart, only one keeps the sentence: the first in rubric order whose
   quote carries a term of its own wording, else the first.
   A long sentence that really states two ideas keeps both; one on-topic sentence cannot be
   spread over the whole rubric.

Words are compared by a crude stem ("routing", "router", "route" are one term), the same on
both sides, so it only has to be consistent, not linguistically right.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from grading.text import (
    AnswerReading,
    Sentence,
    folded_words,
    normalise_for_quote,
    quote_in_answer,
)
from grading.types import GradedStep, RubricPoint

MIN_EVIDENCE_CHARS = 12

_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ed", "es", "e", "ly", "s")


def stem(word: str) -> str:
    """A folded word cut to a crude stem; the stem keeps at least four characters."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


# Function words and everyday English: they say nothing about any subject.
_COMMON = {
    "a", "about", "above", "after", "again", "all", "already", "also", "always", "am", "an",
    "and", "any", "are", "around", "as", "at", "be", "because", "been", "before", "being",
    "below", "best", "better", "between", "both", "but", "by", "can", "cannot", "could", "did",
    "do", "does", "doing", "done", "down", "during", "each", "either", "else", "enough",
    "even", "ever", "every", "few", "first", "for", "from", "get", "gets", "give", "go",
    "going", "good", "got", "great", "had", "has", "have", "having", "he", "her", "here",
    "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "keep", "know",
    "last", "least", "less", "let", "like", "likely", "lot", "lots", "made", "make", "many",
    "may", "maybe", "me", "might", "more", "most", "much", "must", "my", "name", "need",
    "never", "new", "next", "no", "nor", "not", "now", "of", "off", "often", "on", "once",
    "one", "only", "or", "other", "our", "out", "over", "own", "per", "put", "quite",
    "rather", "really", "right", "said", "same", "say", "see", "she", "should", "so",
    "some", "something", "still", "such", "sure", "take", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "thing", "things", "think", "this", "those",
    "though", "through", "to", "too", "two", "under", "until", "up", "us", "use", "used",
    "using", "very", "via", "want", "was", "way", "we", "well", "were", "what", "when",
    "where", "whether", "which", "while", "who", "whole", "why", "will", "with", "within",
    "without", "would", "yes", "yet", "you", "your", "answer", "question", "step", "candidate",
    "interviewer", "draw", "explain", "describe", "tell", "you'd", "i'd",
    "it's", "we'd", "we'll", "i'll", "don't", "won't", "can't", "fine", "okay", "ok", "nice",
    "probably", "basically", "simply", "everything", "anything", "nothing",
}  # fmt: skip
# Words that fit any system design and so cannot show which idea a quote states.
_GENERIC = {
    "system", "systems", "server", "serve", "service", "serving", "machine", "computer",
    "component", "part", "solution", "approach", "design", "architecture", "work", "works",
    "working", "handle", "handling", "scale", "scaling", "scalable", "performance", "fast",
    "slow", "efficient", "reliable", "robust", "data", "app", "application",
    "infrastructure", "cloud", "setup", "set", "build", "run", "running", "stuff", "request",
    "user", "client", "model", "api", "load", "time", "issue", "problem", "plan", "pick",
    "choose", "option", "case", "level", "layer", "path", "flow", "process",
}  # fmt: skip
# Terms of LLM serving that are on topic in every step, whether or not its text uses them.
_DOMAIN = {
    "gpu", "gpus", "kv", "cache", "token", "prefill", "decode", "batch", "batching",
    "replica", "latency", "throughput", "queue", "backlog", "vllm", "router", "routing",
    "shard", "tenant", "adapter", "lora", "quantisation", "quantization", "awq", "gptq",
    "int4", "int8", "fp8", "bf16", "fp16", "memory", "vram", "hbm", "bandwidth", "ttft",
    "tpot", "p50", "p90", "p95", "p99", "slo", "sla", "autoscaling", "autoscaler", "prefix",
    "prompt", "context", "embedding", "retrieval", "rag", "chunk", "attention", "paged",
    "speculative", "tensor", "parallelism", "nvlink", "pcie", "flops", "tflops", "concurrency",
    "gateway", "balancer", "affinity", "failover", "headroom", "eviction", "preemption", "oom",
    "streaming", "percentile", "utilisation", "utilization", "warmup", "fleet", "quota",
    "throttle", "qps", "rps", "weights", "inference", "h100", "a100", "l4",
}  # fmt: skip


def _stems(words: Iterable[str]) -> frozenset[str]:
    return frozenset(stem(w) for w in words)


_COMMON_STEMS = _stems(_COMMON)
_GENERIC_STEMS = _stems(_GENERIC)
_DOMAIN_STEMS = _stems(folded_words(" ".join(sorted(_DOMAIN))))


def content_terms(text: str) -> frozenset[str]:
    """The stems of a text's words that could name a subject: no common or generic words and
    no bare numbers (a figure alone does not say which idea it belongs to)."""
    stems = _stems(w for w in folded_words(text) if not w.replace(".", "").isdigit())
    return stems - _COMMON_STEMS - _GENERIC_STEMS


def _text_of(value: Any) -> str:
    """Every string inside a nested value (a brief, a list of phrase groups), joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(f"{k} {_text_of(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return " ".join(_text_of(v) for v in value)
    return "" if value is None else str(value)


def _field(step: GradedStep, name: str) -> Any:
    """A field of a typed step or follow-up, or of its authored mapping."""
    return step.get(name) if isinstance(step, Mapping) else getattr(step, name, None)


@dataclass(frozen=True)
class StepVocabulary:
    """The terms a quote may carry to count as evidence: for the step, and for each point."""

    step: frozenset[str]
    points: dict[str, frozenset[str]]


def step_vocabulary(
    step: GradedStep, points: list[RubricPoint], context: dict[str, Any] | str | None
) -> StepVocabulary:
    """The subject-matter terms of a step (see the module docstring for what goes in)."""
    own = {
        p.id: content_terms(f"{p.says} {_text_of(p.concepts).replace('-', ' ')}") for p in points
    }
    described = " ".join(
        [
            _text_of(_field(step, "prompt")),
            _text_of(_field(step, "reference")),
            " ".join(_text_of((p.all_groups, p.partial_groups)) for p in points),
            _text_of(context.get("title") if isinstance(context, dict) else context),
            _text_of(context.get("brief") if isinstance(context, dict) else None).replace("_", " "),
        ]
    )
    everything = content_terms(described).union(*own.values()) | _DOMAIN_STEMS
    return StepVocabulary(step=frozenset(everything), points=own)


def evidence_problem(
    evidence: str,
    reading: AnswerReading,
    vocabulary: StepVocabulary,
    *,
    asks_settings: bool = False,
) -> tuple[str | None, list[Sentence]]:
    """Why a quote cannot back an awarded point (None when it can), and the sentences it lies in.

    Rules 1 and 2 of the module docstring; rule 3 needs every point's quote and is applied by
    `limit_shared_sentences`. `asks_settings`: the point names an engine flag, so a list of
    flags may back it (`Sentence.earns_settings`), as it does for the offline grader.
    """
    # What any quote must be, a misconception's too; then what only backing a point asks.
    problem, sentences = misconception_quote_problem(evidence, reading)
    if problem:
        return problem, sentences
    earns = [s.earns_settings if asks_settings else s.earns for s in sentences]
    if sentences and not any(earns):
        return "comes from a bare list of terms", sentences
    if not content_terms(evidence) & vocabulary.step:
        return "carries no term of this step's subject", sentences
    return None, sentences


def misconception_quote_problem(
    quote: str, reading: AnswerReading
) -> tuple[str | None, list[Sentence]]:
    """Why a quote cannot show that the answer states a misconception (None when it can), and
    the sentences it lies in: rule 1 of the module docstring, except that a bare list may
    state a wrong idea as well as a sentence does."""
    if len(normalise_for_quote(quote)) < MIN_EVIDENCE_CHARS:
        return f"is shorter than {MIN_EVIDENCE_CHARS} characters", []
    sentences = quote_in_answer(quote, reading)
    if sentences is None:
        return "is not found in the answer", []
    if any(s.injection for s in sentences):
        return "comes from text addressed to the grader", sentences
    return None, sentences


@dataclass(frozen=True)
class Backing:
    """An awarded point with its quote and the sentences the quote lies in."""

    point_id: str
    evidence: str
    sentences: frozenset[int]


def limit_shared_sentences(backings: list[Backing], vocabulary: StepVocabulary) -> dict[str, str]:
    """Rule 3: the points that lose their credit because they share a sentence, with why.

    `backings` are in rubric order. Each point is judged against the points whose quotes share
    a sentence with its own (its neighbours), not against every point reached through a chain
    of shared sentences. Returns {point id: the id of a neighbour that kept the sentence};
    points not in the result keep their credit.
    """
    order = {b.point_id: i for i, b in enumerate(backings)}
    neighbours = {
        b.point_id: [o for o in backings if o is not b and o.sentences & b.sentences]
        for b in backings
    }
    apart = {
        b.point_id
        for b in backings
        if neighbours[b.point_id] and _sets_apart(b, neighbours[b.point_id], vocabulary.points)
    }
    lost: dict[str, str] = {}
    for b in backings:
        near = neighbours[b.point_id]
        if not near or b.point_id in apart:
            continue
        keepers = [o for o in near if o.point_id in apart]
        if not keepers:
            # None of them is set apart: one keeps the sentence, the first in rubric order
            # whose quote carries a term of its own wording, else the first.
            pool = sorted([b, *near], key=lambda o: order[o.point_id])
            keepers = [o for o in pool if _own_terms(o, vocabulary.points)] or pool
            if keepers[0] is b:
                continue
        lost[b.point_id] = keepers[0].point_id
    return lost


def _sets_apart(
    backing: Backing, neighbours: list[Backing], points: dict[str, frozenset[str]]
) -> bool:
    """Whether the backing's quote carries a term of its own point that none of the points
    claiming a sentence of it (`neighbours`) has in its wording."""
    others = [points.get(b.point_id, frozenset()) for b in neighbours]
    return bool(_own_terms(backing, points).difference(*others))


def _own_terms(backing: Backing, points: dict[str, frozenset[str]]) -> frozenset[str]:
    """The terms of the backing's own point that its quote carries."""
    return content_terms(backing.evidence) & points.get(backing.point_id, frozenset())
