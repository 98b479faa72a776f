"""The napkin-math step in a browser without JavaScript: a Check keeps everything typed, and the
help line says how the answer is saved there (with JavaScript, that drafts save as you type)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice import services as flow
from tests.conftest import signed_in_context

pytestmark = [pytest.mark.browser]

WORKSHEET = "r = T_out / out_len\nt = 15.2 GB / (0.7 * 1008 GB/s) in ms"
NOTES = "The knee throughput is measured, so the fleet size follows from it."


@pytest.fixture
def estimate_page_without_js(browser, live_server_url):
    """A signed-in candidate's napkin-math step in a context with JavaScript off:
    (page, attempt)."""
    from questions.models import Question

    user = User.objects.create_user("nojs-check", password="a-long-Passphrase-42")
    attempt = flow.attempt_start(
        user=user, revision=Question.objects.get(slug="chat-api-50qps").current_revision
    )
    context = signed_in_context(browser, live_server_url, user, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/estimate/")
    yield page, attempt
    context.close()


def test_a_check_without_javascript_keeps_everything_typed(estimate_page_without_js):
    page, attempt = estimate_page_without_js
    page.locator("#worksheet").fill(WORKSHEET)
    page.locator("#q-r_inst").fill("r")
    page.locator("#q-tpot_floor").fill("t")  # typed, never checked
    page.locator("#answer-text").fill(NOTES)
    check = page.get_by_role(
        "button", name="Check Requests per second one instance sustains at its knee"
    )
    with page.expect_navigation():
        check.click()
    assert page.url.endswith("/steps/estimate/#check-r_inst")
    assert "Correct" in page.locator("#check-r_inst .verdict").inner_text()
    assert page.locator("#worksheet").input_value() == WORKSHEET
    assert page.locator("#q-r_inst").input_value() == "r"
    assert page.locator("#q-tpot_floor").input_value() == "t"
    assert page.locator("#answer-text").input_value() == NOTES
    answer = attempt.answers.get(step_key="estimate")
    assert answer.text == NOTES
    assert answer.fields["worksheet"].replace("\r\n", "\n") == WORKSHEET  # a form posts CRLF
    assert not answer.submissions.exists()


def test_enter_in_a_box_without_javascript_checks_and_keeps_everything_typed(
    estimate_page_without_js,
):
    page, attempt = estimate_page_without_js
    page.locator("#worksheet").fill(WORKSHEET)
    page.locator("#answer-text").fill(NOTES)
    page.locator("#q-r_inst").fill("r")
    with page.expect_navigation():
        page.locator("#q-r_inst").press("Enter")
    assert "Correct" in page.locator("#check-r_inst .verdict").inner_text()
    assert page.locator("#worksheet").input_value() == WORKSHEET
    assert page.locator("#answer-text").input_value() == NOTES
    assert not attempt.answers.get(step_key="estimate").submissions.exists()


def test_a_check_refused_as_stale_without_javascript_keeps_everything_typed(
    estimate_page_without_js,
):
    page, attempt = estimate_page_without_js
    page.locator("#worksheet").fill(WORKSHEET)
    page.locator("#q-r_inst").fill("r")
    page.locator("#q-tpot_floor").fill("t")
    page.locator("#answer-text").fill(NOTES)
    # Meanwhile another tab saves the draft, so this page's version is stale.
    answer = attempt.answers.get(step_key="estimate")
    flow.draft_save(answer=answer, text="From the other tab.", fields={}, base_version=0)
    check = page.get_by_role(
        "button", name="Check Requests per second one instance sustains at its knee"
    )
    with page.expect_navigation():
        check.click()
    assert "changed in another tab" in page.locator(".message-error[role=alert]").inner_text()
    assert page.locator("#worksheet").input_value().replace("\r\n", "\n") == WORKSHEET
    assert page.locator("#q-r_inst").input_value() == "r"
    assert page.locator("#q-tpot_floor").input_value() == "t"
    assert page.locator("#answer-text").input_value() == NOTES
    assert page.locator("#base-version").input_value() == "0"  # still the stale version
    answer.refresh_from_db()
    assert answer.text == "From the other tab." and answer.version == 1
    assert "checks" not in answer.fields


def test_without_javascript_the_help_says_the_answer_saves_on_submit(estimate_page_without_js):
    page, _attempt = estimate_page_without_js
    help_line = page.locator("#answer-help").inner_text()
    assert "Drafts save as you type" not in help_line
    assert "saved when you check a number or submit the step" in help_line


def test_with_javascript_the_help_says_drafts_save_as_you_type(step_page):
    page, _attempt = step_page
    help_line = page.locator("#answer-help").inner_text()
    assert "Drafts save as you type" in help_line
    assert "saved when you" not in help_line
