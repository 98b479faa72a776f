"""Grading free-form answers to interview steps: one interface over two graders.

    grade(step, answer, mode="auto" | "rubric" | "llm", context=..., config=..., diagram="")
        -> GradeResult

`step` is one step dict from a question file's front matter (prompt, rubric, reference,
concepts) or one `tradeoffs.follow_ups` entry; `context` is {slug, title, brief, step_key}
(plus `follow_up` for a follow-up), or a free-text description of the question. The offline
rubric grader (`offline.py`) needs nothing; the model grader (`llm.py`) talks to any
OpenAI-compatible endpoint. The task, the view and the `grade` command all call this module;
it imports nothing from Django.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal

from grading.config import DEFAULT_MODEL, GraderConfig
from grading.inflight import InflightStats, each_inflight, inflight_stats
from grading.offline import RUBRIC_GRADER_VERSION, grade_offline
from grading.types import (
    EVIDENCE_REJECTED,
    VERDICT_CREDIT,
    GradeResult,
    RubricPoint,
    RubricPointVerdict,
    Usage,
    rubric_points,
    weighted_score,
)

if TYPE_CHECKING:
    from grading.health import (
        HealthCache,
        HealthSnapshot,
        TTLCache,
        check_health,
        last_health,
        mark_model_down,
        model_is_up,
    )
    from grading.llm import PROMPT_VERSION, Context, grade_llm

# What needs the openai client is imported on first use: importing openai takes seconds on a
# busy machine, and web processes that only read grades (highlighting, the feedback page)
# should not pay it at start-up.
_LAZY = {
    "HealthCache": "health",
    "HealthSnapshot": "health",
    "TTLCache": "health",
    "check_health": "health",
    "last_health": "health",
    "mark_model_down": "health",
    "model_is_up": "health",
    "PROMPT_VERSION": "llm",
    "Context": "llm",
    "grade_llm": "llm",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"grading.{module}"), name)


__all__ = [
    "DEFAULT_MODEL",
    "DISAGREEMENT_THRESHOLD",
    "MODEL_UNAVAILABLE",
    "PROMPT_VERSION",
    "RUBRIC_GRADER_VERSION",
    "GradeMode",
    "GradeResult",
    "GraderConfig",
    "HealthCache",
    "HealthSnapshot",
    "InflightStats",
    "RubricPoint",
    "RubricPointVerdict",
    "TTLCache",
    "VERDICT_CREDIT",
    "Usage",
    "check_health",
    "each_inflight",
    "grade",
    "grade_llm",
    "grade_offline",
    "grader_inflight",
    "last_health",
    "mark_model_down",
    "model_is_up",
    "review_reason",
    "rubric_points",
    "weighted_score",
]

GradeMode = Literal["auto", "rubric", "llm"]
MODEL_UNAVAILABLE = "model unavailable"
# Two graders whose scores differ by more than this disagree, and a person should look.
DISAGREEMENT_THRESHOLD = 0.4
# The review reason of a model grade whose every claimed point quoted text the answer lacks
# (review_reason); the review queue names the flag by it.
INVENTED_QUOTES = "none of its quotes is in the answer"


def _unavailable(
    step: dict[str, Any], answer: str, config: GraderConfig, diagram: str
) -> GradeResult:
    result = grade_offline(step, answer, diagram=diagram)
    result.fallback_reason = MODEL_UNAVAILABLE
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
    diagram: str = "",
) -> GradeResult:
    """Grade one answer to one step.

    `diagram` is the candidate's architecture diagram, Mermaid flowchart text ("" for none):
    both graders read it (see `grade_offline` and `grade_llm`), and each verdict says whether
    the diagram or the prose gave its evidence (`evidence_source`, `diagram_evidence`).

    mode "rubric": the offline grader. "llm": the model, falling back to the offline grade
    (with `fallback_reason`) on any failure. "auto": the model when the cached health check
    says it is up, else the offline grade with fallback_reason "model unavailable". Without a
    `config` no model is configured (the caller builds one with GraderConfig.from_settings);
    `cache` is any object with get/set (Django's cache), in-process by default.
    """
    if mode not in ("auto", "rubric", "llm"):
        raise ValueError(f"unknown grading mode {mode!r} (auto, rubric or llm)")
    if mode == "rubric":
        return grade_offline(step, answer, diagram=diagram)
    from grading.health import mark_model_down, model_is_up
    from grading.llm import grade_llm

    config = config or GraderConfig()
    if mode == "auto" and not model_is_up(config, cache=cache):
        return _unavailable(step, answer, config, diagram)
    return grade_llm(
        step,
        answer,
        config=config,
        context=context,
        on_server_down=lambda reason: mark_model_down(config, reason, cache=cache),
        diagram=diagram,
    )


def review_reason(model: GradeResult, offline: GradeResult) -> str:
    """Why a model grade needs a human look, or "" when it does not.

    The graders disagree when their scores differ by more than DISAGREEMENT_THRESHOLD: either
    the model found a paraphrase the rubric phrases cannot see, or it was lenient (or misled).
    Only a person can tell which, so both scores are kept and shown with this reason.
    """
    # A model that claimed points and quoted nothing the answer holds for any of them has
    # told us only that it invents: whatever the gap, its grade is no verdict to stand alone.
    rejected = sum(w.startswith(EVIDENCE_REJECTED) for w in model.warnings)
    awarded = sum(v.verdict in ("hit", "partial") for v in model.points)
    if rejected >= 2 and not awarded:
        return (
            f"the model claimed {rejected} points and {INVENTED_QUOTES}, so it awarded nothing; "
            "a person should read the answer"
        )
    gap = abs(model.score - offline.score)
    if gap <= DISAGREEMENT_THRESHOLD:
        return ""
    higher = "model" if model.score > offline.score else "offline rubric grader"
    return (
        f"the model scored {model.score:.0%} and the offline rubric grader {offline.score:.0%}: "
        f"a gap of {gap:.0%} (more than {DISAGREEMENT_THRESHOLD:.0%}), the {higher} higher"
    )


def grader_inflight(config: GraderConfig) -> InflightStats:
    """The in-flight gate of a configuration's endpoint: limit, current and highest seen."""
    return inflight_stats(config.endpoint, config.max_inflight)
