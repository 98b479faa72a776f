"""An instructor's working copy of a content file, and candidates' reports of problems."""

from django.db import models


class Draft(models.Model):
    """The text an instructor is editing for one question (or concept note), before publishing.

    `version` grows by one on every save; a save naming an older version comes from a stale
    tab and is refused rather than overwriting newer text (as for candidates' drafts).
    """

    class Kind(models.TextChoices):
        QUESTION = "question", "Question"
        CONCEPT = "concept", "Concept note"

    kind = models.CharField(max_length=10, choices=Kind, default=Kind.QUESTION)
    slug = models.SlugField()
    text = models.TextField(blank=True, default="")
    version = models.PositiveIntegerField(default=0)
    # The published revision the draft's text began from (a question's; None for a concept
    # note, a new question, or a draft older than this field): publishing over a revision
    # published since (by load_content from a release of the files) would silently undo it.
    base_revision = models.PositiveIntegerField(null=True, blank=True)
    updated_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "slug"], name="one_draft_per_file"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.slug} v{self.version}"


class ProblemReport(models.Model):
    """A candidate telling the question's instructors that a step is wrong or unclear."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    question = models.ForeignKey(
        "questions.Question", on_delete=models.CASCADE, related_name="problem_reports"
    )
    revision = models.ForeignKey(
        "questions.QuestionRevision", on_delete=models.CASCADE, related_name="problem_reports"
    )
    step_key = models.CharField(max_length=20)
    message = models.TextField()
    # The candidate's answer to the step, only when they ticked that they agree to share it.
    answer_text = models.TextField(blank=True, default="")
    # ...and the diagram saved with it (Mermaid text, `StepAnswer.fields["diagram"]`), likewise.
    answer_diagram = models.TextField(blank=True, default="")
    reporter = models.ForeignKey(
        "auth.User", null=True, on_delete=models.SET_NULL, related_name="problem_reports"
    )
    status = models.CharField(max_length=10, choices=Status, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The published revision that fixed what was reported, when the closer names one.
    fixed_in = models.ForeignKey(
        "questions.QuestionRevision",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="fixed_reports",
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["question", "status"])]

    def __str__(self) -> str:
        return f"report {self.pk} on {self.question_id}:{self.step_key} ({self.status})"
