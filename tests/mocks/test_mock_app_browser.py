"""The app as interviewer, in a real browser on a live server: after a written step is
graded, the candidate's panel shows the app's follow-up aimed at the weakest rubric point
(the probe as written, offline); the next step's submit is refused until it is answered; the
answer is graded against that point and the report's transcript shows both.

Grading runs in the test thread (`submission_grade`, what the worker would run).
"""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks.models import MockSession
from mocks.report import NO_SELF_CHECK
from practice.models import Submission
from tests.conftest import signed_in_context, watched_page
from tests.mocks.test_mock_app_interviewer import EXPECTED_POINT, SEEDED_ARCHITECTURE
from tests.mocks.test_mock_browser import grade_what_is_queued

pytestmark = pytest.mark.browser


def test_the_app_asks_its_follow_up_on_the_weakest_point_and_grades_the_answer(
    browser, live_server_url, settings
):
    settings.MOCK_POLL_SECONDS = 0.3
    base = live_server_url
    candidate = User.objects.create(username="candidate")
    errors: list[str] = []
    context = signed_in_context(browser, base, candidate)
    page = watched_page(context, errors)

    page.goto(f"{base}/questions/chat-api-50qps/")
    page.get_by_label("with the app as interviewer").check()
    page.get_by_role("button", name="Start a mock interview").click()
    page.wait_for_url("**/mock/*/")
    session = MockSession.objects.get()
    assert session.mode == "app"
    expect(page.locator("main")).not_to_contain_text("invite")

    page.goto(f"{base}/attempts/{session.attempt_id}/steps/architecture/")
    page.locator("#answer-text").fill(SEEDED_ARCHITECTURE)
    page.locator("#submit-button").click()
    expect(page.locator("#submit-result, #feedback").first).to_be_visible()
    grade_what_is_queued()

    # The panel's next poll brings the app's probe, as written in the question file.
    probe = next(
        p.probe
        for p in session.attempt.revision.question_spec.step("architecture").rubric
        if p.id == EXPECTED_POINT
    )
    panel = page.locator("#mock-panel")
    expect(panel).to_contain_text("The app asks (Architecture")
    expect(panel).to_contain_text(probe)

    # Moving on is refused until it is answered.
    page.goto(f"{base}/attempts/{session.attempt_id}/steps/bottlenecks/")
    page.locator("#answer-text").fill("The queue grows past the knee.")
    page.locator("#submit-button").click()
    refused = page.locator("#submit-refused")
    expect(refused).to_contain_text("Answer the interviewer's follow-up")
    # Told beside the button pressed, not below the load-test panel past the screen's edge.
    expect(refused).to_be_in_viewport()
    page.get_by_label("Your answer to the follow-up").fill(
        "We enable prefix caching so the shared system prompt is prefilled once per replica "
        "and reused, which cuts TTFT."
    )
    page.get_by_role("button", name="Submit the follow-up answer").click()
    expect(panel).to_contain_text("You answered the follow-up")
    grade_what_is_queued()
    reply = Submission.objects.get(answer__follow_up_id=f"mock:probe-{EXPECTED_POINT}")
    grade = reply.grades.get(grader="rubric")
    assert [(p["id"], p["verdict"]) for p in grade.points] == [(EXPECTED_POINT, "hit")]

    # Now the step goes in; the session ends; the transcript shows the probe and its grade.
    page.locator("#submit-button").click()
    expect(page.locator("#feedback")).to_be_visible()
    page.goto(f"{base}/mock/{session.pk}/")
    page.get_by_role("link", name="End the session now").click()
    page.get_by_label("Yes, end the session now").check()
    page.get_by_role("button", name="End the session").click()
    page.wait_for_url(f"**/mock/{session.pk}/report/")
    main = page.locator("main")
    expect(main).to_contain_text("The app asked (Architecture) (aimed at: Turns on --enable-prefix")
    # Offline the matcher's verdict is no grade, and a probe asked in the session has no
    # self-check to wait for: the transcript says so rather than promise one.
    expect(main).to_contain_text(f"({NO_SELF_CHECK})")
    # No person interviewed, so communication is marked, not invented.
    expect(main.locator("tr", has_text="Communication")).to_contain_text("not scored")
    context.close()
    # The refused submit answers 422, which the browser logs; nothing else may.
    assert [e for e in errors if "status of 422" not in e] == []
