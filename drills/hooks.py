"""Drills' hooks into practice: a graded step reviews the candidate's concept cards."""

from __future__ import annotations

import logging

from practice.extensions import AttemptExtension
from practice.models import Submission

logger = logging.getLogger(__name__)


class DrillHooks(AttemptExtension):
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
