"""The simulator's hooks into practice (`practice.extensions`), registered when Django starts
(SimulatorConfig.ready): the "test this design" panel on the bottlenecks step, and the
saved runs (prediction, verdict, chart) in that step's feedback."""

from __future__ import annotations

from django.urls import reverse

from practice.extensions import AttemptExtension, Fragment, StepPanel
from practice.models import Attempt, Submission
from simulator.charts import run_charts
from simulator.models import SimulationRun
from simulator.reveal import shown_for

STEP = "bottlenecks"
# The newest runs a feedback or a scorecard lists; a line says how many more there are.
SHOWN_RUNS = 5


class SimulatorHooks(AttemptExtension):
    def holds_work(self, attempt: Attempt) -> bool:
        """A load test saved with the attempt holds the candidate's prediction."""
        return SimulationRun.objects.filter(answer__attempt_id=attempt.pk).exists()

    def step_panel(self, attempt: Attempt, step_key: str) -> StepPanel | None:
        if step_key != STEP:
            return None
        return StepPanel(
            url=reverse("simulator:panel", kwargs={"attempt_id": attempt.pk}),
            element_id="simulator-panel",
            css_class="card sim-panel",
            stylesheet="simulator/simulator.css",
            script="simulator/simulator.js",
            loading_text="Load test: loading the simulator…",
            placement="after-answer",
        )

    def feedback_fragments(self, submission: Submission, *, graded: bool) -> list[Fragment]:
        """The runs saved with the answer, newest first: prediction, verdicts, the latest
        run's charts, and its note (a per-replica rate, the planner's figure) only once the
        napkin-math step that grades it is submitted, as the panel shows it."""
        answer = submission.answer
        if answer.step_key != STEP or answer.follow_up_id:
            return []
        runs = SimulationRun.objects.for_answer(answer.pk)
        saved = list(runs[:SHOWN_RUNS])
        if not saved:
            return []
        context = {
            "saved": saved,
            "charts": run_charts(saved[0].runs),
            "total": runs.count(),
            "planner_figures_hidden": not shown_for(answer.attempt_id).estimate,
        }
        return [Fragment("simulator/_feedback.html", context)]

    def scorecard_fragments(self, attempt: Attempt) -> list[Fragment]:
        """The load tests saved with the attempt's bottlenecks answer: each prediction beside
        what the simulator found, so the comparison is part of the attempt's record."""
        runs = SimulationRun.objects.filter(
            answer__attempt_id=attempt.pk, answer__step_key=STEP, answer__follow_up_id=""
        ).order_by("-pk")
        saved = list(runs[:SHOWN_RUNS])
        if not saved:
            return []
        return [Fragment("simulator/_scorecard.html", {"saved": saved, "total": runs.count()})]
