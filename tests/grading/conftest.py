"""Fixtures for the grading engine tests: a fixture question, shipped questions, a fake server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from grading import GraderConfig
from grading.fake_server import FakeChatServer
from grading.health import default_health_cache
from questionbank.files import YAML_LOADER

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def read_yaml(text: str) -> Any:
    """YAML read with the question bank's loader: libyaml's, where PyYAML has it, reads the
    bank's front matter (read at collection, in every worker) about ten times faster."""
    return yaml.load(text, Loader=YAML_LOADER)  # noqa: S506 (a safe loader)


def read_front_matter(path: Path) -> dict[str, Any]:
    """The YAML block between the first two `---` lines of a question file."""
    lines = path.read_text(encoding="utf-8").split("\n")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    return read_yaml("\n".join(lines[1:end]))


@pytest.fixture(scope="session")
def fixture_question() -> dict[str, Any]:
    """Our own small question (tests/grading/fixtures), independent of the shipped content."""
    return read_front_matter(FIXTURES / "grading-fixture.md")


@pytest.fixture(scope="session")
def shipped_question():
    """A loader for the shipped question files' front matter, checked by the question bank's
    own validator (the graders take a step's authored mapping as well as its typed spec)."""
    from questionbank.files import CONTENT_DIR, parse_file, question_file, validate_question

    cache: dict[str, dict[str, Any]] = {}

    def load(slug: str) -> dict[str, Any]:
        if slug not in cache:
            content = parse_file(question_file(slug, CONTENT_DIR))
            assert not validate_question(content, concept_slugs=None)
            cache[slug] = content.meta
        return cache[slug]

    return load


@pytest.fixture(autouse=True)
def fresh_health_cache() -> Iterator[None]:
    """Each test starts with no remembered health-check answer."""
    default_health_cache.clear()
    yield
    default_health_cache.clear()


@pytest.fixture
def fake_server() -> Iterator[FakeChatServer]:
    """A scripted OpenAI-compatible server on a free loopback port (set `.responder`)."""
    with FakeChatServer() as server:
        yield server


@pytest.fixture
def llm_config(fake_server: FakeChatServer) -> GraderConfig:
    """A grader pointed at the fake server: short timeout, no retries (tests script failures)."""
    return GraderConfig(base_url=fake_server.base_url, timeout_s=2.0, max_retries=0)
