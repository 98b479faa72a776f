"""A Submit refused for SLO card figures it cannot read moves the focus to the first of them,
whose message says why, and the refusal beside Submit names them all; on a 360 px phone."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
SUBMIT = "**/steps/clarify/submit/"


def test_the_refused_submit_focuses_the_first_figure_not_read(open_step):
    page, attempt = open_step("clarify")
    page.set_viewport_size({"width": 360, "height": 740})
    page.locator("#card-peak_qps").fill("50")
    page.locator("#card-ttft_p99_ms").fill("abc")
    page.locator("#card-tpot_p99_ms").fill("1e9999")
    with page.expect_response(SUBMIT) as refused:
        page.get_by_role("button", name="Submit this step").click()
    assert refused.value.status == 422
    told = page.locator("#submit-refused [role=alert]")
    expect(told).to_contain_text("cannot read p99 TTFT, p99 TPOT")
    field = page.locator("#card-ttft_p99_ms")
    expect(field).to_be_focused()
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#card-ttft_p99_ms-error")).to_be_visible()
    # Nothing lost: the boxes and the saved draft hold what was typed; nothing is submitted.
    expect(field).to_have_value("abc")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    answer = attempt.answers.get(step_key="clarify")
    assert answer.fields["tpot_p99_ms"] == "1e9999"
    assert answer.submissions.count() == 0

    # Mended, the Submit goes through and the refusal goes.
    field.fill("300 ms")
    page.locator("#card-tpot_p99_ms").fill("40")
    with page.expect_response(SUBMIT) as taken:
        page.get_by_role("button", name="Submit this step").click()
    assert taken.value.status == 200
    expect(page.locator("#feedback")).to_be_visible()
    expect(told).to_have_count(0)
    assert answer.submissions.count() == 1
