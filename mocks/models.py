"""Mock interviews: a timed session over one attempt, and its append-only event log."""

from datetime import timedelta

from django.db import models

from practice.models import Attempt

# Tables keep the names they had when these models lived in the `interview` app (db_table).


class MockSessionQuerySet(models.QuerySet):
    def running(self) -> "MockSessionQuerySet":
        return self.filter(ended_at__isnull=True)

    def ended(self) -> "MockSessionQuerySet":
        return self.filter(ended_at__isnull=False)

    def for_attempt(self, attempt_id: int) -> "MockSessionQuerySet":
        return self.filter(attempt_id=attempt_id)

    def started(self) -> "MockSessionQuerySet":
        return self.filter(started_at__isnull=False)

    def interviewed_by(self, user) -> "MockSessionQuerySet":
        return self.filter(interviewer_id=user.pk) if user.pk else self.none()


class MockSession(models.Model):
    """A timed mock interview: one attempt (which keeps every answer) with a clock and an
    interviewer, a person who joined by invite link or the app itself.

    The clock is the server's: time left is computed from `started_at` and the budgets here
    on every request, so a reload, a second tab or another web process shows the same time.
    With a person interviewing, the clock starts when they join or when the candidate starts
    alone (`started_at` is empty until then); with the app, at once.
    """

    class Mode(models.TextChoices):
        HUMAN = "human", "A person, by invite link"
        APP = "app", "The app"

    attempt = models.OneToOneField(Attempt, on_delete=models.CASCADE, related_name="mock")
    mode = models.CharField(max_length=10, choices=Mode)
    # Empty while a session with a person waits for them: no time runs before the start.
    started_at = models.DateTimeField(null=True, blank=True)
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
    # The last event's sequence number, moved under the row lock (mocks.log).
    last_seq = models.PositiveIntegerField(default=0)

    objects = MockSessionQuerySet.as_manager()

    class Meta:
        db_table = "interview_mocksession"
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"mock {self.pk} ({self.mode}) on {self.attempt}"

    @property
    def ends_at(self):
        """When the time runs out (None while a person is awaited: no time runs)."""
        if self.started_at is None:
            return None
        return self.started_at + timedelta(minutes=self.total_minutes)


class MockEvent(models.Model):
    """One entry of a mock session's append-only log: joined, started, step opened, draft
    saved, submitted, nudge, follow-up asked and answered, scored, feedback, time warning,
    ended. The live view, the replay, the time per step and the report are all read from
    it."""

    session = models.ForeignKey(MockSession, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=30)
    step_key = models.CharField(max_length=20, blank=True, default="")
    payload = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField()

    class Meta:
        db_table = "interview_mockevent"
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="one_mock_event_per_seq"),
        ]

    def __str__(self) -> str:
        return f"mock {self.session_id} #{self.seq} {self.kind}"
