"""A question file past the size limit is refused with the limit in the unit the editor uses."""

from __future__ import annotations

from questionbank.files import MAX_FILE_BYTES, parse_file


def test_a_file_past_the_limit_names_the_limit_in_kib() -> None:
    parsed = parse_file("big.md", "---\n" + "x" * MAX_FILE_BYTES)
    assert [(p.line, p.message) for p in parsed.problems] == [
        (1, f"file is larger than {MAX_FILE_BYTES // 1024} KiB")
    ]
