"""The interviewer's live view and the candidate's panel, through the views: events after N
(204 when nothing is new), nudges and follow-ups the candidate sees, blind scores before
the graders' verdicts, and nothing of the interviewer's guide on the candidate's side."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from mocks import services as mock
from mocks.log import Kind
from mocks.models import MockSession
from practice import services as flow
from practice.models import Submission
from questions.models import Question

ARCHITECTURE = (
    "Clients go through an API gateway that handles auth and rate limits, then a prefix-aware "
    "router in front of ten vLLM replicas."
)


class Htmx(Client):
    def get(self, path, *args, **kwargs):
        kwargs.setdefault("headers", {})["HX-Request"] = "true"
        return super().get(path, *args, **kwargs)

    def post(self, path, *args, **kwargs):
        kwargs.setdefault("headers", {})["HX-Request"] = "true"
        return super().post(path, *args, **kwargs)


@pytest.fixture
def live(content_loaded):
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=candidate, revision=revision, mode="human")
    mock.invite_accept(session_id=session.pk, token=mock.invite_token(session), user=interviewer)
    them, us = Htmx(), Htmx()
    them.force_login(candidate)
    us.force_login(interviewer)
    session.refresh_from_db()
    return session, them, us


def url(name, session, **kwargs):
    return reverse(name, kwargs={"session_id": session.pk, **kwargs})


def events_after(us, session, after, graded):
    return us.get(url("mock_interview_events", session) + f"?after={after}&graded={graded}")


def test_the_interviewer_sees_the_answer_as_it_saves_and_a_204_when_nothing_is_new(live):
    session, them, us = live
    session.refresh_from_db()
    after = session.last_seq
    assert events_after(us, session, after, 0).status_code == 204
    # The candidate opens architecture (their panel says which step) and types.
    them.get(url("mock_panel", session) + "?step=architecture")
    them.post(
        reverse("attempt_draft", kwargs={"attempt_id": session.attempt_id, "step": "architecture"}),
        {"text": "An API gateway", "base_version": 0},
    )
    page = events_after(us, session, after, 0)
    assert page.status_code == 200
    html = page.content.decode()
    assert "The candidate is on: Architecture" in html
    assert "An API gateway" in html
    # The guide: rubric, reference and the step's interviewer notes.
    assert "prefix-aware" in html and "Notes for the interviewer" in html
    assert "Wait for the request path" in html
    session.refresh_from_db()
    assert events_after(us, session, session.last_seq, 0).status_code == 204


def test_a_nudge_reaches_the_candidate_and_is_logged(live):
    session, them, us = live
    first = them.get(url("mock_panel", session) + "?step=clarify")
    after = int(first.content.decode().split("after=")[1].split('"')[0])
    assert them.get(url("mock_panel", session) + f"?step=clarify&after={after}").status_code == 204
    assert us.post(url("mock_nudge", session), {"text": "Think about the peak."}).status_code == 200
    panel = them.get(url("mock_panel", session) + f"?step=clarify&after={after}")
    assert panel.status_code == 200 and "Think about the peak." in panel.content.decode()
    assert session.events.filter(kind=Kind.NUDGE, payload__text="Think about the peak.").exists()
    refused = us.post(url("mock_nudge", session), {"text": "  "})
    assert refused.status_code == 422 and "Write the nudge first" in refused.content.decode()


def test_a_sessions_nudges_are_capped_and_the_interviewer_is_told(live, monkeypatch):
    session, them, us = live
    monkeypatch.setattr(mock, "NUDGES_PER_SESSION", 3)
    sent = [us.post(url("mock_nudge", session), {"text": f"Nudge {n}"}) for n in range(3)]
    assert [r.status_code for r in sent] == [200, 200, 200]
    refused = us.post(url("mock_nudge", session), {"text": "One more"})
    assert refused.status_code == 422
    assert "has had its 3 nudges" in refused.content.decode()
    assert session.events.filter(kind=Kind.NUDGE).count() == 3
    # Follow-up questions are still open to the interviewer.
    assert us.post(url("mock_ask", session), {"text": "Which percentile?"}).status_code == 200


def test_the_candidate_must_answer_the_follow_up_before_submitting_the_step(live):
    session, them, us = live
    submit = reverse("attempt_submit", kwargs={"attempt_id": session.attempt_id, "step": "clarify"})
    them.post(
        reverse("attempt_draft", kwargs={"attempt_id": session.attempt_id, "step": "clarify"}),
        {"text": "Peak 50 QPS.", "base_version": 0},
    )
    us.post(url("mock_ask", session), {"text": "Which percentile do you design for?"})
    panel = them.get(url("mock_panel", session) + "?step=clarify").content.decode()
    assert "Which percentile do you design for?" in panel
    refused = them.post(submit, {"text": "Peak 50 QPS.", "base_version": 1})
    assert refused.status_code == 422 and "follow-up first" in refused.content.decode()
    fu_submit = url("mock_follow_up_submit", session, follow_up="mock:ask-1")
    answered = them.post(fu_submit, {"text": "p99 TTFT", "step": "clarify"})
    assert answered.status_code == 200
    # Answered: no form to answer it again; the question stays, read-only, with its answer.
    after = answered.content.decode()
    assert "Submit the follow-up answer" not in after
    assert "You answered the follow-up." in after and "Which percentile" in after
    assert them.post(submit, {"text": "Peak 50 QPS.", "base_version": 1}).status_code == 200
    # The interviewer's live view and the transcript show the answer.
    html = us.get(url("mock_interview", session)).content.decode()
    assert "Answer (Clarify the requirements): p99 TTFT" in html or "p99 TTFT" in html


def test_scores_are_blind_then_the_graders_verdicts_are_revealed(live):
    session, them, us = live
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    flow.draft_save(answer=answer, text=ARCHITECTURE, fields={}, base_version=0)
    outcome = flow.step_submit(answer=answer, text=ARCHITECTURE, fields={}, base_version=1)
    flow.submission_grade(submission_id=outcome.submission.pk)
    page = us.get(url("mock_interview", session)).content.decode()
    block = page.split('id="score-architecture"')[1].split('class="mock-step-score"')[0]
    assert "Score Architecture" in block and "Model" not in block  # no verdicts before theirs
    rubric = session.attempt.revision.question_spec.step("architecture").rubric
    score_url = url("mock_score", session, step="architecture")
    incomplete = us.post(score_url, {"point-arch-gateway": "hit"})
    assert incomplete.status_code == 422 and "every rubric point" in incomplete.content.decode()
    verdicts = {f"point-{p.id}": "miss" for p in rubric} | {"point-arch-gateway": "hit"}
    revealed = us.post(url("mock_score", session, step="architecture"), verdicts).content.decode()
    # The matcher's verdicts come after theirs too, labelled advisory and never as a grade.
    assert "Matcher, advisory" in revealed and "Offline" not in revealed
    again = us.post(url("mock_score", session, step="architecture"), verdicts)
    assert again.status_code == 422 and "already scored" in again.content.decode()
    scored = session.events.get(kind=Kind.SCORED, step_key="architecture")
    assert scored.payload["verdicts"]["arch-gateway"] == "hit"
    assert scored.payload["submission_id"] == Submission.objects.get().pk


def test_the_candidate_never_sees_the_guide(live):
    session, them, us = live
    them.get(url("mock_panel", session) + "?step=architecture")
    us.post(url("mock_nudge", session), {"text": "Go on."})
    pages = [
        them.get(url("mock_panel", session) + "?step=architecture").content.decode(),
        them.get(url("mock_session", session)).content.decode(),
        them.get(
            reverse(
                "attempt_step", kwargs={"attempt_id": session.attempt_id, "step": "architecture"}
            )
        ).content.decode(),
    ]
    for html in pages:
        assert "Wait for the request path" not in html  # the notes
        assert "Notes for the interviewer" not in html
        assert "What sits in front of your router" not in html  # a probe


def test_polling_stops_when_the_session_ends(live):
    session, them, us = live
    MockSession.objects.filter(pk=session.pk).update(
        started_at=session.started_at - timedelta(minutes=46)
    )
    page = us.get(url("mock_interview_events", session) + "?after=0&graded=0").content.decode()
    assert "The session has ended" in page and "hx-trigger" not in page.split('id="live"')[1][:300]
    panel = them.get(url("mock_panel", session) + "?step=clarify").content.decode()
    assert "The session has ended" in panel and "hx-trigger" not in panel
    assert session.events.filter(kind=Kind.ENDED).count() == 1


def test_the_session_page_polls_while_the_clock_runs_and_says_when_it_ended(live):
    """A candidate who stays on the session page saw the countdown stop at 0:00 and nothing
    more: the page polled only until the interviewer joined."""
    session, them, _ = live
    running = them.get(url("mock_session", session)).content.decode()
    live_div = running.split('id="mock-session-live"')[1][:400]
    assert "data-seconds-left" in running and "hx-trigger" in live_div
    assert 'hx-trigger="every 10000ms"' in live_div  # the clock counts down by itself
    MockSession.objects.filter(pk=session.pk).update(
        started_at=session.started_at - timedelta(minutes=46)
    )
    ended = them.get(url("mock_session", session), HTTP_HX_REQUEST="true").content.decode()
    live_div = ended.split('id="mock-session-live"')[1]
    assert "This session has ended" in live_div and "Read the report" in live_div
    assert "hx-trigger" not in live_div[:300]


def test_the_candidate_sees_no_verdicts_until_the_end(live):
    session, them, us = live
    step = reverse(
        "attempt_step", kwargs={"attempt_id": session.attempt_id, "step": "architecture"}
    )
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    flow.draft_save(answer=answer, text=ARCHITECTURE, fields={}, base_version=0)
    outcome = flow.step_submit(answer=answer, text=ARCHITECTURE, fields={}, base_version=1)
    flow.submission_grade(submission_id=outcome.submission.pk)
    feedback = reverse(
        "submission_feedback",
        kwargs={"attempt_id": session.attempt_id, "submission_id": outcome.submission.pk},
    )
    for html in (them.get(step).content.decode(), them.get(feedback).content.decode()):
        assert "Submitted for your mock interview" in html
        assert "Rubric points" not in html and "Reference answer" not in html
    scorecard = reverse("attempt_scorecard", kwargs={"attempt_id": session.attempt_id})
    assert them.get(scorecard)["Location"] == url("mock_session", session)
    # Ending the session (Finish asks first: test_mock_finish_confirm) brings the feedback.
    ended = them.post(url("mock_end", session), {"confirm": "yes"})
    assert ended["Location"] == url("mock_report", session)
    html = them.get(step).content.decode()
    assert "Reference answer" in html and "Submitted for your mock interview" not in html
    assert 'id="self-check"' in html  # offline, the candidate now rates their own answer


def test_scoring_communication_says_the_score_given_and_refuses_a_second(live):
    session, _them, us = live
    scored = us.post(url("mock_communication", session), {"communication": "partial"})
    assert scored.status_code == 200 and "Scored: partial." in scored.content.decode()
    again = us.post(url("mock_communication", session), {"communication": "hit"})
    assert again.status_code == 422 and "already scored communication" in again.content.decode()
