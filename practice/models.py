"""Practice: a candidate's attempts at a question revision, their drafts, submissions and
grades."""

from django.db import models

from questions.models import QuestionRevision


class AttemptQuerySet(models.QuerySet):
    def owned_by(self, user) -> "AttemptQuerySet":
        """The user's own attempts: every candidate-facing lookup of an attempt goes through
        this, so nobody reaches another's (a signed-out user owns none)."""
        return self.filter(user_id=user.pk) if user.pk is not None else self.none()


class SubmissionQuerySet(models.QuerySet):
    def owned_by(self, user) -> "SubmissionQuerySet":
        """Submissions to the user's own attempts (as `AttemptQuerySet.owned_by`)."""
        if user.pk is None:
            return self.none()
        return self.filter(answer__attempt__user_id=user.pk)


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
    # Cached pages of the attempt are keyed on this (practice.page_cache), so every write
    # that changes what they show bumps it: an answer created, a submission created, a grade
    # or a grading status written (practice.services, `attempt_touch`). A write made elsewhere (a
    # shell, the admin) shows on the attempt's pages once their cache entries time out.
    state_version = models.PositiveBigIntegerField(default=0, editable=False)

    objects = AttemptQuerySet.as_manager()

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
    # alone (grading.review_reason): the candidate sees both, an instructor reviews.
    # Empty: nothing to review.
    review_reason = models.CharField(max_length=300, blank=True, default="")

    objects = SubmissionQuerySet.as_manager()

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

    An instructor's review is a grade too (grader "instructor", `reviewer` set), and so is the
    candidate's self-check (grader "self"): scoring takes an instructor's review, else the
    model's, else the self-check (practice.scoring.primary_grade).
    """

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="grades")
    # "rubric" (the keyword matcher: pointers, never a score) | "llm" | "instructor" | "self"
    # (the candidate's self-check) | "slo" | "checker"
    grader = models.CharField(max_length=20)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    score = models.FloatField()
    points = models.JSONField(default=list)
    feedback = models.TextField(blank=True)
    warnings = models.JSONField(default=list)
    fallback_reason = models.CharField(max_length=300, blank=True)
    latency_ms = models.FloatField(default=0)
    usage = models.JSONField(default=dict)  # the model's token counts
    # The clarify card compared with the brief (practice.slo.CardReview.to_dict), "slo" only.
    slo_review = models.JSONField(null=True, blank=True)
    # The audit trail: the model's reply exactly as it came back (also on an offline grade that
    # stood in for a reply that could not be used), and who reviewed, for grader "instructor".
    # Each entry of `points` also carries the grader's quote and whether it was found verbatim
    # in the graded text ("quote", "quote_found"; grading.audit).
    raw_response = models.TextField(blank=True, default="")
    reviewer = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Wrong ideas of the step the answer states, [{"id", "evidence", "comment"}] in the step's
    # order (grading.types.MisconceptionFound); the question file says why each breaks.
    misconceptions = models.JSONField(default=list, blank=True)
    # Grader "instructor" only: the wrong ideas an instructor removed from the grade, each
    # {"id", "by": the remover's user id} (review.services.wrong_idea_remove), kept out when
    # its verdicts are saved again.
    wrong_ideas_removed = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "grader"], name="one_grade_per_grader"),
        ]

    def __str__(self) -> str:
        return f"{self.grader} {self.score:.2f} on {self.submission}"

    @property
    def wrong_idea_ids_removed(self) -> set[str]:
        """The ids of `wrong_ideas_removed` ([{"id", "by"}: who removed each])."""
        return {r.get("id") for r in self.wrong_ideas_removed}


class SelfCheck(models.Model):
    """The candidate's own check of a submission no model graded: each rubric point rated
    against the reference, each wrong idea the keyword matcher flagged confirmed or dismissed
    (practice.self_check). Once every point is rated it is stored as a Grade "self" too.

    Saved as each rating is chosen, with the version guard of practice.autosave: a stale tab
    is refused instead of overwriting newer ratings.
    """

    class Rating(models.TextChoices):
        COVERED = "covered", "Covered"
        PARTLY = "partly", "Partly"
        NOT = "not", "Not covered"

    class Decision(models.TextChoices):
        CONFIRMED = "confirmed", "Yes, I meant that"
        DISMISSED = "dismissed", "No, I meant something else"

    submission = models.OneToOneField(
        Submission, on_delete=models.CASCADE, related_name="self_check"
    )
    ratings = models.JSONField(default=dict, blank=True)  # {point id: Rating}
    wrong_ideas = models.JSONField(default=dict, blank=True)  # {misconception id: Decision}
    version = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"self-check of {self.submission} v{self.version}"
