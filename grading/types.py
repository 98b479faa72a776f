"""The shapes that go into and come out of a grader.

A step spec (one step of a question, or one of its follow-ups) arrives as the question bank's
typed `StepSpec` or `FollowUp`; `rubric_points` returns its `RubricPoint`s. Every grader
answers with a `GradeResult` whose score is computed here from the per-point verdicts and the
authored weights, never taken from a model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from questionbank.spec import FollowUp, Misconception, RubricPoint, StepSpec, as_step

Verdict = Literal["hit", "partial", "miss"]
GraderName = Literal["rubric", "llm"]

# A step or a follow-up; a mapping is its authored front matter (scripts and tests).
GradedStep = StepSpec | FollowUp | Mapping[str, Any]

VERDICTS: tuple[Verdict, ...] = ("hit", "partial", "miss")
# Credit per verdict, the one table every score is computed with (hit 1, partial 0.5).
VERDICT_CREDIT: dict[str, float] = {"hit": 1.0, "partial": 0.5, "miss": 0.0}


# The warning a grader adds to its result when the answer addresses the grader. The feedback
# panel finds it among a stored grade's warnings by this opening, so its wording lives here
# only: build it with `injection_warning`, recognise it with `is_injection_warning`.
INJECTION_WARNING = "injection suspected"


def injection_warning(reasons: Iterable[str], consequence: str = "") -> str:
    """The injection warning: INJECTION_WARNING, its reasons in brackets, then what followed
    from it when given."""
    warning = f"{INJECTION_WARNING} ({', '.join(reasons)})"
    return f"{warning}: {consequence}" if consequence else warning


def is_injection_warning(warning: object) -> bool:
    """Whether one stored warning is the injection warning."""
    return str(warning).startswith(INJECTION_WARNING)


# How the audit warning of a verdict whose evidence was refused opens (llm.rejected_warning);
# grading.review_reason counts them.
EVIDENCE_REJECTED = "evidence rejected for"

# How a grader's comment on a verdict refused for its quote opens (llm._not_awarded): the
# review page tells instructors that reason beside the quote.
NOT_AWARDED = "Not awarded:"


def comment_without_point(comment: str, says: str) -> str:
    """A grader's comment on a point without the point restated at its end ("...: <point>",
    or "Not awarded: <why>. <point>"): the pages show the point beside it already."""
    if says and comment.endswith(f": {says}"):
        return comment[: -len(says) - 2]
    if says and comment.endswith(f". {says}"):
        return comment[: -len(says) - 1]
    return comment


# The injection warning's reason when the model alone flagged the answer: the app's own
# reading of it found no text addressed to the grader.
MODEL_FLAG = "flagged by the model"


def injection_found_in_text(warnings: Iterable[object]) -> bool:
    """Whether the app's own reading found text addressed to the grader (an injection warning
    with reasons of its own, not only the model's flag)."""
    model_only = injection_warning([MODEL_FLAG])
    return any(is_injection_warning(w) and str(w) != model_only for w in warnings)


# Where a verdict's evidence came from: the candidate's architecture diagram, the prose, or
# nowhere (a miss, or a verdict without a quote).
EVIDENCE_SOURCES = ("diagram", "prose", "")


@dataclass
class RubricPointVerdict:
    """The verdict on one rubric point, with the candidate's own words that earned it.

    `evidence_source` says where they are: "prose" (a quote of the answer's text), "diagram"
    (`diagram_evidence` holds the node labels and edge lines of the diagram that show it,
    and `evidence` the same lines joined by "; ") or "" (no evidence).
    """

    id: str
    verdict: Verdict
    evidence: str = ""
    comment: str = ""
    evidence_source: str = ""
    diagram_evidence: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.evidence_source and self.evidence:
            self.evidence_source = "prose"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MisconceptionFound:
    """A wrong idea of the step found in the answer: its id and the candidate's own words
    stating it (verbatim, as for a rubric point's evidence)."""

    id: str
    evidence: str
    comment: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Usage:
    """Tokens the model spent on one grading (zero for the offline grader)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class GradeResult:
    """What a grader says about one answer to one step.

    `score` is the weighted share of credit in [0, 1]; `grader` names who produced the
    verdicts ("rubric" also when the offline grader stood in for a failed model call, in which
    case `fallback_reason` says why).
    """

    points: list[RubricPointVerdict]
    score: float
    feedback: str
    grader: GraderName
    model: str | None
    prompt_version: str
    latency_ms: int = 0
    usage: Usage = field(default_factory=Usage)
    warnings: list[str] = field(default_factory=list)
    fallback_reason: str | None = None
    injection_suspected: bool = False
    # The model's reply text exactly as it came back, kept for the audit page; None when no
    # reply came back at all (offline grader, server down), "" for an empty reply.
    raw_response: str | None = None
    # The step's wrong ideas the answer states, in the step's authored order.
    misconceptions: list[MisconceptionFound] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (points, misconceptions and usage as dicts)."""
        return asdict(self)


def rubric_points(step: GradedStep) -> list[RubricPoint]:
    """The rubric of a step (or follow-up) as `RubricPoint`s, in authored order; a mapping is
    read as the step's authored front matter.

    Raises ValueError when the step has no rubric or a point has no id: a grade without
    rubric points would be meaningless.
    """
    points = list(as_step(step).rubric)
    if not points:
        raise ValueError("this step has no rubric points to grade against")
    return points


def step_misconceptions(step: GradedStep) -> tuple[Misconception, ...]:
    """The wrong ideas authored for a step; a follow-up has none of its own."""
    return getattr(as_step(step), "misconceptions", ())


def cap_contradicted(
    verdicts: list[RubricPointVerdict],
    found: list[MisconceptionFound],
    misconceptions: tuple[Misconception, ...],
) -> list[RubricPointVerdict]:
    """Every grader's last word on a point the answer contradicts: at best "partial".

    An answer that states the right idea and, elsewhere, its opposite has not shown it holds
    the right one; the comment says which wrong idea holds the point back. Verdicts are
    changed in place and returned.
    """
    contradicted: dict[str, str] = {}
    by_id = {m.id: m for m in misconceptions}
    for finding in found:
        miscon = by_id.get(finding.id)
        for point_id in miscon.contradicts if miscon else ():
            contradicted.setdefault(point_id, miscon.idea)
    for verdict in verdicts:
        idea = contradicted.get(verdict.id)
        if idea and verdict.verdict == "hit":
            verdict.verdict = "partial"
            verdict.comment = f"Held to partial: the answer also states that {_lower_first(idea)}"
    return verdicts


def _lower_first(text: str) -> str:
    text = text.strip()
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def weighted_score(points: list[RubricPoint], verdicts: list[RubricPointVerdict]) -> float:
    """The weighted share of credit in [0, 1]: hit 1, partial 0.5, miss 0.

    A rubric point without a verdict counts as a miss; verdicts for unknown ids are ignored.
    """
    by_id = {v.id: v.verdict for v in verdicts}
    total = sum(p.weight for p in points)
    if total <= 0:
        return 0.0
    earned = sum(p.weight * VERDICT_CREDIT.get(by_id.get(p.id, "miss"), 0.0) for p in points)
    return round(min(1.0, max(0.0, earned / total)), 4)
