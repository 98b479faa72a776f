"""A load-test run saved with the step answer it tests: the candidate's prediction, written
before the run, beside what the simulator found."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SimulationRunQuerySet(models.QuerySet):
    def for_answer(self, answer_id: int) -> SimulationRunQuerySet:
        return self.filter(answer_id=answer_id).order_by("-created_at", "-pk")


class SimulationRun(models.Model):
    """One press of a scenario button: the design tested, the prediction, the runs (one, or
    two to compare), each with its figures, verdict and time series."""

    answer = models.ForeignKey(
        "interview.StepAnswer", on_delete=models.CASCADE, related_name="simulation_runs"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    scenario = models.CharField(max_length=40)
    prediction = models.TextField()
    design = models.JSONField(default=dict)  # replicas, QPS, SLO, planner inputs
    runs = models.JSONField(default=list)  # [{label, params, figures, verdict, series, ...}]
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SimulationRunQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["answer", "-created_at"])]

    def __str__(self) -> str:
        return f"simulation {self.pk} ({self.scenario}) on answer {self.answer_id}"

    @property
    def verdicts(self) -> list[str]:
        return [run["verdict"] for run in self.runs]
