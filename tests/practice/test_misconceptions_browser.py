"""A wrong idea, named and explained first in the feedback and again on the scorecard.
One browser walk; the grading runs in this process (the same
function the task runs) instead of a worker, which the practice-flow tests already cover."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WRONG = "The autoscaler adds a replica whenever average GPU utilization goes above 80 percent."
ANSWER = (
    "Clients reach an API gateway that terminates TLS and applies per-key rate limits. " + WRONG
)
IDEA = "GPU utilisation is the signal to autoscale on."


def test_a_wrong_idea_is_named_and_explained_first_then_listed_on_the_scorecard(
    step_page, live_server_url
):
    from practice import services as flow
    from practice.models import Submission

    page, attempt = step_page
    page.locator("#answer-text").fill(ANSWER)
    page.locator("#submit-button").click()
    page.locator("#feedback").wait_for()
    submission = Submission.objects.get(answer__attempt=attempt)
    flow.submission_grade(submission_id=submission.pk)

    wrong = page.locator("#feedback .wrong-ideas")
    wrong.wait_for()  # the panel polls until the grade is stored
    expect(wrong.locator(".wrong-idea-name")).to_contain_text(IDEA)
    expect(wrong.locator("mark.mark-wrong")).to_have_text(WRONG)
    expect(wrong.locator(".wrong-idea-why")).to_contain_text("vllm:num_requests_waiting")
    expect(wrong.get_by_role("link", name=re.compile("queue depth", re.I))).to_be_visible()
    # First: before the rubric points, and the candidate's sentence is marked in the answer too.
    first = page.evaluate(
        """() => {
          const wrong = document.querySelector('#feedback .wrong-ideas');
          const points = document.querySelector('#feedback .rubric-points');
          return !!(wrong.compareDocumentPosition(points) & Node.DOCUMENT_POSITION_FOLLOWING);
        }"""
    )
    assert first
    expect(page.locator("#feedback .answer-text mark.mark-wrong")).to_have_count(1)
    expect(page.locator("#feedback .offline-limits")).to_contain_text("matches wording")

    page.goto(f"{live_server_url}/attempts/{attempt.pk}/scorecard/")
    listed = page.locator(
        "section", has=page.get_by_role("heading", name="Wrong ideas in your answers")
    )
    expect(listed).to_contain_text(IDEA)
    expect(listed.locator("mark.mark-wrong")).to_contain_text("average GPU utilization")
