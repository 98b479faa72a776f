"""A submit refused by the rate limit is told next to the answer, and the text survives.

The refusal is produced for real: the live server runs in this process, so the `settings`
fixture's low GRADING_RATE_PER_MINUTE is the limit it enforces.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_a_rate_limited_submit_is_told_beside_the_answer_and_the_text_kept(
    one_rate_window, step_page, settings
):
    settings.GRADING_RATE_PER_MINUTE = 1
    page, attempt = step_page
    page.locator("#answer-text").fill("A gateway, a router and ten replicas.")
    page.get_by_role("button", name="Submit this step").click()
    expect(page.locator("#feedback")).to_be_visible()

    text = "A gateway, a router and twelve replicas behind a prefix-aware router."
    page.locator("#answer-text").fill(text)
    with page.expect_response("**/steps/architecture/submit/") as refused:
        page.get_by_role("button", name="Submit this step").click()
    assert refused.value.status == 429
    alert = page.locator("#submit-refused [role=alert]")
    expect(alert).to_contain_text("faster than 1 submissions a minute")
    # The draft was saved before the limit was checked, and the status says so truthfully.
    expect(page.locator("#save-status")).to_contain_text("Draft saved at")
    assert page.locator("#answer-text").input_value() == text
    assert attempt.answers.get(step_key="architecture").text == text
    assert attempt.answers.get(step_key="architecture").submissions.count() == 1
