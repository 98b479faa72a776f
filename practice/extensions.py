"""What features built on practice add to an attempt, without practice importing them.

Practice knows nothing of mock interviews. The mocks app registers an `AttemptExtension` when
Django starts (its AppConfig.ready), and the practice flow, pages and scoring ask every
registered extension at the points below. Each default changes nothing, so with none
registered practice runs alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from practice.models import Attempt, StepAnswer, Submission
    from questionbank import FollowUp
    from questions.models import QuestionRevision


@dataclass(frozen=True)
class StepPanel:
    """A feature's live panel on the step page, loaded (and refreshed) on its own so that a
    cached page stays right: its URL, element id and class, static assets, loading text, and
    what the last step's Finish button says beside it ("" for practice's own words), and
    where it stands: above the step ("top", a mock interview's clock) or below the answer box
    ("after-answer", a tool for the answer, met once the question has been read)."""

    url: str
    element_id: str
    css_class: str
    stylesheet: str  # a static path
    script: str  # a static path
    loading_text: str
    finish_label: str = ""
    placement: str = "top"


@dataclass(frozen=True)
class AttemptLink:
    """Where an attempt listed on its question's page leads instead of practice's own step
    or scorecard, and what it says of the attempt there ("mock interview, ended (report)");
    `current`: the attempt is under way elsewhere (a mock's clock runs), marked as such."""

    url: str
    words: str
    current: bool = False


@dataclass(frozen=True)
class Fragment:
    """A piece of a practice page that a feature renders: its template, included with the
    page's context plus `fragment` (this object), whose `context` holds the feature's own."""

    template: str
    context: dict


class AttemptExtension:
    """One feature's hooks into practice; override what the feature needs."""

    def owns_follow_up(self, follow_up_id: str) -> bool:
        """Whether a follow-up id is this feature's own (asked live rather than authored):
        open without the authored order, and not a part of its step's score."""
        return False

    def follow_up_spec(
        self, revision: QuestionRevision, step_key: str, follow_up_id: str
    ) -> FollowUp | None:
        """The spec of one of this feature's own follow-ups (FlowError for an unknown one)."""
        return None

    def before_save(self, answer: StepAnswer) -> None:
        """Raise a FlowError to refuse a draft or a submission of `answer`."""

    def before_submit(self, answer: StepAnswer) -> None:
        """Raise a FlowError to refuse a submission of `answer` (after `before_save`)."""

    def draft_saved(self, answer: StepAnswer) -> None:
        """A draft of `answer` was saved."""

    def answer_submitted(self, answer: StepAnswer, submission: Submission) -> None:
        """`answer` was submitted as `submission` (a new one, not a repeat)."""

    def submission_graded(self, submission: Submission) -> None:
        """`submission` has its grades (called by the grading task, in the worker: this may
        take its time, e.g. ask the model)."""

    def verdict_stored(self, submission: Submission) -> None:
        """A person's verdict on `submission` was stored: the candidate's completed
        self-check or an instructor's review (called in their request, after it commits:
        keep it quick)."""

    def feedback_withheld(self, attempt_id: int) -> bool:
        """Whether the attempt's candidate sees no verdicts, rubric or reference for now."""
        return False

    def save_note(self, attempt_id: int) -> str:
        """What the status beside the answer box adds to "Draft saved" or "Submitted" for the
        attempt's answers (e.g. that the work is outside a finished interview's report), or
        ""."""
        return ""

    def holds_work(self, attempt: Attempt) -> bool:
        """Whether the feature keeps something the candidate made in the attempt (a load test
        with its prediction): an attempt that holds it is not blank, and Start leaves it."""
        return False

    def step_panel(self, attempt: Attempt, step_key: str) -> StepPanel | None:
        """A panel the step page loads (where `StepPanel.placement` says), or None."""
        return None

    def feedback_fragments(self, submission: Submission, *, graded: bool) -> list[Fragment]:
        """What the feature adds to a submission's feedback panel (`graded`: a grade is
        shown and no instructor has reviewed it yet)."""
        return []

    def question_fragments(self, revision: QuestionRevision, user: User) -> list[Fragment]:
        """What the feature offers `user`, a signed-in candidate, on a question's page."""
        return []

    def scorecard_fragments(self, attempt: Attempt) -> list[Fragment]:
        """What the feature adds to the attempt's scorecard (e.g. load tests saved with it)."""
        return []

    def attempt_finished(self, attempt: Attempt) -> str:
        """The candidate pressed Finish: where to send them instead of the scorecard, or ""."""
        return ""

    def attempt_links(self, attempts: Sequence[Attempt]) -> dict[int, AttemptLink]:
        """Where each of these attempts, listed on its question's page, leads instead: by
        attempt id, for those the feature leads elsewhere (one look-up for the list)."""
        return {}

    def scorecard_redirect(self, attempt: Attempt) -> str:
        """Where to send a candidate who asks for the scorecard now, or "" to show it."""
        return ""


_registered: list[AttemptExtension] = []


def register(extension: AttemptExtension) -> None:
    """Add a feature's hooks (once: registering the same one again changes nothing)."""
    if not any(type(e) is type(extension) for e in _registered):
        _registered.append(extension)


def registered() -> tuple[AttemptExtension, ...]:
    return tuple(_registered)


def is_extension_follow_up(follow_up_id: str) -> bool:
    return bool(follow_up_id) and any(e.owns_follow_up(follow_up_id) for e in _registered)


def extension_follow_up_spec(
    revision: QuestionRevision, step_key: str, follow_up_id: str
) -> FollowUp | None:
    for extension in _registered:
        if extension.owns_follow_up(follow_up_id):
            return extension.follow_up_spec(revision, step_key, follow_up_id)
    return None


def before_save(answer: StepAnswer) -> None:
    for extension in _registered:
        extension.before_save(answer)


def before_submit(answer: StepAnswer) -> None:
    for extension in _registered:
        extension.before_submit(answer)


def draft_saved(answer: StepAnswer) -> None:
    for extension in _registered:
        extension.draft_saved(answer)


def answer_submitted(answer: StepAnswer, submission: Submission) -> None:
    for extension in _registered:
        extension.answer_submitted(answer, submission)


def submission_graded(submission: Submission) -> None:
    for extension in _registered:
        extension.submission_graded(submission)


def verdict_stored(submission: Submission) -> None:
    for extension in _registered:
        extension.verdict_stored(submission)


def feedback_withheld(attempt_id: int) -> bool:
    return any(e.feedback_withheld(attempt_id) for e in _registered)


def save_note(attempt_id: int) -> str:
    return " ".join(note for e in _registered if (note := e.save_note(attempt_id)))


def holds_work(attempt: Attempt) -> bool:
    return any(e.holds_work(attempt) for e in _registered)


def step_panels(attempt: Attempt, step_key: str) -> list[StepPanel]:
    return [panel for e in _registered if (panel := e.step_panel(attempt, step_key))]


def feedback_fragments(submission: Submission, *, graded: bool) -> list[Fragment]:
    return [f for e in _registered for f in e.feedback_fragments(submission, graded=graded)]


def question_fragments(revision: QuestionRevision, user: User) -> list[Fragment]:
    return [f for e in _registered for f in e.question_fragments(revision, user)]


def scorecard_fragments(attempt: Attempt) -> list[Fragment]:
    return [f for e in _registered for f in e.scorecard_fragments(attempt)]


def attempt_finished(attempt: Attempt) -> str:
    return next((url for e in _registered if (url := e.attempt_finished(attempt))), "")


def attempt_links(attempts: Sequence[Attempt]) -> dict[int, AttemptLink]:
    links: dict[int, AttemptLink] = {}
    for e in _registered:
        links = e.attempt_links(attempts) | links  # the first registered wins
    return links


def scorecard_redirect(attempt: Attempt) -> str:
    return next((url for e in _registered if (url := e.scorecard_redirect(attempt))), "")
