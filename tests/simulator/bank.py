"""The bank's questions as the simulator sees them: their reference designs, one way."""

from __future__ import annotations

from pathlib import Path

import pytest

from questionbank import load_question_spec
from simulator.services import Design, RunRefused, design_from_brief

BANK = sorted(
    p.stem for p in (Path(__file__).resolve().parents[2] / "content/questions").glob("*.md")
)
# Prefill-only (embeddings and a reranker): no decode fleet to simulate, and its model is not
# in the catalogue, so the panel says why instead of guessing.
NOT_SIMULATED = {"embedding-rerank-service"}


def reference_design(slug: str) -> Design | None:
    """The design a question's reference settles on; None, after checking the refusal, for a
    question the simulator does not run."""
    brief = load_question_spec(slug).brief
    if slug in NOT_SIMULATED:
        with pytest.raises(RunRefused):
            design_from_brief(brief, slug=slug)
        return None
    return design_from_brief(brief, slug=slug)
