"""The question bank covers an LLM-inference design loop: at least 15 questions, at least six
models (one a mixture of experts) and five GPU types in the briefs, and every topic of the
loop taken up by a question's tags. Read from the files, no database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from planner.engine.catalog import load_catalog
from questionbank import load_question_spec

QUESTIONS = Path(__file__).resolve().parents[2] / "content" / "questions"
BANK = sorted(p.stem for p in QUESTIONS.glob("*.md"))
SPECS = {slug: load_question_spec(slug) for slug in BANK}

# Each topic the bank must cover, and the tag a question carries for it.
TOPICS = {
    "speculative decoding for a latency-bound assistant": "speculative-decoding",
    "prefill/decode disaggregation for long prompts": "pd-disaggregation",
    "a mixture-of-experts model": "moe",
    "offline batch inference at a daily token volume": "batch-inference",
    "multi-region serving that survives a region loss": "multi-region",
    "an embedding/rerank service": "embeddings",
    "agentic multi-turn traffic sharing long prefixes": "agentic",
    "a 70B model on mid-range cards with tensor parallelism": "tensor-parallelism",
    "finding one instance's knee with an open-loop load test": "load-testing",
    "a production incident after a deploy": "incident-response",
    "quantization to cut cost behind evaluation gates": "evaluation-gates",
    "choosing a serving framework": "serving-frameworks",
    "a token-metered multi-tenant gateway with an overload playbook": "overload",
}


def _catalog_key(kind: str, text: str) -> str | None:
    """The catalogue entry a brief names, or None for a model outside the catalogue."""
    entry = load_catalog().in_brief(kind, text)
    return entry.key if entry is not None else None


def test_the_bank_holds_at_least_fifteen_questions() -> None:
    assert len(BANK) >= 15


def test_the_briefs_name_six_models_one_of_them_moe_and_five_gpu_types() -> None:
    models = {_catalog_key("model", s.brief.model) or s.brief.model for s in SPECS.values()}
    gpus = {_catalog_key("gpu", s.brief.gpu or "") for s in SPECS.values()}
    assert len(models) >= 6, models
    assert any(load_catalog().model(m).is_moe for m in models if _catalog_key("model", m)), models
    assert None not in gpus, "every brief names a GPU the catalogue knows"
    assert len(gpus) >= 5, gpus


@pytest.mark.parametrize("topic", sorted(TOPICS))
def test_every_topic_of_the_loop_is_taken_up_by_a_question(topic: str) -> None:
    tag = TOPICS[topic]
    assert [slug for slug, spec in SPECS.items() if tag in spec.tags], f"no question tagged {tag}"


@pytest.mark.parametrize("slug", BANK)
def test_every_question_lists_its_sources_and_its_estimated_time(slug: str) -> None:
    spec = SPECS[slug]
    assert spec.sources, f"{slug} lists no sources"
    assert spec.minutes or all(step.minutes for step in spec.steps)


# Each question's estimate step is compared with the planner in a module of its own; the seed
# questions share one module, the RAG seed keeps the module it had.
PLANNER_TESTS = Path(__file__).resolve().parents[1] / "planner"
SEED_AGREEMENT = {
    "chat-api-50qps": "test_plan_bank_seed_questions.py",
    "multi-tenant-lora": "test_plan_bank_seed_questions.py",
    "long-context-rag": "test_plan_long_context_question.py",
}


@pytest.mark.parametrize("slug", BANK)
def test_every_question_has_at_least_five_authored_tests_per_step(slug: str) -> None:
    from questionbank import STEP_KEYS
    from questionbank.files import parse_file

    tests = parse_file(QUESTIONS / f"{slug}.md").meta["tests"]
    thin = {key: len(tests.get(key) or []) for key in STEP_KEYS if len(tests.get(key) or []) < 5}
    assert not thin, f"{slug}: fewer than 5 tests for {thin}"


@pytest.mark.parametrize("slug", BANK)
def test_every_questions_estimate_is_compared_with_the_planner(slug: str) -> None:
    module = SEED_AGREEMENT.get(slug, f"test_plan_bank_{slug.replace('-', '_')}.py")
    path = PLANNER_TESTS / module
    assert path.is_file(), f"{slug}: no planner agreement module {module}"
    assert slug in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("slug", BANK)
def test_no_correct_answer_of_the_bank_is_flagged_with_a_wrong_idea(slug: str) -> None:
    """The references, and every answer test a person marked all hit, state none of the
    question's wrong ideas as the offline matcher reads them: a false flag tells a candidate
    who was right that they were wrong (the bare `mean` that matched "means" did)."""
    from grading.offline import grade_offline
    from questionbank.files import parse_file

    spec = SPECS[slug]
    parts = {s.key: s for s in spec.steps} | {f.id: f for s in spec.steps for f in s.follow_ups}
    answers = [
        (key, part.reference, getattr(part, "reference_diagram", "")) for key, part in parts.items()
    ]
    for key, entries in parse_file(QUESTIONS / f"{slug}.md").meta["tests"].items():
        for entry in entries:
            verdicts = set((entry.get("expect") or {}).values())
            if entry.get("answer") and verdicts == {"hit"}:
                answers.append((key, str(entry["answer"]), entry.get("diagram") or ""))
    flagged = [
        (key, [m.id for m in result.misconceptions], text[:60])
        for key, text, diagram in answers
        if (result := grade_offline(parts[key], text, diagram=diagram or "")).misconceptions
    ]
    assert not flagged, flagged


def test_one_tag_per_idea():
    # The bank's Topic filter lists every tag: two spellings of one idea ("multi-tenant" and
    # "multi-tenancy", "batch" and "batch-inference") split its questions between them.
    def stem(tag: str) -> str:
        return re.sub(r"(-inference|ancy|ant|s)$", "", tag)

    spellings: dict[str, set[str]] = {}
    for spec in SPECS.values():
        for tag in spec.tags:
            spellings.setdefault(stem(tag), set()).add(tag)
    assert [sorted(tags) for tags in spellings.values() if len(tags) > 1] == []
