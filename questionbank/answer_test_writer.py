"""Write a new answer test into a question file's text ("add a test from this attempt").

    with_answer_test(text, part, answer=..., expect={point id: verdict}, name="", offline=None,
                     diagram="")

The file's text is edited, not re-serialised: every other byte stays as the author wrote it,
so a diff (or git) shows one added test. The test goes at the end of `tests.<part>` (created,
with `tests:` itself, when missing; `tests:` is placed as the last top-level key). The
`tests:` block must be in the block style content/README.md shows; anything else is a
ValueError with the reason, as is a result that does not read back as the test written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from questionbank.files import parse_file

_TOP_KEY = re.compile(r"^[A-Za-z_][\w-]*\s*:")
_PART_KEY = re.compile(r"^  ([A-Za-z0-9_-]+)\s*:\s*(#.*)?$")
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.,()/'+-]*$")


def _scalar(value: str) -> str:
    """A one-line YAML scalar: plain when that reads back unchanged, else double-quoted."""
    if _PLAIN.match(value) and not value.endswith(" ") and value.lower() not in (
        "yes", "no", "on", "off", "true", "false", "null", "y", "n",
    ):  # fmt: skip
        return value
    return _quoted(value)


# Line breaks to YAML and to str.splitlines that JSON leaves as they are: NEL (what "..." becomes
# when Windows-1252 text is read as Latin-1) and the Unicode line and paragraph separators.
# The bidirectional controls (U+202A-U+202E, U+2066-U+2069) are escaped too: written raw, they
# reverse the text after them in the editor, and the question's check refuses them.
_BREAKS_JSON_KEEPS = str.maketrans(
    {
        "\x85": "\\u0085",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
        **{
            chr(code): f"\\u{code:04X}" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
        },
    }
)


def _quoted(text: str) -> str:
    """A double-quoted YAML scalar on one line (JSON's escapes are YAML's)."""
    return json.dumps(text, ensure_ascii=False).translate(_BREAKS_JSON_KEEPS)


def _block(key: str, text: str, indent: str) -> list[str]:
    """`key: |` with the text below, when a literal block keeps it exactly; else quoted."""
    lines = text.split("\n")
    body = text[:-1] if text.endswith("\n") else text
    literal_safe = (
        body
        and not text.endswith("\n\n")
        and not body[0].isspace()
        and all(line == line.rstrip() and "\t" not in line for line in lines)
        and all(ch.isprintable() for line in lines for ch in line)
        # The file's front matter ends at the first line that is '---' once stripped.
        and not any(line.strip() == "---" for line in lines)
    )
    if not literal_safe:
        return [f"{indent}{key}: {_quoted(text)}"]
    chomp = "|" if text.endswith("\n") else "|-"
    return [f"{indent}{key}: {chomp}"] + [
        f"{indent}  {line}" if line else "" for line in body.split("\n")
    ]


def answer_test_lines(
    *,
    answer: str,
    expect: Mapping[str, str],
    name: str = "",
    offline: Mapping[str, str] | None = None,
    diagram: str = "",
) -> list[str]:
    """One answer test as the lines of a list item under `tests.<part>` (4-space indent);
    `diagram`, the candidate's Mermaid text, is written after the answer when given."""
    if not expect:
        raise ValueError("a test needs at least one expected verdict")
    out = []
    if name:
        out.append(f"name: {_scalar(name)}")
    out += _block("answer", answer, "")
    if diagram.strip():
        out += _block("diagram", diagram, "")
    out.append("expect:")
    out += [f"  {_scalar(str(k))}: {_scalar(str(v))}" for k, v in expect.items()]
    if offline:
        out.append("offline:")
        out += [f"  {_scalar(str(k))}: {_scalar(str(v))}" for k, v in offline.items()]
    return [("    - " if i == 0 else "      ") + line if line else "" for i, line in enumerate(out)]


def with_answer_test(
    text: str,
    part: str,
    *,
    answer: str,
    expect: Mapping[str, str],
    name: str = "",
    offline: Mapping[str, str] | None = None,
    diagram: str = "",
) -> str:
    """The question file's text with one more answer test under `tests.<part>` (with the
    candidate's `diagram` when given).

    `part` is a step key or a tradeoffs follow-up id. Raises ValueError when the file has no
    front matter, its `tests:` is not in block style, or the edit would not read back as the
    intended test (validation of ids and verdicts is the validator's job, run after this).
    """
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise ValueError("the file has no front matter")
    try:
        close = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError("the front matter is not closed by a '---' line") from None
    entry = answer_test_lines(
        answer=answer, expect=expect, name=name, offline=offline, diagram=diagram
    )
    start = next((i for i in range(1, close) if re.match(r"^tests\s*:", lines[i])), None)
    if start is None:
        new = [*lines[:close], "tests:", f"  {part}:", *entry, *lines[close:]]
    else:
        if not re.match(r"^tests\s*:\s*(#.*)?$", lines[start]):
            raise ValueError("tests: must be written in block style to add a test to it")
        end = next((i for i in range(start + 1, close) if _TOP_KEY.match(lines[i])), close)
        part_line = next(
            (
                i
                for i in range(start + 1, end)
                if (m := _PART_KEY.match(lines[i])) and m.group(1) == part
            ),
            None,
        )
        if part_line is None:
            at = _last_content_line(lines, start, end) + 1
            new = [*lines[:at], f"  {part}:", *entry, *lines[at:]]
        else:
            if lines[part_line].split(":", 1)[1].split("#", 1)[0].strip():
                raise ValueError(f"tests.{part} must be a block list to add a test to it")
            part_end = next(
                (i for i in range(part_line + 1, end) if _PART_KEY.match(lines[i])), end
            )
            at = _last_content_line(lines, part_line, part_end) + 1
            new = [*lines[:at], *entry, *lines[at:]]
    result = "\n".join(new)
    _check_round_trip(result, part, answer, expect, offline, diagram)
    return result


def _last_content_line(lines: list[str], start: int, end: int) -> int:
    """The last line in [start, end) that is not blank, so a test goes before blank lines."""
    for i in range(end - 1, start - 1, -1):
        if lines[i].strip():
            return i
    return start


def _check_round_trip(
    text: str, part: str, answer: str, expect: Mapping[str, str], offline: Any, diagram: str
) -> None:
    cf = parse_file("question.md", text)
    if cf.problems:
        raise ValueError(f"the edited file does not parse: {cf.problems[0].message}")
    entries = (cf.meta.get("tests") or {}).get(part)
    last = entries[-1] if isinstance(entries, list) and entries else {}
    if (
        not isinstance(last, dict)
        or last.get("answer") != answer
        or {str(k): str(v) for k, v in (last.get("expect") or {}).items()} != dict(expect)
        or dict(last.get("offline") or {}) != dict(offline or {})
        or (last.get("diagram") or "") != (diagram if diagram.strip() else "")
    ):
        raise ValueError("the test could not be written into this file's tests: block")
