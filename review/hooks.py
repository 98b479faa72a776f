"""Review's hooks into practice (`practice.extensions`), registered when Django starts
(ReviewConfig.ready): the dispute sent, or the form to dispute a grade, in the feedback."""

from __future__ import annotations

from django.urls import reverse

from practice.extensions import AttemptExtension, Fragment
from practice.models import Submission
from review.models import GradeDispute


class ReviewHooks(AttemptExtension):
    def feedback_fragments(self, submission: Submission, *, graded: bool) -> list[Fragment]:
        dispute = GradeDispute.objects.filter(submission=submission).first()
        if dispute is None and (not graded or submission.answer.attempt.is_preview):
            # A preview attempt never reaches the review queue: a dispute sent from one would
            # be confirmed and then seen by nobody, so none is offered.
            return []
        context = {
            "dispute": dispute,
            "can_dispute": graded and dispute is None,
            "dispute_url": reverse("review:dispute", kwargs={"submission_id": submission.pk}),
        }
        return [Fragment("review/_feedback_notice.html", context)]
