"""What is stored with each grade so that it can be audited: per point, the quote the grader
offered and whether it was found verbatim in the graded text.

For the model grader the quote is the one the model proposed in its raw reply, also when the
checks rejected it (the verdict's own evidence is then empty): an instructor sees what the
model claimed and that it was not in the answer. A verdict whose evidence is the candidate's
diagram (`evidence_source` "diagram") was checked line by line against the diagram by the
grader that gave it, so its quote counts as found. Django-free.
"""

from __future__ import annotations

from typing import Any

from grading.text import quote_span
from grading.types import GradeResult


def proposed_quotes(raw_response: str | None) -> dict[str, str]:
    """The evidence the model proposed per point id, read tolerantly from its raw reply; {}
    when the reply cannot be read."""
    if not raw_response:
        return {}
    from grading.llm import ModelOutputError, parse_model_output

    try:
        data = parse_model_output(raw_response)
    except ModelOutputError:
        return {}
    items = data.get("points")
    if isinstance(items, dict):
        items = [{"id": k, **v} for k, v in items.items() if isinstance(v, dict)]
    quotes: dict[str, str] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            evidence = item.get("evidence")
            if isinstance(evidence, str) and item["id"] not in quotes:
                quotes[item["id"]] = evidence.strip()[:400]
    return quotes


def audited_points(result: GradeResult, graded_text: str) -> list[dict[str, Any]]:
    """The result's verdicts as stored: each point dict plus "quote" (the grader's evidence,
    or the model's rejected proposal) and "quote_found" (True/False; None without a quote)."""
    proposed = proposed_quotes(result.raw_response) if result.grader == "llm" else {}
    out = []
    for verdict in result.points:
        data = verdict.to_dict()
        quote = verdict.evidence or proposed.get(verdict.id, "")
        data["quote"] = quote
        if verdict.evidence_source == "diagram":
            data["quote_found"] = True
        else:
            data["quote_found"] = (quote_span(graded_text, quote) is not None) if quote else None
        out.append(data)
    return out
