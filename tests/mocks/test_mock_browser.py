"""Acceptance: a mock interview with a person, in two real browser contexts on a live server.

The candidate starts a session and copies the invite link; the interviewer opens it, sees
the candidate's text as it autosaves, sends a nudge the candidate sees, asks a follow-up the
candidate must answer before submitting the step, scores the step blind and then sees the
graders' verdicts; the session ends; both read the report; its share link opens it signed
out and nothing else; the invite used again, or after revocation, is refused.

Grading runs in the test thread (`submission_grade`, what the worker would run), so the test
needs no worker process.
"""

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from mocks.models import MockSession
from practice import services as flow
from practice.models import Submission
from questions.models import Question
from tests.conftest import save_screenshot, signed_in_context
from tests.conftest import watched_page as new_page
from tests.practice.test_layout_a11y_browser import PHONE
from tests.practice.test_layout_a11y_browser import _axe_serious as axe_serious

pytestmark = pytest.mark.browser
TYPED = "Clients reach an API gateway, then a prefix-aware router in front of ten replicas."


def grade_what_is_queued():
    for pk in Submission.objects.filter(grade_status="queued").values_list("pk", flat=True):
        flow.submission_grade(submission_id=pk)


def test_a_mock_interview_with_a_person_from_invite_to_shared_report(
    browser, live_server_url, settings
):
    settings.MOCK_POLL_SECONDS = 0.3  # the live pages poll fast in a test
    base = live_server_url
    candidate = User.objects.create(username="candidate")
    interviewer = User.objects.create(username="interviewer")
    errors: list[str] = []
    them_ctx = signed_in_context(browser, base, candidate)
    us_ctx = signed_in_context(browser, base, interviewer)
    them, us = new_page(them_ctx, errors), new_page(us_ctx, errors)

    # The candidate starts a session with a person and copies the invite link.
    them.goto(f"{base}/questions/chat-api-50qps/")
    them.get_by_label("with a person, who joins by a link you send").check()
    them.get_by_role("button", name="Start a mock interview").click()
    them.wait_for_url("**/mock/*/")
    invite = them.locator("#invite-link").input_value()
    them.get_by_role("button", name="Copy").click()
    session = MockSession.objects.get()
    # The clock waits for the interviewer.
    expect(them.locator("#clock-card")).to_contain_text("Waiting for your interviewer to join")
    assert session.started_at is None

    # The interviewer opens it and joins.
    us.goto(invite)
    us.get_by_role("button", name="Join as the interviewer").click()
    us.wait_for_url(f"**/mock/{session.pk}/interview/")
    expect(them.locator("#clock-card")).not_to_contain_text("Waiting for your interviewer")

    # The candidate works on architecture; the interviewer sees the text as it saves.
    them.goto(f"{base}/attempts/{session.attempt_id}/steps/architecture/")
    expect(them.locator("#mock-panel")).to_contain_text("Left in the session")
    them.locator("#answer-text").fill(TYPED)
    expect(us.locator("#candidate-answer")).to_contain_text(TYPED)
    expect(us.locator("#live")).to_contain_text("The candidate is on: Architecture")

    # A nudge reaches the candidate.
    us.locator("#nudge-text").fill("Where is the shared prompt cached?")
    us.get_by_role("button", name="Send the nudge").click()
    expect(them.locator("#mock-panel")).to_contain_text("Where is the shared prompt cached?")

    # A follow-up must be answered before the step can be submitted.
    us.locator("#ask-text").fill("How does the router choose a replica?")
    us.get_by_role("button", name="Ask the follow-up").click()
    expect(them.locator("#mock-panel")).to_contain_text("How does the router choose a replica?")
    them.locator("#submit-button").click()
    expect(them.locator("#submit-refused")).to_contain_text("Answer the interviewer's follow-up")
    them.get_by_label("Your answer to the follow-up").fill("By a hash of the prompt prefix.")
    them.get_by_role("button", name="Submit the follow-up answer").click()
    expect(them.locator("#mock-panel")).to_contain_text("You answered the follow-up")
    expect(us.locator("#live")).to_contain_text("By a hash of the prompt prefix.")
    them.locator("#submit-button").click()
    expect(them.locator("#feedback")).to_be_visible()
    grade_what_is_queued()

    # Blind scoring: the form first, no verdicts of the graders; then both side by side.
    block = us.locator("#score-architecture")
    expect(block.get_by_role("button", name="Score Architecture")).to_be_visible()
    expect(block).not_to_contain_text("Matcher")
    for radio in block.locator("input[value=hit]").all():
        radio.check()
    block.get_by_role("button", name="Score Architecture").click()
    # The matcher's verdicts come after theirs, advisory: it grades nothing, so it is no
    # disagreement (no model graded, and the candidate self-checks after the end).
    expect(us.locator("#score-architecture")).to_contain_text("Matcher, advisory")
    # The interviewer's written feedback, per step and overall, goes into the report.
    us.locator("#feedback-architecture").fill("Name the autoscaling signal before the fleet.")
    us.get_by_role("button", name="Save the feedback on Architecture").click()
    expect(us.locator("#feedback-status-architecture")).not_to_be_empty()
    us.locator("#feedback-overall").fill("Clear structure; size the fleet from the knee.")
    us.get_by_role("button", name="Save the overall feedback").click()
    expect(us.locator("#overall-feedback-status")).not_to_be_empty()
    save_screenshot(us, "mock-interviewer-live")
    save_screenshot(them, "mock-candidate-step")

    # The interviewer ends the session; both see the report.
    us.get_by_role("link", name="End the session now").click()
    us.get_by_label("Yes, end the session now").check()  # the second, deliberate step
    us.get_by_role("button", name="End the session").click()
    us.wait_for_url(f"**/mock/{session.pk}/report/")
    expect(us.locator("main")).to_contain_text("Mock interview report")
    expect(them.locator("#mock-panel")).to_contain_text("The session has ended")
    them.locator("#mock-panel").get_by_role("link", name="Read the report").click()
    them.wait_for_url(f"**/mock/{session.pk}/report/")
    report = them.locator("main")
    # No model graded: the step waits for the candidate's self-check, and the matcher's
    # verdicts are not theirs to read as a grade.
    expect(report.locator("#step-architecture-h")).to_contain_text("awaiting the candidate")
    expect(report).not_to_contain_text("Matcher")
    expect(report).to_contain_text("Name the autoscaling signal before the fleet.")
    expect(report).to_contain_text("Clear structure; size the fleet from the knee.")
    expect(report.locator(".mock-reference").first).to_contain_text("Reference answer")
    save_screenshot(them, "mock-report")

    # The share link opens the report signed out, and nothing else.
    them.get_by_role("button", name="Make a read-only link").click()
    share = them.locator("#share-link").input_value()
    anon_ctx = browser.new_context()
    anon = new_page(anon_ctx, errors)
    anon.goto(share)
    expect(anon.locator("main")).to_contain_text("Mock interview report")
    assert anon.locator("a").count() == 0
    for other in (f"/mock/{session.pk}/report/", f"/attempts/{session.attempt_id}/"):
        anon.goto(base + other)
        expect(anon).to_have_url(re.compile(r".*/accounts/login/\?next="))

    # The invite used a second time is refused to anyone else; the interviewer who used it
    # is taken back to their own page.
    other_ctx = signed_in_context(browser, base, User.objects.create(username="other"))
    other = new_page(other_ctx, errors)
    other.goto(invite)
    expect(other.locator("main")).to_contain_text("already been used")
    other_ctx.close()
    us.goto(invite)
    expect(us).to_have_url(f"{base}/mock/{session.pk}/interview/")

    # A revoked invite is refused.
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    second = mock.mock_session_start(user=candidate, revision=revision, mode="human")
    them.goto(f"{base}/mock/{second.pk}/")
    revoked = them.locator("#invite-link").input_value()
    them.get_by_role("button", name="Revoke this link").click()
    expect(them.locator("main")).to_contain_text("No invite link is live")
    us.goto(revoked)
    expect(us.locator("main")).to_contain_text("revoked")

    anon_ctx.close()
    them_ctx.close()
    us_ctx.close()

    # The mock pages fit a phone and pass axe (a context that lets axe's script in).
    problems = []
    for user, paths in (
        (candidate, [f"/mock/{second.pk}/", f"/mock/{session.pk}/report/"]),
        (interviewer, [f"/mock/{session.pk}/interview/", f"/mock/{session.pk}/replay/"]),
    ):
        context = signed_in_context(browser, base, user, viewport=PHONE, bypass_csp=True)
        phone = context.new_page()
        for path in [*paths, share.removeprefix(base)]:
            phone.goto(base + path)
            width = phone.evaluate("document.documentElement.scrollWidth")
            if width > PHONE["width"]:
                problems.append(f"{path} scrolls sideways at 360 px: {width} px wide")
            problems += [f"{path}: {v}" for v in axe_serious(phone)]
        context.close()
    assert problems == [], "\n".join(problems)
    # The refusals above answer 422 (the submit) and 403 (the links), which the browser logs;
    # anything else (a script error, a CSP violation, a missing file) fails the test.
    expected = ("status of 422", "status of 403")
    assert [e for e in errors if not any(code in e for code in expected)] == []
