"""Drills: sets of napkin drills a candidate answers, and the spaced-repetition cards that
schedule what comes back (one per drill kind, one per concept the candidate missed)."""

from django.db import models

from planner.engine.checker import VERDICT_LABELS


class OwnedQuerySet(models.QuerySet):
    def owned_by(self, user) -> "OwnedQuerySet":
        """The user's own rows (none for a signed-out user): every candidate-facing lookup
        goes through this, so another candidate's drills are a 404."""
        return self.filter(user_id=user.pk) if user.pk is not None else self.none()


class DrillSet(models.Model):
    """Five drills started together."""

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="drill_sets")
    created_at = models.DateTimeField()
    # The kind the set was started for (from a due card or a recommendation), "" for a mix.
    focus = models.CharField(max_length=40, blank=True, default="")

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"drill set {self.pk}"


class DrillItem(models.Model):
    """One drill of a set: what was drawn (kind, seed and the givens' fingerprint) and, once
    answered, the answer and the checker's verdict on it."""

    drill_set = models.ForeignKey(DrillSet, on_delete=models.CASCADE, related_name="items")
    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="drill_items")
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=40)
    seed = models.BigIntegerField()
    # engine.Drill.fingerprint: the same givens are not drawn again for this candidate.
    fingerprint = models.CharField(max_length=32)
    answer = models.CharField(max_length=500, blank=True, default="")
    # One of planner.engine.VERDICTS once answered, "" before.
    verdict = models.CharField(max_length=20, blank=True, default="")
    mistake = models.CharField(max_length=40, blank=True, default="")
    hint = models.TextField(blank=True, default="")
    value = models.FloatField(null=True, blank=True)
    expected = models.FloatField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    # A replay by seed of givens the candidate had already been shown (and perhaps their
    # worked solution): its answer is checked but reviews no card, since an answer remembered
    # is no recall of the method (drills.services.drill_item_answer).
    replay = models.BooleanField(default=False)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["drill_set", "position"]
        constraints = [
            models.UniqueConstraint(fields=["drill_set", "position"], name="one_item_per_slot"),
        ]
        indexes = [
            models.Index(fields=["user", "answered_at"]),
            models.Index(fields=["user", "kind", "fingerprint"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.seed}"

    @property
    def is_answered(self) -> bool:
        return bool(self.verdict)

    @property
    def verdict_label(self) -> str:
        return VERDICT_LABELS.get(self.verdict, self.verdict)


class Card(models.Model):
    """A spaced-repetition card, scheduled by FSRS: `key` is "drill:<kind>" or
    "concept:<slug>"; `state` is fsrs.Card.to_dict(), `due` copied out of it to query on."""

    class Source(models.TextChoices):
        DRILL = "drill", "Drill"
        CONCEPT = "concept", "Concept"

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="cards")
    key = models.CharField(max_length=100)
    source = models.CharField(max_length=10, choices=Source)
    state = models.JSONField(default=dict)
    due = models.DateTimeField()
    last_review = models.DateTimeField(null=True, blank=True)
    reviews = models.PositiveIntegerField(default=0)
    lapses = models.PositiveIntegerField(default=0)  # reviews rated Again
    # The practice session whose one review is the card's latest ("set:<id>" for a drill set,
    # "attempt:<id>" for a question's attempt, "" for none), and what re-rating that review
    # needs as the session goes on: {"state": the FSRS state before it ({} for a new card),
    # "ratings": {answer: rating}} (drills.services.card_review).
    session = models.CharField(max_length=40, blank=True, default="")
    session_base = models.JSONField(default=dict)

    objects = OwnedQuerySet.as_manager()

    class Meta:
        ordering = ["due"]
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="one_card_per_key"),
        ]
        indexes = [models.Index(fields=["user", "due"])]

    def __str__(self) -> str:
        return f"{self.key} due {self.due:%Y-%m-%d %H:%M}"

    @property
    def subject(self) -> str:
        """The drill kind or the concept slug."""
        return self.key.split(":", 1)[1]


class ConceptSync(models.Model):
    """How far a candidate's verdicts have been read into their concept cards: the newest
    grade (by id) already reviewed, so each verdict reviews a card once."""

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="+")
    last_grade_id = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"concepts of user {self.user_id} read up to grade {self.last_grade_id}"


class AssignmentQuerySet(models.QuerySet):
    def for_candidate(self, user) -> "AssignmentQuerySet":
        """The assignments given to `user` (none for a signed-out user): a candidate reaches
        only their own, so anyone else's is a 404."""
        return self.filter(candidate_id=user.pk) if user.pk is not None else self.none()

    def open(self) -> "AssignmentQuerySet":
        """Not withdrawn, started or not: outstanding until the work is done
        (services.assignments_done tells which are). A started one is still to do, so the
        candidate's pages offer it, with a way back to the work, and the same work is not
        assigned again while it is open."""
        return self.filter(withdrawn_at__isnull=True)


class Assignment(models.Model):
    """Work an instructor set a candidate: five drills of one kind, or one question. Exactly
    one of `kind` and `question` is set. Started when the candidate clicks it (a drill set is
    made, or the question is opened); the set started is kept, so its verdicts can be shown.
    A withdrawn one is kept, marked, rather than deleted: the instructor's list still shows
    what was given and when it was taken back, and a page the candidate opened before it was
    withdrawn can say why its button no longer starts anything."""

    instructor = models.ForeignKey(
        "auth.User", on_delete=models.CASCADE, related_name="drill_assignments_given"
    )
    candidate = models.ForeignKey(
        "auth.User", on_delete=models.CASCADE, related_name="drill_assignments"
    )
    kind = models.CharField(max_length=40, blank=True, default="")  # a drill kind, or ""
    question = models.ForeignKey(
        "questions.Question", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    note = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    drill_set = models.ForeignKey(
        DrillSet, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The last day to do it, a UTC date (the site's time zone): due by the end of that day.
    due_on = models.DateField(null=True, blank=True)
    # Set when its instructor withdrew it (never once done): no longer offered; what the
    # candidate did of it stays theirs.
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(kind="", question__isnull=False)
                    | (~models.Q(kind="") & models.Q(question__isnull=True))
                ),
                name="assignment_drills_or_question",
            ),
        ]
        indexes = [models.Index(fields=["candidate", "started_at"])]

    def __str__(self) -> str:
        what = f"drills {self.kind}" if self.kind else f"question {self.question_id}"
        return f"{what} for user {self.candidate_id}"
