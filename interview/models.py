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
    # The file exactly as loaded, so export_content writes back the same bytes (empty for a
    # note loaded before this field existed: export then rebuilds the file from the fields).
    source_text = models.TextField(blank=True, default="")
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
    """One version of a question file. Never changed once saved: attempts point here.

    Published revisions are numbered 1, 2, ... and only they become a question's current
    revision, the one candidates see. An unpublished one (`is_published=False`, number 0) is an
    instructor's draft made real so a preview attempt can point at it; no candidate reaches it.
    """

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
    is_published = models.BooleanField(default=True)

    class Meta:
        ordering = ["question", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["question", "number"],
                condition=models.Q(is_published=True),
                name="unique_revision_number",
            ),
        ]

    def __str__(self) -> str:
        if not self.is_published:
            return f"{self.question.slug} preview"
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
    """One grader's verdict on a submission; at most one per grader, so re-runs never duplicate.

    An instructor's review is a grade too (grader "instructor", `reviewer` set): scoring
    prefers it to both graders (interview.scoring.primary_grade).
    """

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="grades")
    grader = models.CharField(max_length=20)  # "rubric" | "llm" | "instructor" | "slo" | "checker"
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
    # The audit trail: the model's reply exactly as it came back (also on an offline grade that
    # stood in for a reply that could not be used), and who reviewed, for grader "instructor".
    # Each entry of `points` also carries the grader's quote and whether it was found verbatim
    # in the graded text ("quote", "quote_found"; interview.grading.audit).
    raw_response = models.TextField(blank=True, default="")
    reviewer = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
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


class GradeDispute(models.Model):
    """A candidate's "dispute this grade" on one submission, with their sentence of why: it
    puts the submission in the question's review queue (one dispute per submission)."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="disputes")
    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="+")
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
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
        constraints = [
            models.UniqueConstraint(
                fields=["question", "step_key", "grader"], name="one_run_per_step_grader"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.grader} calibration of {self.question.slug}/{self.step_key}"


class MockSession(models.Model):
    """A timed mock interview: one attempt (which keeps every answer) with a clock and an
    interviewer, a person who joined by invite link or the app itself.

    The clock is the server's: time left is computed from `started_at` and the budgets here
    on every request, so a reload, a second tab or another web process shows the same time.
    """

    class Mode(models.TextChoices):
        HUMAN = "human", "A person, by invite link"
        APP = "app", "The app"

    attempt = models.OneToOneField(Attempt, on_delete=models.CASCADE, related_name="mock")
    mode = models.CharField(max_length=10, choices=Mode)
    started_at = models.DateTimeField()
    # The budget, copied from the question when the session starts: the whole, in minutes,
    # and each step's pace ({step key: minutes}).
    total_minutes = models.FloatField()
    step_minutes = models.JSONField(default=dict)
    ended_at = models.DateTimeField(null=True, blank=True)
    interviewer = models.ForeignKey(
        "auth.User",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="mocks_interviewed",
    )
    # The invite link signs this nonce: a new link or a revocation changes it, which turns
    # every earlier link away. Used once, then `invite_used_at` is set.
    invite_nonce = models.CharField(max_length=32, blank=True)
    invite_expires_at = models.DateTimeField(null=True, blank=True)
    invite_used_at = models.DateTimeField(null=True, blank=True)
    invite_revoked_at = models.DateTimeField(null=True, blank=True)
    # The report's read-only share link signs this nonce; empty means no link is live.
    share_nonce = models.CharField(max_length=32, blank=True)
    # The last event's sequence number, moved under the row lock (interview.mock_log).
    last_seq = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"mock {self.pk} ({self.mode}) on {self.attempt}"


class MockEvent(models.Model):
    """One entry of a mock session's append-only log: joined, step opened, draft saved,
    submitted, nudge, follow-up asked and answered, scored, time warning, ended. The live
    view, the replay, the time per step and the report are all read from it."""

    session = models.ForeignKey(MockSession, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=30)
    step_key = models.CharField(max_length=20, blank=True, default="")
    payload = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField()

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="one_mock_event_per_seq"),
        ]

    def __str__(self) -> str:
        return f"mock {self.session_id} #{self.seq} {self.kind}"
