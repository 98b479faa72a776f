"""What of a question's reference answer the simulator may show an attempt, read once a
request and handed down: the panel and the bottlenecks feedback both hide a figure a step
grades until the candidate has submitted that step, as the step's own feedback would."""

from __future__ import annotations

from dataclasses import dataclass

from practice.extensions import feedback_withheld
from practice.models import Submission


@dataclass(frozen=True)
class Shown:
    """Nothing in a running mock interview (`mock`); in practice, the fleet size, the
    planner's figures and a run's per-replica rate once the napkin-math step is submitted
    (`estimate`), and the router once the architecture step is (`architecture`)."""

    mock: bool
    estimate: bool
    architecture: bool


def shown_for(attempt_id: int) -> Shown:
    if feedback_withheld(attempt_id):
        return Shown(mock=True, estimate=False, architecture=False)
    submitted = set(
        Submission.objects.filter(
            answer__attempt_id=attempt_id,
            answer__follow_up_id="",
            answer__step_key__in=("estimate", "architecture"),
        ).values_list("answer__step_key", flat=True)
    )
    return Shown(False, "estimate" in submitted, "architecture" in submitted)
