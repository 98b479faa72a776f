"""In a browser: a figure the SLO card cannot read is said at its field once the field is
left, in the server's words (and told to a screen reader then), and the field is marked
invalid; fixed, the message goes."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from practice.slo import parse_number
from tests.conftest import save_screenshot

pytestmark = pytest.mark.browser


def field_label(page) -> str:
    return " ".join(page.locator("label[for=card-ttft_p99_ms]").inner_text().split())


def test_a_bad_figure_is_said_at_the_field_and_goes_once_fixed(open_step):
    page, attempt = open_step("clarify")
    field = page.locator("#card-ttft_p99_ms")
    message = page.locator("#card-ttft_p99_ms-error")
    expect(message).to_be_hidden()
    with pytest.raises(ValueError) as refused:
        parse_number("fast", "ms")
    field.fill("fast")
    page.locator("#card-tpot_p99_ms").focus()  # leave the field
    expect(message).to_have_text(str(refused.value))
    expect(message).to_be_visible()
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_attribute("aria-describedby", "card-ttft_p99_ms-error")
    expect(field).to_have_value("fast")  # the text stays as typed
    # Heard once the field is left, in one live region: its label and the same sentence.
    said = page.locator("#card-said")
    expect(said).to_have_text(f"{field_label(page)}: {refused.value}")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    assert attempt.answers.get(step_key="clarify").fields["ttft_p99_ms"] == "fast"
    for width in (360, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        save_screenshot(page, f"slo-card-figure-not-read-{width}")

    field.fill("300 ms")
    page.locator("#card-tpot_p99_ms").focus()
    expect(message).to_be_hidden()
    expect(field).not_to_have_attribute("aria-invalid", "true")
    expect(field).not_to_have_attribute("aria-describedby", "card-ttft_p99_ms-error")


def test_a_sentence_the_page_came_with_is_not_said_again(open_step):
    # Reloaded with a bad figure saved, the page shows its sentence; the next save (typing
    # elsewhere) is no news about the card, and a screen reader is not interrupted with it.
    page, attempt = open_step("clarify")
    page.locator("#card-ttft_p99_ms").fill("fast")
    page.locator("#card-tpot_p99_ms").focus()
    expect(page.locator("#card-ttft_p99_ms-error")).to_be_visible()
    page.reload()
    expect(page.locator("#card-ttft_p99_ms-error")).to_be_visible()
    with page.expect_response("**/draft/"):
        page.locator("#answer-text").fill("Pin the model and the SLOs first.")
    page.wait_for_timeout(300)
    expect(page.locator("#card-said")).to_have_text("")
