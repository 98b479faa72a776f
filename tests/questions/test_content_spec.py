"""The question bank's one loader: file text in, a typed spec or file:line problems out."""

from pathlib import Path

import pytest

from questionbank import ContentError, load_question, load_question_spec

CONTENT = Path(__file__).resolve().parents[2] / "content"
CHAT = CONTENT / "questions" / "chat-api-50qps.md"


def test_a_shipped_question_loads_as_typed_data():
    spec, problems = load_question(CHAT)
    assert problems == []
    assert spec.slug == "chat-api-50qps"
    assert spec.brief.peak_qps == 50 and spec.brief.tpot_p99_ms == 50
    assert [step.key for step in spec.steps] == [
        "clarify",
        "estimate",
        "architecture",
        "bottlenecks",
        "tradeoffs",
    ]
    tpot = spec.step("estimate").quantity("tpot_floor")
    assert tpot.unit == "ms" and tpot.tolerance > 0
    assert spec.step("clarify").rubric[0].id == "clarify-peak-qps"
    assert spec.step("clarify").rubric[0].weight == 2


def test_a_follow_up_is_found_by_its_id_from_the_question_or_its_step():
    spec = load_question_spec("chat-api-50qps")
    first = spec.step("tradeoffs").follow_ups[0]
    assert spec.follow_up(first.id) is first
    assert spec.step("tradeoffs").follow_up(first.id) is first
    with pytest.raises(LookupError):
        spec.follow_up("no-such-follow-up")


def test_a_broken_file_gives_no_spec_and_problems_at_their_lines():
    text = CHAT.read_text().replace("difficulty: core", "difficulty: impossible", 1)
    line = next(n for n, s in enumerate(text.splitlines(), 1) if s.startswith("difficulty:"))
    spec, problems = load_question("chat-api-50qps.md", text)
    assert spec is None
    assert [str(p) for p in problems] == [
        f"chat-api-50qps.md:{line}: difficulty must be one of intro, core, advanced"
    ]


def test_the_brief_as_the_model_grader_reads_it_keeps_the_authored_keys_only():
    brief = load_question_spec("chat-api-50qps").brief.as_dict()
    assert brief["model"] == "Qwen2.5-7B-Instruct"
    assert brief["peak_qps"] == 50
    assert "e2e_p99_ms" not in brief  # the file does not set it
    assert isinstance(brief["constraints"], list) and brief["constraints"]


@pytest.mark.parametrize("slug", ["../secrets", "Chat", "", "a--b", "-a"])
def test_a_string_that_is_not_a_slug_is_refused_before_any_file_is_read(slug):
    with pytest.raises(ContentError, match="is not a question slug"):
        load_question_spec(slug)
