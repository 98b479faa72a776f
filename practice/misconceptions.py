"""Misconceptions as the candidate sees them: on a step's feedback (first), on the attempt's
scorecard, and in their history when they hold one repeatedly.

A grade stores only which wrong ideas it found and the candidate's sentence
(`Grade.misconceptions`); what each idea is, why it breaks and what to read come from the
revision the attempt was made against, so an explanation is the one the candidate was graded
by. The explanation's HTML was rendered and sanitised when the revision was published
(`questionbank.rendering.render_question`); a revision published before misconceptions
existed has none, and the idea is shown alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from practice.models import Grade
from questionbank.spec import Misconception
from questions import selectors
from questions.models import QuestionRevision

# A wrong idea is "held repeatedly" once it shows up in this many different attempts.
REPEATED_IN_ATTEMPTS = 2


def _by_id(revision: QuestionRevision, step_key: str) -> dict[str, Misconception]:
    try:
        step = revision.question_spec.step(step_key)
    except LookupError:
        return {}
    return {m.id: m for m in step.misconceptions}


def misconceptions_found(
    *, revision: QuestionRevision, step_key: str, grade: Grade | None
) -> list[dict[str, Any]]:
    """The wrong ideas a grade found in one answer to `step_key`, ready to show:
    {"id", "idea", "evidence" (the candidate's words), "explanation_html", "concepts"}."""
    if grade is None or not grade.misconceptions:
        return []
    known = _by_id(revision, step_key)
    rendered = (revision.rendered.get("steps", {}).get(step_key) or {}).get("misconceptions", {})
    found = [(f, known[f.get("id")]) for f in grade.misconceptions if f.get("id") in known]
    concepts = selectors.concepts_by_slug({c for _, m in found for c in m.concepts})
    return [
        {
            "id": m.id,
            "idea": m.idea,
            "evidence": f.get("evidence", ""),
            "explanation_html": rendered.get(m.id, ""),
            "concepts": [concepts[c] for c in m.concepts if c in concepts],
            "step": step_key,
            "step_title": selectors.STEP_TITLES.get(step_key, step_key),
        }
        for f, m in found
    ]


def held_repeatedly(
    found: Iterable[tuple[int, QuestionRevision, str, Grade]],
) -> list[dict[str, Any]]:
    """The wrong ideas found in at least REPEATED_IN_ATTEMPTS different attempts, most often
    held first: {"id", "idea", "attempts", "step"}. `found` holds (attempt id, revision, step
    key, primary grade) for each graded submission looked at."""
    attempts: dict[str, set[int]] = {}
    ideas: dict[str, tuple[str, str]] = {}
    for attempt_id, revision, step_key, grade in found:
        for finding in grade.misconceptions or ():
            miscon = _by_id(revision, step_key).get(finding.get("id"))
            if miscon is None:
                continue
            attempts.setdefault(miscon.id, set()).add(attempt_id)
            ideas[miscon.id] = (miscon.idea, step_key)
    repeated = [
        {
            "id": mid,
            "idea": ideas[mid][0],
            "step": selectors.STEP_TITLES.get(ideas[mid][1], ideas[mid][1]),
            "attempts": len(ids),
        }
        for mid, ids in attempts.items()
        if len(ids) >= REPEATED_IN_ATTEMPTS
    ]
    return sorted(repeated, key=lambda m: -m["attempts"])
