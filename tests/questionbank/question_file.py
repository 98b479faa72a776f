"""A question file to check, built from the editor's new-question template, and where to find
things in it: the helpers the question checker's tests share."""

from __future__ import annotations

from authoring import services
from questionbank.files import parse_file, validate_question


def template(slug: str) -> str:
    """The new-question template under `slug`: a file that passes the checker."""
    text = services.QUESTION_TEMPLATE.read_text(encoding="utf-8")
    return text.replace(services.TEMPLATE_SLUG_LINE, f"slug: {slug}", 1)


def problems(slug: str, text: str):
    """What the question checker says of `text`, saved as `slug`.md."""
    return validate_question(parse_file(f"{slug}.md", text), concept_slugs=None)


def line(text: str, exact: str) -> int:
    """The number of the line of `text` that is `exact`."""
    return text.split("\n").index(exact) + 1


def edit(text: str, old: str, new: str) -> str:
    """`text` with its one `old` replaced by `new`."""
    assert text.count(old) == 1, old
    return text.replace(old, new)
