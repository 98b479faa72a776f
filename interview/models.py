"""Questions (as immutable revisions of their content files) and concept notes."""

from functools import cached_property

from django.db import models

from questionbank import QuestionSpec


class Concept(models.Model):
    """A concept note, e.g. the TPOT floor; its Markdown is rendered to HTML once, on load."""

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=500)
    related = models.JSONField(default=list)
    body_markdown = models.TextField()
    body_html = models.TextField()
    content_hash = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Question(models.Model):
    """A design question; what it says lives in its revisions, the newest being current."""

    slug = models.SlugField(unique=True)
    current_revision = models.ForeignKey(
        "QuestionRevision", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


# Typed specs by content hash: building one from its JSON costs more than a page's own work,
# and the same text always gives the same spec, so a process keeps the ones it has built.
QUESTION_SPECS_KEPT = 256
_question_specs: dict[str, QuestionSpec] = {}


class RevisionImmutableError(Exception):
    pass


class QuestionRevision(models.Model):
    """One published version of a question file. Never changed once saved: attempts point here."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64)
    source_text = models.TextField()
    source_path = models.CharField(max_length=500, blank=True)
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=500)
    difficulty = models.CharField(max_length=20)
    tags = models.JSONField(default=list)
    spec = models.JSONField(help_text="The parsed front matter: brief and the five steps.")
    scenario_markdown = models.TextField(blank=True)
    rendered = models.JSONField(help_text="HTML of every Markdown field, rendered on load.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["question", "number"], name="unique_revision_number"),
        ]

    def __str__(self) -> str:
        return f"{self.question.slug} r{self.number}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise RevisionImmutableError("a published revision is immutable; publish a new one")
        super().save(*args, **kwargs)

    @cached_property
    def question_spec(self) -> QuestionSpec:
        """The question as typed data, built from the stored front matter once per process
        for each content hash (a published revision never changes)."""
        spec = _question_specs.get(self.content_hash)
        if spec is None:
            spec = QuestionSpec.from_meta(self.spec, scenario=self.scenario_markdown)
            if len(_question_specs) >= QUESTION_SPECS_KEPT:
                _question_specs.clear()
            _question_specs[self.content_hash] = spec
        return spec

    def html(self, step_key: str, follow_up_id: str = "") -> dict[str, str]:
        """The rendered {"prompt", "reference"} HTML of a step, or of one of its follow-ups."""
        step = self.rendered["steps"][step_key]
        return step["follow_ups"][follow_up_id] if follow_up_id else step


class Attempt(models.Model):
    """One candidate working through one question revision (the revision never changes)."""

    class Status(models.TextChoices):
        ACTIVE = "active", "In progress"
        FINISHED = "finished", "Finished"

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="attempts")
    revision = models.ForeignKey(
        QuestionRevision, on_delete=models.PROTECT, related_name="attempts"
    )
    status = models.CharField(max_length=10, choices=Status, default=Status.ACTIVE)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # An instructor trying a question as a candidate would: no statistic, history or
    # calibration counts it.
    is_preview = models.BooleanField(default=False)
    # Cached pages of the attempt are keyed on this (interview.page_cache), so every write
    # that changes what they show bumps it: an answer created, a submission created, a grade
    # or a grading status written (interview.flow, `attempt_touch`). A write made elsewhere (a
    # shell, the admin) shows on the attempt's pages once their cache entries time out.
    state_version = models.PositiveBigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["user", "-started_at"])]

    def __str__(self) -> str:
        return f"attempt {self.pk} on {self.revision}"


class StepAnswer(models.Model):
    """The candidate's working draft for one step (or one follow-up of `tradeoffs`).

    `version` grows by one on every saved draft; a save that names an older version is a
    stale tab and is refused instead of overwriting newer text.
    """

    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="answers")
    step_key = models.CharField(max_length=20)
    follow_up_id = models.CharField(max_length=64, blank=True, default="")
    text = models.TextField(blank=True, default="")
    fields = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=0)
    opened_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    # Bumped with every edit of the row (a draft save, a stored quantity check), in the same
    # UPDATE. Cached pages that show this answer are keyed on it rather than on the attempt's
    # state_version, so a draft on one step leaves the other steps' pages cached.
    row_version = models.PositiveBigIntegerField(default=0, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["attempt", "step_key", "follow_up_id"], name="one_answer_per_step"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.attempt_id}:{self.step_key}:{self.follow_up_id or '-'} v{self.version}"


class Submission(models.Model):
    """A submitted version of a step answer: kept forever, graded in the background."""

    class GradeStatus(models.TextChoices):
        QUEUED = "queued", "Queued"
        GRADING = "grading", "Grading"
        DONE = "done", "Done"
        OFFLINE = "offline", "Offline grade, model unavailable"

    answer = models.ForeignKey(StepAnswer, on_delete=models.CASCADE, related_name="submissions")
    number = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    fields = models.JSONField(default=dict, blank=True)
    draft_version = models.PositiveIntegerField()
    grade_status = models.CharField(max_length=10, choices=GradeStatus, default=GradeStatus.QUEUED)
    grade_attempts = models.PositiveIntegerField(default=0)
    status_changed_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(auto_now_add=True)
    # Set when the model's and the offline grader's scores are too far apart to trust either
    # alone (interview.grading.review_reason): the candidate sees both, an instructor reviews.
    # Empty: nothing to review.
    review_reason = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["answer", "number"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "number"], name="unique_submission_number"),
            # Submitting the same draft twice (double click, two tabs) yields one submission.
            models.UniqueConstraint(
                fields=["answer", "draft_version"], name="one_submission_per_draft"
            ),
        ]
        indexes = [models.Index(fields=["grade_status", "status_changed_at"])]

    def __str__(self) -> str:
        return f"submission {self.number} of {self.answer}"

    @property
    def needs_review(self) -> bool:
        return bool(self.review_reason)


class Grade(models.Model):
    """One grader's verdict on a submission; at most one per grader, so re-runs never duplicate."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="grades")
    grader = models.CharField(max_length=20)  # "rubric" | "llm" | "slo" | "checker"
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    score = models.FloatField()
    points = models.JSONField(default=list)
    feedback = models.TextField(blank=True)
    warnings = models.JSONField(default=list)
    fallback_reason = models.CharField(max_length=300, blank=True)
    latency_ms = models.FloatField(default=0)
    usage = models.JSONField(default=dict)  # the model's token counts
    # The clarify card compared with the brief (interview.slo.CardReview.to_dict), "slo" only.
    slo_review = models.JSONField(null=True, blank=True)
    # Wrong ideas of the step the answer states, [{"id", "evidence", "comment"}] in the step's
    # order (interview.grading.types.MisconceptionFound); the question file says why each breaks.
    misconceptions = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "grader"], name="one_grade_per_grader"),
        ]

    def __str__(self) -> str:
        return f"{self.grader} {self.score:.2f} on {self.submission}"
