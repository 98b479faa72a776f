"""Review's hooks into practice (`practice.extensions`), registered when Django starts
(ReviewConfig.ready): the dispute sent, or the form to dispute a grade, in the feedback."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

from practice.extensions import AttemptExtension, Fragment
from practice.models import Submission
from review import services
from review.models import GradeDispute


class ReviewHooks(AttemptExtension):
    def feedback_fragments(self, submission: Submission, *, graded: bool) -> list[Fragment]:
        dispute = GradeDispute.objects.filter(submission=submission).first()
        if dispute is None and (not graded or submission.answer.attempt.is_preview):
            # A preview attempt never reaches the review queue: a dispute sent from one would
            # be confirmed and then seen by nobody, so none is offered.
            return []
        can_dispute = graded and dispute is None
        # Past the day's quota the form would only be refused: it says so instead.
        limit_reached = can_dispute and not services.disputes_left_today(
            submission.answer.attempt.user_id
        )
        context = {
            "dispute": dispute,
            # Scored by their own ratings, the candidate asks for an instructor's grade rather
            # than disputing a grader's: the same request, worded for what it is.
            "own_check": dispute.asks_for_grade
            if dispute is not None
            else services.asks_for_a_grade(submission),
            "can_dispute": can_dispute and not limit_reached,
            "limit_reached": limit_reached,
            "per_day": settings.GRADE_DISPUTES_PER_DAY,
            "dispute_url": reverse("review:dispute", kwargs={"submission_id": submission.pk}),
        }
        return [Fragment("review/_feedback_notice.html", context)]
