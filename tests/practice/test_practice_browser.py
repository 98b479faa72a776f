"""The practice flow in a real browser, graded by a real task worker."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from tests.conftest import save_screenshot
from tests.practice.conftest import check_quantity

# The end-to-end and keyboard journeys start a worker on DATABASE_URL's database, so CI runs
# them on each; the other journeys check what the page does on a reload or Enter, which no
# database changes (`one_database`).
pytestmark = [pytest.mark.browser, pytest.mark.processes]
ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a-long-Passphrase-42"
# The signup URL carries ?next=/questions/..., so match the path itself, not a glob.
QUESTION_PAGE = re.compile(r"^http://[^/]+/questions/chat-api-50qps/$")

ARCHITECTURE = (
    "Clients reach an API gateway that terminates TLS, authenticates and rate-limits, then a "
    "prefix-aware router that sends requests sharing the system prompt to the replica already "
    "holding its KV cache. Behind it run ten vLLM replicas of Qwen2.5-7B-AWQ with "
    "--enable-prefix-caching and --gpu-memory-utilization 0.90, each exposing /metrics and "
    "/health. We autoscale on the summed queue depth, vllm:num_requests_waiting, not on GPU "
    "utilisation, and drain a replica before scaling it down."
)
BOTTLENECKS = (
    "The first wall is the queue: past 50 QPS num_requests_waiting climbs and p99 TTFT breaks "
    "the SLO, and the fix is more replicas. If a replica dies, its load moves to the other nine "
    "and pushes them past the knee, so we keep one or two spare replicas as headroom. A cold "
    "start takes tens of seconds to load weights, so we scale on queue depth early and pre-warm. "
    "A bad deploy is rolled out one replica at a time behind the router with /health gating."
)
FOLLOW_UP = (
    "At 500 QPS the same fleet math gives about a hundred instances, so cost dominates: AWQ "
    "weights and FP8 KV raise r_inst per GPU, and autoscaling must work across regions."
)


@pytest.fixture
def task_worker(live_server_url):
    """A real `db_worker` process on the test database, so submissions really get graded."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        url = f"sqlite:///{db['NAME']}"
    else:
        host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
        url = f"postgres://{db['USER']}@{host}:{port}/{db['NAME']}"
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_BASE_URL",)}
    env.update({"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings"})
    proc = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "db_worker",
            "--queue-name",
            "*",
            "--interval",
            "0.2",
            "--no-reload",
            "--no-startup-delay",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    yield proc
    proc.terminate()
    proc.wait(timeout=20)


def sign_up(page, base, username):
    page.goto(base + "/accounts/signup/?next=/questions/chat-api-50qps/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    page.wait_for_url(QUESTION_PAGE)


def wait_graded(page):
    page.locator("#feedback .grade-status.status-done").wait_for(timeout=60_000)


def submit_and_wait(page):
    page.locator("#submit-button").click()
    wait_graded(page)


def test_a_new_candidate_completes_a_question_end_to_end(page, live_server_url, task_worker):
    base = live_server_url
    sign_up(page, base, "newcandidate")
    page.get_by_role("button", name="Start practising").click()
    page.wait_for_url("**/steps/clarify/")

    # 1. Clarify: the SLO card, then the feedback against the brief.
    page.get_by_label("Model").fill("Qwen2.5-7B-Instruct")
    page.get_by_label("Context length").fill("8192")
    page.get_by_label("Peak load").fill("50")
    page.get_by_label("peak", exact=True).check()
    page.get_by_label("p99 TTFT").fill("300")
    page.get_by_label("p99 TPOT").fill("50")
    page.get_by_label("Input length").fill("512")
    page.get_by_label("Output length").fill("256")
    page.get_by_label("Tenancy").fill("single")
    page.locator("#answer-text").fill(
        "We size for the 50 QPS peak, not the daily mean. Chat traffic shares one system "
        "prompt across users, and the service is cost-sensitive, so cost per request matters."
    )
    submit_and_wait(page)
    feedback = page.locator("#feedback")
    assert "Pinned: Peak load" in feedback.inner_text()
    # No model: the candidate self-checks each point; the matcher only points at sentences.
    assert feedback.locator(".self-check-item").count() >= 3
    assert "Not scored yet" in feedback.inner_text()
    assert feedback.locator("mark").count() >= 1
    save_screenshot(page, "flow-1-clarify")

    # 2. Napkin math: the worksheet, correct numbers, and one GB-vs-GiB slip with its hint.
    page.get_by_role("link", name="Napkin math →").click()
    page.wait_for_url("**/steps/estimate/")
    page.locator("#worksheet").fill(
        "tpot = W / (eta * bw) in ms\nr = T_out / out_len\nn = ceil(qps_peak / (rho * r))"
    )
    page.locator("#worksheet-lines .ws-line").nth(2).wait_for()
    assert "21.5" in page.locator("#worksheet-lines").inner_text()
    slip = check_quantity(page, "tpot_floor", "15.2 GiB / (0.7 * 1008 GB/s)")
    assert "GiB" in slip.inner_text()
    assert "Correct" not in slip.inner_text()
    assert "Correct" in check_quantity(page, "tpot_floor", "tpot").inner_text()
    assert "Correct" in check_quantity(page, "r_inst", "r").inner_text()
    assert "Correct" in check_quantity(page, "n_inst", "n").inner_text()
    page.locator("#answer-text").fill(
        "The TPOT floor of about 21.5 ms clears the 50 ms SLO. Each replica does about 7.8 "
        "req/s at the knee, so ten instances cover the 50 QPS peak at rho 0.7."
    )
    submit_and_wait(page)
    numbers = page.locator("#feedback .napkin-review").inner_text()
    assert "expected 21.54 ms" in numbers
    assert numbers.count(": Correct") >= 3
    save_screenshot(page, "flow-2-estimate")

    # 3 and 4. Free-text steps.
    page.get_by_role("link", name="Architecture →").click()
    page.locator("#answer-text").fill(ARCHITECTURE)
    assert "words" in page.locator("#word-count").inner_text()
    submit_and_wait(page)
    assert page.locator("#feedback .self-check-item .point-quote").count() >= 3
    save_screenshot(page, "flow-3-architecture")

    page.get_by_role("link", name="Bottlenecks and failure modes →").click()
    page.locator("#answer-text").fill(BOTTLENECKS)
    submit_and_wait(page)
    assert page.locator("#feedback .self-check-item .point-quote").count() >= 2
    save_screenshot(page, "flow-4-bottlenecks")

    # 5. Trade-offs, then the first follow-up, graded on its own.
    page.get_by_role("link", name="Trade-offs and follow-ups →").click()
    page.locator("#answer-text").fill(
        "Prefix-aware routing trades even load for cache hits; AWQ trades a little quality for "
        "VRAM and a lower TPOT floor. Default to vLLM; switch when a constraint demands it."
    )
    submit_and_wait(page)
    page.get_by_role("link", name="Follow-up 1").click()
    page.wait_for_url("**/follow-ups/fu-traffic-10x/")
    page.locator("#answer-text").fill(FOLLOW_UP)
    submit_and_wait(page)
    assert page.locator("#feedback .self-check-item").count() >= 2
    save_screenshot(page, "flow-5-follow-up")

    page.get_by_role("button", name="Finish and see the scorecard").click()
    page.wait_for_url("**/scorecard/")
    card = page.locator("main").inner_text()
    for needle in (
        "Per step",
        "Strongest points",
        "Weakest points",
        "Napkin math",
        "Who graded what",
        "Not scored yet — rate your answer",
    ):
        assert needle in card, needle
    save_screenshot(page, "flow-6-scorecard")
    assert page.js_errors == []


@pytest.mark.one_database
def test_reload_keeps_the_draft_and_a_second_tab_does_not_overwrite(browser, page, live_server_url):
    base = live_server_url
    sign_up(page, base, "twotabs")
    page.get_by_role("button", name="Start practising").click()
    page.wait_for_url("**/steps/clarify/")
    url = page.url.replace("/clarify/", "/architecture/")
    page.goto(url)
    page.locator("#answer-text").fill("My first thoughts on the router.")
    # "Draft saved at" is the autosave's answer; a page loaded with a saved draft already says
    # "Draft saved." and would not wait for anything.
    page.locator("#save-status", has_text="Draft saved at").wait_for()
    page.reload()
    assert page.locator("#answer-text").input_value() == "My first thoughts on the router."

    second = page.context.new_page()
    second.goto(url)
    second.locator("#answer-text").fill("Second tab rewrites everything.")
    second.locator("#save-status", has_text="Draft saved at").wait_for()

    # The first tab still holds the older version; its next save is refused, not applied.
    page.locator("#answer-text").fill("First tab keeps typing.")
    conflict = page.locator("#save-status.is-conflict")
    conflict.wait_for()
    assert "another tab" in conflict.inner_text()
    assert page.locator("#answer-text").input_value() == "First tab keeps typing."
    save_screenshot(page, "flow-conflict")
    second.reload()
    assert second.locator("#answer-text").input_value() == "Second tab rewrites everything."
    # The browser kept the first tab's unsaved text and offers it back after a reload.
    page.reload()
    page.get_by_role("button", name="Restore it").wait_for()
    page.get_by_role("button", name="Restore it").click()
    assert page.locator("#answer-text").input_value() == "First tab keeps typing."


def test_the_flow_works_with_the_keyboard_only(page, live_server_url, task_worker):
    base = live_server_url
    page.goto(base + "/accounts/signup/?next=/questions/chat-api-50qps/")
    page.keyboard.press("Tab")  # skip link
    page.locator("#id_username").focus()
    page.keyboard.type("keyboarder")
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(QUESTION_PAGE)

    def tab_to(predicate_js: str, limit: int = 80) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            script = f"(() => {{ const el = document.activeElement; return {predicate_js}; }})()"
            if page.evaluate(script):
                return
        raise AssertionError(f"could not reach {predicate_js} with Tab")

    tab_to("el.textContent.trim() === 'Start practising'")
    page.keyboard.press("Enter")
    page.wait_for_url("**/steps/clarify/")
    for step_name in ("architecture", "bottlenecks"):
        tab_to(f"el.tagName === 'A' && el.getAttribute('href').endsWith('/steps/{step_name}/')")
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/steps/{step_name}/")
        tab_to("el.id === 'answer-text'")
        page.keyboard.type(ARCHITECTURE if step_name == "architecture" else BOTTLENECKS)
        tab_to("el.id === 'submit-button'")
        page.keyboard.press("Enter")
        wait_graded(page)
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none" or page.evaluate("document.activeElement === document.body")
    # Ctrl+Enter submits from inside the answer, too.
    page.locator("#answer-text").focus()
    page.keyboard.type(" One more sentence about cold starts and pre-warming replicas.")
    page.keyboard.press("Control+Enter")
    page.locator("#feedback-heading", has_text="submission 2").wait_for()
    tab_to("el.textContent.trim().startsWith('Trade-offs and follow-ups')")
    page.keyboard.press("Enter")
    page.wait_for_url("**/steps/tradeoffs/")
    tab_to("el.textContent.trim() === 'Finish and see the scorecard'")
    page.keyboard.press("Enter")
    # Three steps are not submitted: Finish names them and asks first.
    page.get_by_role("heading", name="Finish with 3 steps not submitted?").wait_for()
    assert "Napkin math" in page.locator(".finish-missing").inner_text()
    tab_to("el.textContent.trim() === 'Finish anyway and see the scorecard'")
    page.keyboard.press("Enter")
    page.wait_for_url("**/scorecard/")
    assert "Bottlenecks and failure modes" in page.locator("main").inner_text()
    save_screenshot(page, "flow-keyboard-scorecard")


@pytest.mark.one_database
def test_enter_in_a_check_box_checks_that_quantity_and_never_submits(page, live_server_url):
    from practice.models import Submission

    sign_up(page, live_server_url, "enterkey")
    page.get_by_role("button", name="Start practising").click()
    page.wait_for_url("**/steps/clarify/")
    page.goto(page.url.replace("/clarify/", "/estimate/"))
    page.locator("#worksheet").fill("r = T_out / out_len")
    page.locator("#worksheet-lines .ws-line").first.wait_for()
    page.locator("#q-r_inst").fill("r")
    page.locator("#q-r_inst").press("Enter")
    # Whichever answers first: the check's verdict, or (the defect) the step's feedback.
    page.locator("#check-r_inst .verdict, #feedback").first.wait_for()
    assert page.locator("#feedback").count() == 0
    assert not Submission.objects.exists()
    assert "Correct" in page.locator("#check-r_inst .verdict").inner_text()
    # Named after its quantity, not just "Check" (six of those on one page).
    check = page.get_by_role(
        "button", name="Check Requests per second one instance sustains at its knee"
    )
    assert check.count() == 1


@pytest.mark.one_database
def test_a_submit_marks_the_step_done_in_the_progress_bar_without_a_reload(page, live_server_url):
    sign_up(page, live_server_url, "progress")
    page.get_by_role("button", name="Start practising").click()
    page.wait_for_url("**/steps/clarify/")
    page.goto(page.url.replace("/clarify/", "/architecture/"))
    assert "0 of 5 steps submitted" in page.locator("#progress").inner_text()
    page.locator("#answer-text").fill(ARCHITECTURE)
    page.locator("#submit-button").click()
    page.locator("#feedback").wait_for()
    progress = page.locator("#progress")
    assert "1 of 5 steps submitted" in progress.inner_text()
    assert progress.locator("li.done .step-num").inner_text() == "✓"
    assert progress.locator("li.done").get_by_text("Architecture").count() == 1
    assert page.js_errors == []


@pytest.mark.one_database
def test_enter_in_a_check_box_checks_without_javascript_too(browser, live_server_url):
    from practice.models import StepAnswer, Submission

    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        sign_up(page, live_server_url, "nojs")
        page.get_by_role("button", name="Start practising").click()
        page.wait_for_url("**/steps/clarify/")
        page.goto(page.url.replace("/clarify/", "/estimate/"))
        page.locator("#q-r_inst").fill("T_out / out_len")
        with page.expect_navigation():
            page.locator("#q-r_inst").press("Enter")
        assert page.url.endswith("/steps/estimate/#check-r_inst")
        assert "Correct" in page.locator("#check-r_inst .verdict").inner_text()
        assert not Submission.objects.exists()
        checks = StepAnswer.objects.get(step_key="estimate").fields["checks"]
        assert checks["r_inst"]["verdict"] == "correct"
    finally:
        context.close()
