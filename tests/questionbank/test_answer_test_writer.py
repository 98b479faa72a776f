"""Adding an answer test to a question file's text: one test added, every other byte kept."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from questionbank.answer_test_writer import with_answer_test
from questionbank.files import parse_file, validate_question

CHAT = Path(__file__).resolve().parents[2] / "content" / "questions" / "chat-api-50qps.md"


def added_lines(before: str, after: str) -> list[str]:
    diff = list(difflib.ndiff(before.split("\n"), after.split("\n")))
    assert not [d for d in diff if d.startswith("- ")], "a line was changed or removed"
    return [d[2:] for d in diff if d.startswith("+ ")]


def last_test(text: str, part: str) -> dict:
    cf = parse_file(CHAT, text)
    assert validate_question(cf, concept_slugs=None) == []
    return cf.meta["tests"][part][-1]


@pytest.mark.parametrize(
    "answer",
    [
        "We plan for the busiest minute, 50 requests a second.\nThen the cost.\n",
        "one line, no newline",
        "  leading spaces, a tab\there, trailing spaces  \n\n\n",
        "a front-matter fence inside\n---\nmust not end the file",
        "Ünïcödé — and: colons, # hashes, {braces} [brackets] 'quotes' \"quotes\"",
        "",
        # Windows-1252's ellipsis read as Latin-1 (NEL), and the Unicode line separators:
        # line breaks to YAML though JSON's quoting leaves them as they are.
        "it waits\x85 then\u2028streams\u2029on",
    ],
)
def test_an_answer_reads_back_exactly(answer):
    text = CHAT.read_text()
    new = with_answer_test(text, "clarify", answer=answer, expect={"clarify-cost": "miss"})
    assert last_test(new, "clarify") == {"answer": answer, "expect": {"clarify-cost": "miss"}}
    assert added_lines(text, new)


def test_a_test_goes_at_the_end_of_its_part_or_starts_a_new_part():
    text = CHAT.read_text()
    one = with_answer_test(
        text,
        "clarify",
        answer="Peak first.",
        expect={"clarify-peak-qps": "partial"},
        name="from attempt 38: a real answer",
        offline={"clarify-peak-qps": "miss"},
    )
    added = added_lines(text, one)
    assert added[0] == '    - name: "from attempt 38: a real answer"'
    before = parse_file(CHAT, text).meta["tests"]
    after = parse_file(CHAT, one).meta["tests"]
    assert after["clarify"][:-1] == before["clarify"]
    assert len(after["clarify"]) == len(before["clarify"]) + 1
    assert after["clarify"][-1]["offline"] == {"clarify-peak-qps": "miss"}
    # The new test sits right after the clarify tests, before `estimate:`.
    lines = one.split("\n")
    assert lines[lines.index('    - name: "from attempt 38: a real answer"') + 7] == "  estimate:"

    # A follow-up with no tests yet gets a part of its own: take the shipped one's away first.
    start = one.index("\n  fu-tpot-creep:\n")
    end = one.index("\n  fu-", start + 1)
    one = one[:start] + one[end:]
    assert "fu-tpot-creep" not in parse_file(CHAT, one).meta["tests"]
    two = with_answer_test(
        one, "fu-tpot-creep", answer="Decode slows.", expect={"futpot-decode-bound": "partial"}
    )
    assert added_lines(one, two)[0] == "  fu-tpot-creep:"
    assert last_test(two, "fu-tpot-creep")["answer"] == "Decode slows."


def test_a_file_without_tests_gets_them_as_its_last_key():
    text = CHAT.read_text()
    start = text.index("\ntests:\n")
    bare = text[:start] + text[text.index("\n---\n", start) :]
    new = with_answer_test(bare, "tradeoffs", answer="x", expect={"tr-awq-quality": "miss"})
    assert added_lines(bare, new)[:2] == ["tests:", "  tradeoffs:"]
    assert last_test(new, "tradeoffs")["expect"] == {"tr-awq-quality": "miss"}


def test_what_cannot_be_edited_safely_is_refused():
    text = CHAT.read_text()
    start = text.index("\ntests:\n")
    flow = text[:start] + "\ntests: {}" + text[text.index("\n---\n", start) :]
    with pytest.raises(ValueError, match="block style"):
        with_answer_test(flow, "clarify", answer="x", expect={"clarify-cost": "hit"})
    with pytest.raises(ValueError, match="front matter"):
        with_answer_test("no front matter", "clarify", answer="x", expect={"a": "hit"})
    with pytest.raises(ValueError, match="expected verdict"):
        with_answer_test(text, "clarify", answer="x", expect={})


def test_the_loader_refuses_yaml_aliases_before_expanding_them(tmp_path):
    """Not only the editor: a file given to load_content / check_content is refused too, with
    the alias's line, and quickly (expanded, this front matter is 10**9 values)."""
    from questionbank.files import parse_file

    lines = ["---", "slug: bomb", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    path = tmp_path / "bomb.md"
    path.write_text("\n".join([*lines, "---", "body"]))
    cf = parse_file(path)
    assert [(p.line, "YAML aliases" in p.message) for p in cf.problems] == [(4, True)]
    assert cf.meta == {}
