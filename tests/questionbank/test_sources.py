"""A question lists where its figures come from: each source is checked (title, an http(s)
address) and shown on the question's page under the brief."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from questionbank.files import parse_file, validate_question
from questionbank.spec import QuestionSpec

SHIPPED = Path(settings.CONTENT_DIR) / "questions" / "chat-api-50qps.md"


def _with_sources(block: str) -> str:
    """The shipped question with its sources list replaced by `block`."""
    text = SHIPPED.read_text()
    start, end = text.index("\nsources:\n"), text.index("\nbrief:\n")
    return text[:start] + "\n" + block.rstrip("\n") + text[end:]


def _problems(block: str) -> list[str]:
    cf = parse_file(SHIPPED, _with_sources(block))
    return [p.message for p in validate_question(cf, concept_slugs=None)]


def test_a_listed_source_is_accepted_and_reaches_the_spec() -> None:
    block = (
        "sources:\n"
        "  - title: NVIDIA RTX 4090 datasheet\n"
        "    url: https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/\n"
        "    facts: 24 GB GDDR6X, 1008 GB/s\n"
    )
    cf = parse_file(SHIPPED, _with_sources(block))
    assert validate_question(cf, concept_slugs=None) == []
    spec = QuestionSpec.from_meta(cf.meta)
    assert [(s.title, s.facts) for s in spec.sources] == [
        ("NVIDIA RTX 4090 datasheet", "24 GB GDDR6X, 1008 GB/s")
    ]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("sources: []\n", "sources must be a list"),
        (
            "sources:\n  - title: x\n    url: javascript:alert(1)\n",
            "url must be an http(s) address",
        ),
        ("sources:\n  - url: https://example.org/\n", "title"),
        ("sources:\n  - title: x\n    url: https://example.org/\n    pages: 3\n", "pages"),
    ],
)
def test_a_bad_source_is_a_problem_that_says_what_is_wrong(block: str, message: str) -> None:
    assert any(message in p for p in _problems(block)), _problems(block)


def test_the_question_page_lists_its_sources(client, content_loaded) -> None:
    from questions.selectors import question_current_revision

    revision = question_current_revision("long-context-rag")
    response = client.get(f"/questions/{revision.question.slug}/")
    sources = revision.question_spec.sources
    assert sources, "the shipped question lists its sources"
    assert sources[0].url in response.content.decode()
