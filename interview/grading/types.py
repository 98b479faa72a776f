"""The shapes that go into and come out of a grader.

A step spec (one step of a question file, or one `tradeoffs.follow_ups` entry) arrives as the
plain dict parsed from the content file's front matter; `rubric_points` reads its rubric into
`RubricPoint`s. Every grader answers with a `GradeResult` whose score is computed here from
the per-point verdicts and the authored weights, never taken from a model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Verdict = Literal["hit", "partial", "miss"]
GraderName = Literal["rubric", "llm"]

VERDICTS: tuple[Verdict, ...] = ("hit", "partial", "miss")
# Credit per verdict, the one table every score is computed with (hit 1, partial 0.5).
VERDICT_CREDIT: dict[str, float] = {"hit": 1.0, "partial": 0.5, "miss": 0.0}


@dataclass(frozen=True)
class RubricPoint:
    """One rubric point of a step: what it says, its weight, and how to recognise it offline."""

    id: str
    says: str
    weight: float = 1.0
    all_groups: tuple[tuple[str, ...], ...] = ()
    partial_groups: tuple[tuple[str, ...], ...] = ()
    concepts: tuple[str, ...] = ()


@dataclass
class RubricPointVerdict:
    """The verdict on one rubric point, with the candidate's own words that earned it."""

    id: str
    verdict: Verdict
    evidence: str = ""
    comment: str = ""

    def to_dict(self) -> dict[str, str]:
        return {
            "id": self.id,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "comment": self.comment,
        }


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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (points as dicts, usage as a dict)."""
        data = asdict(self)
        data["points"] = [p.to_dict() for p in self.points]
        return data


def _phrase_groups(value: Any) -> tuple[tuple[str, ...], ...]:
    """Read `recognise.all` / `recognise.partial`: a list of groups of phrases.

    A bare string where a group is expected is taken as a group of one, so a slightly
    mis-authored file still grades instead of crashing the grader.
    """
    if not value:
        return ()
    groups = []
    for group in value:
        if isinstance(group, str):
            group = [group]
        phrases = tuple(str(p) for p in group if str(p).strip())
        if phrases:
            groups.append(phrases)
    return tuple(groups)


def rubric_points(step: dict[str, Any]) -> list[RubricPoint]:
    """The rubric of a step spec as `RubricPoint`s, in authored order.

    Raises ValueError when the step has no rubric or a point has no id: a grade without
    rubric points would be meaningless.
    """
    rubric = step.get("rubric") or []
    if not isinstance(rubric, list) or not rubric:
        raise ValueError("this step has no rubric points to grade against")
    points = []
    for raw in rubric:
        if not isinstance(raw, dict) or not raw.get("id"):
            raise ValueError(f"rubric point without an id: {raw!r}")
        recognise = raw.get("recognise") or {}
        weight = raw.get("weight", 1)
        points.append(
            RubricPoint(
                id=str(raw["id"]),
                says=str(raw.get("says") or raw["id"]).strip(),
                weight=float(weight) if isinstance(weight, int | float) and weight > 0 else 1.0,
                all_groups=_phrase_groups(recognise.get("all")),
                partial_groups=_phrase_groups(recognise.get("partial")),
                concepts=tuple(raw.get("concepts") or ()),
            )
        )
    return points


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
