"""Review and calibration: disputes of a grade, instructors' labels and the graders'
figures against them."""

from django.db import models

from practice.models import Submission
from questions.models import Question

# Tables keep the names they had when these models lived in the `interview` app (db_table).


class GradeDispute(models.Model):
    """A candidate's "dispute this grade" on one submission, with their sentence of why: it
    puts the submission in the question's review queue (one dispute per submission)."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="disputes")
    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="+")
    reason = models.TextField()
    # Sent on the candidate's own self-check (review.services.asks_for_a_grade): it asks an
    # instructor to grade the answer. Kept as sent, so a model grade that comes later does
    # not turn the request into a dispute of that grade.
    asks_for_grade = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "interview_gradedispute"
        constraints = [
            models.UniqueConstraint(fields=["submission"], name="one_dispute_per_submission"),
        ]

    def __str__(self) -> str:
        return f"dispute of {self.submission}"


class CalibrationLabel(models.Model):
    """An instructor's verdict per rubric point on one answer to one step: the ground truth the
    graders are measured against. From a review (`submission` set) or a labels file."""

    class Source(models.TextChoices):
        REVIEW = "review", "Instructor review"
        IMPORT = "import", "Labels file"

    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, related_name="calibration_labels"
    )
    step_key = models.CharField(max_length=20)
    follow_up_id = models.CharField(max_length=64, blank=True, default="")
    # The text the graders read (for clarify, the SLO card written out, then the notes).
    answer = models.TextField()
    answer_hash = models.CharField(max_length=64)
    labels = models.JSONField(help_text='{point id: "hit" | "partial" | "miss"}')
    source = models.CharField(max_length=10, choices=Source, default=Source.IMPORT)
    submission = models.ForeignKey(
        Submission,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="calibration_labels",
    )
    labelled_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "interview_calibrationlabel"
        ordering = ["question", "step_key", "created_at"]
        constraints = [
            # The same answer labelled twice (a file imported again) is one label, updated.
            models.UniqueConstraint(
                fields=["question", "step_key", "follow_up_id", "answer_hash"],
                name="one_label_per_answer",
            ),
        ]

    def __str__(self) -> str:
        return f"label on {self.question.slug}/{self.step_key} ({self.source})"


class CalibrationRun(models.Model):
    """The latest figures of one grader against a step's labels, with the model and prompt
    version that produced them: when either differs from the current ones, they are stale."""

    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, related_name="calibration_runs"
    )
    step_key = models.CharField(max_length=20)
    grader = models.CharField(max_length=20)  # "rubric" | "llm"
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    n = models.PositiveIntegerField(default=0)
    kappa = models.FloatField(null=True, blank=True)
    agreement = models.FloatField(null=True, blank=True)
    points = models.JSONField(default=list)
    disagreements = models.JSONField(default=list)
    warnings = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "interview_calibrationrun"
        constraints = [
            models.UniqueConstraint(
                fields=["question", "step_key", "grader"], name="one_run_per_step_grader"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.grader} calibration of {self.question.slug}/{self.step_key}"
