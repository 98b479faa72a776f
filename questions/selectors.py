"""Reads: questions and concepts as the pages show them."""

from __future__ import annotations

import time

from django.http import Http404

from questionbank import STEP_KEYS, Brief
from questions.models import Concept, Question, QuestionRevision

STEP_TITLES = {
    "clarify": "Clarify the requirements",
    "estimate": "Napkin math",
    "architecture": "Architecture",
    "bottlenecks": "Bottlenecks and failure modes",
    "tradeoffs": "Trade-offs and follow-ups",
}


def question_list() -> list[QuestionRevision]:
    """The current revision of every published question, in slug order (one query).

    Without the file's text and its rendered HTML, which no list shows and which make up
    most of a revision row (tens of kilobytes each): reading them back would cost a query
    per row, so a list page never should."""
    return list(
        QuestionRevision.objects.filter(pk__in=Question.objects.values("current_revision"))
        .select_related("question")
        .defer("source_text", "rendered")
        .order_by("question__slug")
    )


def question_current_revision(slug: str) -> QuestionRevision:
    """The published revision of the question `slug`; Http404 when there is none."""
    revision = (
        QuestionRevision.objects.select_related("question")
        .filter(pk__in=Question.objects.filter(slug=slug).values("current_revision"))
        .first()
    )
    if revision is None:
        raise Http404("No such question.")
    return revision


CONCEPT_CACHE_S = 30.0
_concepts: dict[str, Concept] = {}
_concepts_loaded_at = float("-inf")


def concepts_by_slug(slugs: list[str] | set[str]) -> dict[str, Concept]:
    """Concept titles and summaries by slug, from an in-process copy refreshed every 30 s
    (every practice page links concepts; they change only when content is loaded)."""
    global _concepts, _concepts_loaded_at
    now = time.monotonic()
    if now - _concepts_loaded_at > CONCEPT_CACHE_S:
        _concepts = {c.slug: c for c in Concept.objects.only("slug", "title", "summary")}
        _concepts_loaded_at = now
    return {s: _concepts[s] for s in slugs if s in _concepts}


def concepts_cache_clear() -> None:
    global _concepts_loaded_at
    _concepts_loaded_at = float("-inf")


def question_steps(revision: QuestionRevision) -> list[dict]:
    """The five steps in order, each with its title, rendered prompt and linked concepts."""
    question = revision.question_spec
    concepts = concepts_by_slug({slug for step in question.steps for slug in step.concepts})
    steps = []
    for number, key in enumerate(STEP_KEYS, start=1):
        spec = question.step(key)
        steps.append(
            {
                "number": number,
                "key": key,
                "title": STEP_TITLES[key],
                "minutes": spec.minutes,
                "prompt_html": revision.html(key)["prompt"],
                "concepts": [concepts[s] for s in spec.concepts if s in concepts],
                "rubric_count": len(spec.rubric),
                "follow_up_count": len(spec.follow_ups),
                "quantity_count": len(spec.quantities),
            }
        )
    return steps


BRIEF_LABELS = [
    ("model", "Model", ""),
    ("gpu", "GPU class", ""),
    ("context_length", "Context length", "tokens"),
    ("peak_qps", "Peak load", "QPS"),
    ("mean_qps", "Mean load", "QPS"),
    ("ttft_p99_ms", "p99 TTFT", "ms"),
    ("tpot_p99_ms", "p99 TPOT", "ms"),
    ("e2e_p99_ms", "p99 end-to-end", "ms"),
    ("input_tokens", "Input length", "tokens"),
    ("output_tokens", "Output length", "tokens"),
    ("tenancy", "Tenancy", ""),
]


def brief_rows(brief: Brief) -> list[tuple[str, str]]:
    """The brief as (label, value with unit) rows, in a fixed order."""
    rows = []
    for key, label, unit in BRIEF_LABELS:
        value = brief.value_of(key)
        if value is not None:
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, int) and value >= 10_000:
                value = f"{value:,}"
            rows.append((label, f"{value} {unit}".strip()))
    return rows


def concept_detail(slug: str) -> tuple[Concept, list[Concept], list[QuestionRevision]]:
    """A concept, its related concepts, and the questions whose steps link to it."""
    concept = Concept.objects.filter(slug=slug).first()
    if concept is None:
        raise Http404("No such concept.")
    related = list(
        Concept.objects.filter(slug__in=concept.related).only("slug", "title", "summary")
    )
    questions = [
        r for r in question_list() if any(slug in step.concepts for step in r.question_spec.steps)
    ]
    return concept, related, questions
