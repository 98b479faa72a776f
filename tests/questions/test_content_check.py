"""check_content: the shipped content passes; broken copies fail with file:line messages."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORE_SLUGS

# The commands it starts read files, never the database (it passes with DATABASE_URL pointing
# at no server), so CI's PostgreSQL run leaves it to the SQLite one.

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"


def run_check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check_content", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def content_copy(tmp_path) -> Path:
    """A content folder with the questions the tests break and every concept note: the rest of
    the bank would only make each command run longer (`test_shipped_content_passes` checks
    all of it)."""
    copy = tmp_path / "content"
    (copy / "questions").mkdir(parents=True)
    for slug in CORE_SLUGS:
        shutil.copy(CONTENT / "questions" / f"{slug}.md", copy / "questions")
    shutil.copytree(CONTENT / "concepts", copy / "concepts")
    return copy


def test_a_copy_of_part_of_the_bank_passes(content_copy):
    # The broken copies below fail for what each test breaks, not for a question left out.
    result = run_check(content_copy)
    assert result.returncode == 0, result.stdout + result.stderr


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def test_shipped_content_passes():
    result = run_check(CONTENT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK" in result.stdout


def test_missing_step_is_reported_with_file_and_line(content_copy):
    path = content_copy / "questions" / "chat-api-50qps.md"
    text = path.read_text()
    # Rename the step key so the step is missing (and the new key is unknown).
    path.write_text(text.replace("\n  bottlenecks:\n", "\n  bottleneckz:\n", 1))
    result = run_check(content_copy)
    assert result.returncode != 0
    assert re.search(rf"{re.escape(str(path))}:\d+: missing step 'bottlenecks'", result.stdout)
    line = line_of(path, "  bottleneckz:")
    assert f"{path}:{line}: unknown step 'bottleneckz'" in result.stdout


def test_duplicate_rubric_id_is_reported_at_the_second_use(content_copy):
    path = content_copy / "questions" / "multi-tenant-lora.md"
    text = path.read_text()
    ids = re.findall(r"^\s+- id: ([a-z0-9-]+)\s*$", text, flags=re.M)
    first, second = ids[0], ids[1]
    lines = text.split("\n")
    second_line = next(i for i, ln in enumerate(lines) if re.match(rf"^\s+- id: {second}\s*$", ln))
    lines[second_line] = lines[second_line].replace(second, first)
    path.write_text("\n".join(lines))
    result = run_check(content_copy)
    assert result.returncode != 0
    assert f"{path}:{second_line + 1}: duplicate id '{first}'" in result.stdout


def test_formula_naming_an_unknown_given_is_reported(content_copy):
    path = content_copy / "questions" / "chat-api-50qps.md"
    text = path.read_text()
    match = re.search(r"^(\s+formula: )(.+)$", text, flags=re.M)
    broken = text[: match.start()] + match.group(1) + "no_such_given * 2" + text[match.end() :]
    path.write_text(broken)
    line = text[: match.start()].count("\n") + 1
    result = run_check(content_copy)
    assert result.returncode != 0
    assert re.search(
        rf"{re.escape(str(path))}:{line}: quantity '\w+': .*no_such_given", result.stdout
    ), result.stdout


def test_bad_front_matter_is_reported(content_copy):
    path = content_copy / "questions" / "long-context-rag.md"
    lines = path.read_text().split("\n")
    lines[2] = "title: [an unclosed flow list"  # line 3 of the file, inside the front matter
    path.write_text("\n".join(lines))
    result = run_check(content_copy)
    assert result.returncode != 0
    assert re.search(rf"{re.escape(str(path))}:\d+: front matter is not valid YAML", result.stdout)


def test_missing_front_matter_delimiter(content_copy):
    path = content_copy / "questions" / "long-context-rag.md"
    path.write_text(path.read_text().replace("---\n", "", 1))
    result = run_check(content_copy)
    assert result.returncode != 0
    assert f"{path}:1: front matter must start with a '---' line" in result.stdout


def test_broken_concept_link_and_unknown_key(content_copy):
    path = content_copy / "questions" / "chat-api-50qps.md"
    text = path.read_text()
    text = text.replace("concepts: [", "concepts: [no-such-concept, ", 1)
    text = text.replace("\ntitle:", "\ntitel: typo\ntitle:", 1)
    path.write_text(text)
    result = run_check(content_copy)
    assert result.returncode != 0
    assert "broken concept link 'no-such-concept'" in result.stdout
    assert f"{path}:{line_of(path, 'titel:')}: unknown key 'titel'" in result.stdout


def test_invalid_utf8_is_reported(content_copy):
    path = content_copy / "questions" / "chat-api-50qps.md"
    path.write_bytes(b"---\nslug: chat-api-50qps\ntitle: \xff\xfe\n---\n")
    result = run_check(content_copy)
    assert result.returncode != 0
    assert f"{path}:3: file is not valid UTF-8" in result.stdout
