"""Mock interviews' hooks into practice (`practice.extensions`), registered when Django
starts (MocksConfig.ready): the deadline and follow-up gates, the event log, withheld
feedback, the live panel on the step page, and where Finish and the scorecard lead."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timeuntil

from mocks import log
from mocks.models import MockSession
from practice.extensions import AttemptExtension, AttemptLink, Fragment, StepPanel
from practice.models import Attempt, StepAnswer, Submission
from questionbank import STEP_KEYS, FollowUp
from questions.models import QuestionRevision


class MockInterviewHooks(AttemptExtension):
    def owns_follow_up(self, follow_up_id: str) -> bool:
        return log.is_mock_follow_up(follow_up_id)

    def follow_up_spec(
        self, revision: QuestionRevision, step_key: str, follow_up_id: str
    ) -> FollowUp:
        return log.follow_up_spec(revision, step_key, follow_up_id)

    def before_save(self, answer: StepAnswer) -> None:
        log.deadline_gate(answer)  # a mock interview past its time takes nothing more

    def before_submit(self, answer: StepAnswer) -> None:
        log.follow_up_gate(answer)  # a mock interviewer's question is answered first

    def draft_saved(self, answer: StepAnswer) -> None:
        log.draft_saved(answer)  # the live view and the replay read the log

    def answer_submitted(self, answer: StepAnswer, submission: Submission) -> None:
        log.answer_submitted(answer, submission)

    def submission_graded(self, submission: Submission) -> None:
        """In the worker: the app as interviewer asks the follow-up a grade made due."""
        from mocks.services import app_follow_up_ask

        session = (
            MockSession.objects.running()
            .for_attempt(submission.answer.attempt_id)
            .filter(mode=MockSession.Mode.APP)
            .first()
        )
        if session is not None:
            app_follow_up_ask(session=session)

    def save_note(self, attempt_id: int) -> str:
        """Work saved after the interview ended is kept as practice, out of its report (its
        answers are as they stood at the end): the status beside the box says so, since on
        a phone the panel telling of the end is far above it."""
        if MockSession.objects.ended().for_attempt(attempt_id).exists():
            return "The interview has ended: this is practice now, not part of its report."
        return ""

    def question_fragments(self, revision: QuestionRevision, user: User) -> list[Fragment]:
        return [Fragment("mock/start_form.html", {})]

    def feedback_withheld(self, attempt_id: int) -> bool:
        return log.feedback_withheld(attempt_id)

    def step_panel(self, attempt: Attempt, step_key: str) -> StepPanel | None:
        """The session's clock, nudges and follow-ups (mocks.views.candidate_panel)."""
        session_id = MockSession.objects.for_attempt(attempt.pk).values_list("pk", flat=True)
        if not session_id:
            return None
        url = reverse("mock_panel", kwargs={"session_id": session_id[0]}) + f"?step={step_key}"
        return StepPanel(
            url=url,
            element_id="mock-panel",
            css_class="card mock-panel",
            stylesheet="css/mock.css",
            script="js/mock.js",
            loading_text="Mock interview: loading the clock…",
            # Finish ends the interview (after a confirmation) and leads to its report.
            finish_label="Finish the interview…",
        )

    def attempt_finished(self, attempt: Attempt) -> str:
        """Finish on a running mock asks first, like "End the session now": ending a timed
        interview cannot be undone, and one click on the last step must not do it. The way
        back from that page is the last step, the only one whose pager offers Finish."""
        session = MockSession.objects.for_attempt(attempt.pk).first()
        if session is None:
            return ""
        if session.ended_at is not None:
            return reverse("mock_report", kwargs={"session_id": session.pk})
        end = reverse("mock_end", kwargs={"session_id": session.pk})
        return f"{end}?{urlencode({'step': STEP_KEYS[-1]})}"

    def attempt_links(self, attempts: Sequence[Attempt]) -> dict[int, AttemptLink]:
        """A mock interview's attempt leads to its session while it runs, with the time left
        (or waiting for its interviewer), and to its report once it has ended. One query for
        the list."""
        sessions = MockSession.objects.filter(attempt_id__in=[a.pk for a in attempts])
        return {session.attempt_id: _link(session) for session in sessions}

    def scorecard_redirect(self, attempt: Attempt) -> str:
        session = MockSession.objects.running().for_attempt(attempt.pk).first()
        if session is None:  # no verdicts for the candidate while the mock interview runs
            return ""
        return reverse("mock_session", kwargs={"session_id": session.pk})


def _link(session: MockSession) -> AttemptLink:
    if session.ended_at is not None:
        url = reverse("mock_report", kwargs={"session_id": session.pk})
        return AttemptLink(url, "mock interview, ended (report)")
    url = reverse("mock_session", kwargs={"session_id": session.pk})
    if session.ends_at is None:
        return AttemptLink(url, "mock interview, waiting for your interviewer (go to it)", True)
    if session.ends_at <= timezone.now():
        # Its time ran out and nothing has ended it yet: its page ends it and leads on.
        return AttemptLink(url, "mock interview, time up (see how it ended)")
    return AttemptLink(
        url, f"mock interview running, {timeuntil(session.ends_at)} left (go to it)", True
    )
