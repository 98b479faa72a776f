"""Drills' hooks into practice: a graded step reviews the candidate's concept cards, and the
scorecard offers a set of drills for each concept it sends the candidate to review and says
which assignment the attempt did."""

from __future__ import annotations

import logging

from django.contrib.auth.models import User

from practice.extensions import AttemptExtension, Fragment
from practice.models import Attempt, Submission
from questions.models import QuestionRevision

logger = logging.getLogger(__name__)


def _assignments_done_by(attempt: Attempt) -> list:
    """The assignments of the attempt's question that this finished attempt did, as
    selectors.AssignmentView: its scorecard tells the candidate so. Two queries, one when
    nothing is assigned; none for an attempt not finished."""
    from drills import selectors, services
    from drills.models import Assignment

    if attempt.finished_at is None:
        return []
    assignments = list(
        Assignment.objects.for_candidate(attempt.user)
        .open()
        .filter(question_id=attempt.revision.question_id, created_at__lte=attempt.finished_at)
        .select_related("instructor", "question")
    )
    done = services.assignments_done(assignments) if assignments else {}
    return [
        selectors.assignment_view_done(a)
        for a in assignments
        if getattr(done.get(a.pk), "pk", None) == attempt.pk
    ]


class DrillHooks(AttemptExtension):
    def scorecard_fragments(self, attempt: Attempt) -> list[Fragment]:
        """A set of drills for each concept the scorecard sends the candidate to review (its
        review_concepts, which the fragment's template reads through `drills_for`)."""
        from drills.services import SET_SIZE

        if attempt.is_preview:
            return []
        fragments = [Fragment("drills/_scorecard.html", {"set_size": SET_SIZE})]
        done = _assignments_done_by(attempt)
        if done:
            fragments.insert(0, Fragment("drills/_assignment_done.html", {"done": done}))
        return fragments

    def question_fragments(self, revision: QuestionRevision, user: User) -> list[Fragment]:
        """The candidate's open assignment of this question, if any: who set it, the note and
        the due date, which the question's page is where the work is done. One query when
        nothing is assigned."""
        from drills import selectors

        assigned = selectors.assignments_open(user=user, question_id=revision.question_id)
        if not assigned:
            return []
        return [Fragment("drills/_assignment_on_question.html", {"assigned": assigned})]

    def submission_graded(self, submission: Submission) -> None:
        """Read the new verdicts into the candidate's concept cards (in the worker)."""
        self._concepts_sync(submission)

    def verdict_stored(self, submission: Submission) -> None:
        """A self-check or an instructor's review: read it into the concept cards now."""
        self._concepts_sync(submission)

    def _concepts_sync(self, submission: Submission) -> None:
        """Read the new verdicts into the candidate's concept cards. A failure here is
        logged, never passed on: the grade is stored already, and the next sync (a graded
        step, a drill set started) reads what this one missed."""
        from drills.services import concept_cards_sync

        attempt = submission.answer.attempt
        if attempt.is_preview:
            return
        try:
            concept_cards_sync(user=attempt.user)
        except Exception:
            logger.exception("Concept cards of user %s were not synced.", attempt.user_id)
