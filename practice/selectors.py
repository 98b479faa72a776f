"""Reads of a candidate's attempts."""

from practice.models import Attempt


def attempt_number(attempt: Attempt) -> int:
    """The attempt's number among its user's attempts at the same question, from 1 in the
    order they were started (a new user's first attempt is "Attempt 1", whatever its id)."""
    return Attempt.objects.filter(
        user_id=attempt.user_id,
        revision__question_id=attempt.revision.question_id,
        pk__lte=attempt.pk,
        # Previews are numbered apart, as the history (which leaves them out) numbers the rest.
        is_preview=attempt.is_preview,
    ).count()
