"""Read a question file's napkin-math parts (givens and quantities) for the checker.

The question bank owns question files and their parser; this module picks out the napkin-math
parts of `content/questions/<slug>.md`, so `napkin --check` works on files straight from disk.
It reads the front matter without the whole-question validation, so a file holding only an
`estimate` step (a checker fixture) is enough. The planner's pages read the published revision
instead, so they show what candidates practise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from questionbank import ContentError, parse_file, question_file


class QuestionFileError(ValueError):
    """The question file is missing or its front matter is not what the checker needs."""


def read_front_matter(path: Path) -> dict[str, Any]:
    """The YAML front matter of a question file, read by the question bank's parser, so the
    checker and the site agree on what a file says."""
    if not Path(path).is_file():
        raise QuestionFileError(f"No question file at {path}.")
    content = parse_file(path)
    if content.problems:
        raise QuestionFileError(str(content.problems[0]))
    return content.meta


def question_path(slug: str, content_dir: Path) -> Path:
    """content/questions/<slug>.md; the slug is checked so it cannot walk out of the folder."""
    try:
        return question_file(slug, content_dir)
    except ContentError:
        raise QuestionFileError(f"{slug!r} is not a question slug.") from None


def estimate_step(front_matter: dict[str, Any]) -> dict[str, Any]:
    """The `estimate` step of a question (givens and quantities)."""
    steps = front_matter.get("steps") or {}
    estimate = steps.get("estimate") if isinstance(steps, dict) else None
    if not isinstance(estimate, dict):
        raise QuestionFileError("The question has no estimate step.")
    return estimate


def find_quantity(estimate: dict[str, Any], quantity_id: str) -> dict[str, Any]:
    for quantity in estimate.get("quantities") or []:
        if quantity.get("id") == quantity_id:
            return quantity
    known = ", ".join(str(q.get("id")) for q in estimate.get("quantities") or [])
    raise QuestionFileError(f"No quantity {quantity_id!r}; this question has: {known}.")


def given_labels(estimate: dict[str, Any]) -> dict[str, str]:
    """Given name -> label, plus quantity id -> label."""
    labels = {str(g["name"]): str(g.get("label", "")) for g in estimate.get("givens") or []}
    for quantity in estimate.get("quantities") or []:
        labels[str(quantity["id"])] = str(quantity.get("label", ""))
    return labels
