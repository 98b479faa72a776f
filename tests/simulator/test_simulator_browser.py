"""A candidate load-tests their design from the bottlenecks step in a real browser: writes a
prediction, runs "kill a replica", sees the verdict and the charts; the run is saved with the
answer and shown in that answer's feedback once it is submitted."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.conftest import save_screenshot, scrolls_with_a_hint, signed_in_context, watched_page

pytestmark = pytest.mark.browser

PREDICTION = (
    "One replica down at 50 QPS: nine run at 72% of their knee, p99 TTFT stays under 300 ms."
)


def _bottlenecks_step(browser, live_server_url, username: str):
    """(page, its script and console errors, the attempt): a new candidate's bottlenecks step
    of chat-api-50qps, open, their napkin-math and architecture steps submitted (the panel
    then offers the reference design's fleet and router)."""
    from practice import services as flow
    from questions.models import Question
    from tests.simulator.bank import open_reference

    user = User.objects.create_user(username, password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    open_reference(attempt)
    context = signed_in_context(browser, live_server_url, user)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/bottlenecks/")
    return page, errors, attempt


def test_the_panel_comes_after_the_question_and_the_answer_box(browser, live_server_url):
    """Below the step's heading, its prompt and the answer box, set apart from them, at a
    phone's width and a desktop's: the prediction is asked once the question has been read."""
    page, errors, _ = _bottlenecks_step(browser, live_server_url, "placed")
    panel = page.locator("#simulator-panel")
    expect(panel.locator("#sim-form")).to_be_visible()

    for width in (360, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        top = panel.bounding_box()["y"]
        for above in ("#step-heading", ".prompt", "#answer-text", "#submit-button"):
            box = page.locator(above).bounding_box()
            assert box["y"] + box["height"] <= top, f"{above} at {width} px"
        # Spaced from the Submit row above it, not touching it.
        actions = page.locator("#submit-button").bounding_box()
        assert top - (actions["y"] + actions["height"]) >= 16, f"gap at {width} px"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        save_screenshot(page, f"simulator-panel-placement-{width}")
    assert errors == []
    page.context.close()


def test_kill_a_replica_from_the_bottlenecks_step(browser, live_server_url):
    from practice import services as flow
    from practice.models import Submission
    from simulator.models import SimulationRun

    page, errors, attempt = _bottlenecks_step(browser, live_server_url, "loadtester")

    panel = page.locator("#simulator-panel")
    expect(panel.locator("#sim-replicas")).to_have_value("10")
    # No prediction, no run: the form says so and nothing is sent.
    panel.get_by_role("button", name="Kill a replica").click()
    expect(panel.locator(".sim-verdict")).to_have_count(0)
    panel.locator("#sim-prediction").fill(PREDICTION)
    # A double-click runs (and saves) it once.
    panel.get_by_role("button", name="Kill a replica").dblclick()

    verdict = panel.locator(".sim-verdict")
    expect(verdict).to_contain_text("a replica killed at 60 s")
    expect(panel.locator(".sim-prediction")).to_have_text(PREDICTION)
    expect(panel.locator("svg.pl-svg")).to_have_count(4)
    expect(panel.locator("svg.pl-svg").first).to_be_visible()
    saved = SimulationRun.objects.get()
    assert saved.prediction == PREDICTION and saved.answer.step_key == "bottlenecks"
    expect(verdict).to_have_text(saved.runs[0]["verdict"])
    save_screenshot(page, "simulator-kill-a-replica")
    # On a phone the run's label stays readable and the table scrolls rather than being cut.
    page.set_viewport_size({"width": 360, "height": 800})
    table = panel.locator(".sim-result table")
    assert table.locator("th[scope=row]").first.bounding_box()["width"] >= 100
    fits_or_scrolls = table.evaluate(
        "t => t.getBoundingClientRect().right <= window.innerWidth"
        " || getComputedStyle(t.parentElement).overflowX === 'auto'"
    )
    assert fits_or_scrolls
    save_screenshot(page, "simulator-kill-a-replica-360")
    page.set_viewport_size({"width": 1280, "height": 800})

    page.locator("#answer-text").fill("The queue is the first wall; one dead replica of ten.")
    page.locator("#submit-button").click()
    page.locator("#feedback").wait_for()
    flow.submission_grade(submission_id=Submission.objects.get(answer=saved.answer).pk)
    report = page.locator("#sim-feedback")
    expect(report).to_be_visible(timeout=20_000)  # the feedback panel polls until graded
    expect(report.locator(".sim-prediction")).to_have_text(PREDICTION)
    expect(report.locator(".sim-verdict")).to_have_text(saved.runs[0]["verdict"])
    expect(report.locator("svg.pl-svg").first).to_be_visible()

    # And on the attempt's scorecard: the prediction beside what the simulator found.
    page.goto(f"{live_server_url}/attempts/{attempt.pk}/scorecard/")
    on_card = page.locator("#sim-scorecard")
    expect(on_card).to_contain_text(PREDICTION)
    expect(on_card.locator(".sim-verdict")).to_have_text(saved.runs[0]["verdict"])

    # From the keyboard: Enter on a scenario runs it, and focus lands on what it found. The
    # panel was swapped out under the focused button, and focus fell to the page's top.
    page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/bottlenecks/")
    panel.locator("#sim-prediction").fill(PREDICTION)
    panel.get_by_role("button", name="Peak load").focus()
    page.keyboard.press("Enter")
    expect(panel.locator(".sim-result h3")).to_contain_text("Peak load")
    expect(panel.locator(".sim-result h3")).to_be_focused()
    assert errors == []
    # A refused run (422, which the browser logs) puts focus on why.
    panel.locator("#sim-prediction").fill(PREDICTION)
    page.evaluate("document.getElementById('sim-qps').removeAttribute('min')")
    panel.locator("#sim-qps").fill("0.0001")
    panel.get_by_role("button", name="Peak load").focus()
    page.keyboard.press("Enter")
    expect(panel.locator("#sim-error")).to_be_focused()
    expect(panel.locator("#sim-error")).to_contain_text("The load (QPS) must be between")
    assert len(errors) == 1 and "status of 422" in errors[0]
    page.context.close()


def test_the_runs_table_scrolls_on_a_phone_in_a_named_box_with_a_hint(browser, live_server_url):
    page, errors, _ = _bottlenecks_step(browser, live_server_url, "scroller")
    panel = page.locator("#simulator-panel")
    panel.locator("#sim-prediction").fill(PREDICTION)
    panel.get_by_role("button", name="Peak load").click()
    expect(panel.locator(".sim-result h3")).to_contain_text("Peak load")

    page.set_viewport_size({"width": 360, "height": 800})
    box = panel.get_by_role("region", name="The run's figures (scrollable)")
    expect(box).to_have_count(1)
    scrolls_with_a_hint(box)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    box.scroll_into_view_if_needed()
    save_screenshot(page, "simulator-result-scroll-hint-360")
    page.set_viewport_size({"width": 1280, "height": 800})
    save_screenshot(page, "simulator-result-scroll-hint-1280")
    assert errors == []
    page.context.close()
