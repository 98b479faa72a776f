"""Grading free-form answers to interview steps: one interface over two graders.

    grade(step, answer, mode="auto" | "rubric" | "llm", context=..., config=...) -> GradeResult

`step` is one step dict from a question file's front matter (prompt, rubric, reference,
concepts) or one `tradeoffs.follow_ups` entry; `context` is {slug, title, brief, step_key}
(plus `follow_up` for a follow-up), or a free-text description of the question. The offline
rubric grader (`offline.py`) needs nothing; the model grader (`llm.py`) talks to any
OpenAI-compatible endpoint. The task, the view and the `grade` command all call this module;
it imports nothing from Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from interview.grading.config import DEFAULT_MODEL, GraderConfig
from interview.grading.health import HealthCache, TTLCache, mark_model_down, model_is_up
from interview.grading.inflight import InflightStats, inflight_stats
from interview.grading.llm import PROMPT_VERSION, Context, grade_llm
from interview.grading.offline import RUBRIC_GRADER_VERSION, grade_offline
from interview.grading.types import (
    GradeResult,
    RubricPoint,
    RubricPointVerdict,
    Usage,
    rubric_points,
    weighted_score,
)

__all__ = [
    "DEFAULT_MODEL",
    "DISAGREEMENT_THRESHOLD",
    "MODEL_UNAVAILABLE",
    "PROMPT_VERSION",
    "RUBRIC_GRADER_VERSION",
    "GradeMode",
    "GradePair",
    "GradeResult",
    "GraderConfig",
    "HealthCache",
    "InflightStats",
    "RubricPoint",
    "RubricPointVerdict",
    "TTLCache",
    "Usage",
    "grade",
    "grade_both",
    "grade_llm",
    "grade_offline",
    "grader_inflight",
    "model_is_up",
    "rubric_points",
    "weighted_score",
]

GradeMode = Literal["auto", "rubric", "llm"]
MODEL_UNAVAILABLE = "model unavailable"
# Two graders whose scores differ by more than this disagree (the threshold).
DISAGREEMENT_THRESHOLD = 0.4


def _unavailable(step: dict[str, Any], answer: str, config: GraderConfig) -> GradeResult:
    result = grade_offline(step, answer)
    result.fallback_reason = MODEL_UNAVAILABLE
    # Without an endpoint a re-grade could never succeed; with one, it will once it is back.
    result.needs_regrade = config.configured
    detail = "no GRADER_BASE_URL configured" if not config.configured else "health check failed"
    result.warnings.insert(0, f"{MODEL_UNAVAILABLE} ({detail}); offline rubric grade used")
    return result


def grade(
    step: dict[str, Any],
    answer: str,
    *,
    mode: GradeMode = "auto",
    context: Context = None,
    config: GraderConfig | None = None,
    cache: HealthCache | None = None,
) -> GradeResult:
    """Grade one answer to one step.

    mode "rubric": the offline grader. "llm": the model, falling back to the offline grade
    (with `fallback_reason` and `needs_regrade`) on any failure. "auto": the model when the
    cached health check says it is up, else the offline grade with fallback_reason
    "model unavailable". `config` defaults to GraderConfig.from_env(); `cache` is any
    object with get/set (Django's cache), in-process by default.
    """
    if mode not in ("auto", "rubric", "llm"):
        raise ValueError(f"unknown grading mode {mode!r} (auto, rubric or llm)")
    if mode == "rubric":
        return grade_offline(step, answer)
    config = config or GraderConfig.from_env()
    if mode == "auto" and not model_is_up(config, cache=cache):
        return _unavailable(step, answer, config)
    return grade_llm(
        step,
        answer,
        config=config,
        context=context,
        on_server_down=lambda: mark_model_down(config, cache=cache),
    )


@dataclass
class GradePair:
    """Both graders' view of one answer, for storing side by side.

    `primary` is what the candidate is shown: the model's grade when it succeeded, else the
    offline grade carrying the fallback reason. `llm` is None when the model did not grade.
    """

    primary: GradeResult
    rubric: GradeResult
    llm: GradeResult | None

    @property
    def disagreement(self) -> float | None:
        """The absolute score difference between the graders, when both graded."""
        if self.llm is None:
            return None
        return round(abs(self.llm.score - self.rubric.score), 4)

    @property
    def disagrees(self) -> bool:
        """Whether the graders differ by more than DISAGREEMENT_THRESHOLD."""
        gap = self.disagreement
        return gap is not None and gap > DISAGREEMENT_THRESHOLD

    def to_dict(self) -> dict[str, Any]:
        return {
            "primary": self.primary.to_dict(),
            "rubric": self.rubric.to_dict(),
            "llm": self.llm.to_dict() if self.llm else None,
            "disagreement": self.disagreement,
            "disagrees": self.disagrees,
        }


def grade_both(
    step: dict[str, Any],
    answer: str,
    *,
    mode: GradeMode = "auto",
    context: Context = None,
    config: GraderConfig | None = None,
    cache: HealthCache | None = None,
) -> GradePair:
    """Grade with the offline grader and (per `mode`) the model, keeping both results.

    mode "rubric" never calls the model; "auto" calls it when the health check says up;
    "llm" always tries it.
    """
    rubric = grade_offline(step, answer)
    if mode == "rubric":
        return GradePair(primary=rubric, rubric=rubric, llm=None)
    primary = grade(step, answer, mode=mode, context=context, config=config, cache=cache)
    llm = primary if primary.grader == "llm" else None
    return GradePair(primary=primary, rubric=rubric, llm=llm)


def grader_inflight(config: GraderConfig) -> InflightStats:
    """The in-flight gate of a configuration's endpoint: limit, current and highest seen."""
    return inflight_stats(config.endpoint, config.max_inflight)
