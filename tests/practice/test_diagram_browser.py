"""The diagram box in a real browser, under the site's strict Content-Security-Policy: a
candidate types a diagram in the architecture step (and inserts a component from the
palette), sees it laid out with their labels, sees a syntax error pointed at while the last
good picture stays, submits, and the self-check (no model here) points at the edges that
cover the diagram's rubric point, marked in the picture. On a 360 px phone the picture
scrolls inside its box and nothing else pushes the page sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from questionbank import load_question_spec
from tests.conftest import (
    ARTIFACTS,
    save_screenshot,
    scrolls_with_a_hint,
    signed_in_context,
    watched_page,
)

pytestmark = pytest.mark.browser

ARCH = load_question_spec("chat-api-50qps").step("architecture")
DIAGRAM = """flowchart LR
    client[Clients] --> gw[API gateway]
    gw --> router[Router: prefix-aware]
    router --> vllm[vLLM replicas x10]
"""


def _path_point():
    """The architecture step's rubric point shown by a path through the diagram: gateway,
    then router, then the vLLM replicas."""
    for point in ARCH.rubric:
        rule = point.diagram
        if rule is not None and rule.path and len(rule.path) >= 3:
            return point
    raise AssertionError("the shipped question has no diagram path rule on architecture")


def test_a_candidate_draws_submits_and_the_self_check_points_at_the_path(browser, live_server_url):
    from django.contrib.auth.models import User

    from practice import services as flow
    from practice.models import StepAnswer, Submission
    from questions.models import Question

    user = User.objects.create_user("drawer", password="a-long-Passphrase-42")
    attempt = flow.attempt_start(
        user=user, revision=Question.objects.get(slug="chat-api-50qps").current_revision
    )
    context = signed_in_context(browser, live_server_url, user)
    errors: list[str] = []
    page = watched_page(context, errors)
    try:
        page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/architecture/")
        box = page.locator("#diagram-text")
        picture = page.locator("#diagram-picture")

        # Nothing drawn yet: an error says where, and speaks of no earlier picture.
        box.fill("flowchart LR\n    as -.-> pool\n    a -->\n")
        expect(page.locator("#diagram-error")).to_contain_text("Line 3, column")
        expect(page.locator("#diagram-error")).not_to_contain_text("picture")
        expect(picture).to_contain_text("Your diagram is drawn here.")

        # Typed, then laid out on the server with the candidate's own labels.
        box.fill(DIAGRAM)
        expect(picture.locator("svg")).to_be_visible()
        for label in ("API gateway", "Router: prefix-aware", "vLLM replicas x10"):
            expect(picture.locator("svg text", has_text=label)).to_have_count(1)

        # The palette inserts a component as a line at the cursor, and it is drawn too.
        box.press("End")
        page.get_by_role("button", name="+ Autoscaler").click()
        expect(box).to_have_value(DIAGRAM + "    autoscaler[Autoscaler: signal]\n")
        expect(picture.locator("svg text", has_text="Autoscaler: signal")).to_have_count(1)

        # A syntax error says where, and the last good picture stays.
        box.fill(DIAGRAM + "    vllm -->\n")
        expect(page.locator("#diagram-error")).to_contain_text("Line 5, column")
        expect(page.locator("#diagram-error")).to_contain_text(
            "The picture shows your last diagram that worked."
        )
        expect(picture.locator("svg text", has_text="Autoscaler: signal")).to_have_count(1)
        box.fill(DIAGRAM)
        expect(page.locator("#diagram-error")).to_be_empty()
        expect(picture.locator("svg text", has_text="Autoscaler")).to_have_count(0)

        page.locator("#answer-text").fill("Clients reach an API gateway, then a router.")
        page.locator("#submit-button").click()
        page.locator("#feedback").wait_for()
        submission = Submission.objects.get(answer__attempt=attempt)
        assert submission.fields == {"diagram": DIAGRAM}
        assert StepAnswer.objects.get(attempt=attempt, step_key="architecture").fields == {
            "diagram": DIAGRAM
        }
        flow.submission_grade(submission_id=submission.pk)  # the task's work, in process

        # No model: the self-check, whose pointer for the path point is the diagram's edges.
        point = _path_point()
        pointer = page.locator(f"#point-{point.id} .point-diagram")
        expect(pointer).to_contain_text("in your diagram (it may cover this)")
        expect(pointer).to_contain_text("API gateway -> Router: prefix-aware")
        expect(pointer).to_contain_text("Router: prefix-aware -> vLLM replicas x10")
        # ...and the picture of the submitted diagram marks those edges.
        figure = page.locator("#feedback .diagram-figure").first
        expect(figure.locator("svg")).to_be_visible()
        assert figure.locator("g.edge.is-evidence").count() >= 2
        save_screenshot(page, "diagram-desktop")
        page.locator("#diagram-box").screenshot(path=ARTIFACTS / "diagram-box.png")
        figure.screenshot(path=ARTIFACTS / "diagram-feedback.png")
        page.locator(f"#point-{point.id}").screenshot(path=ARTIFACTS / "diagram-point.png")

        # On a phone: the page does not scroll sideways; the picture scrolls in its box.
        page.set_viewport_size({"width": 360, "height": 740})
        page.reload()
        page.locator("#diagram-picture svg").wait_for()
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 360, f"the step page is {wide} px wide on a 360 px phone"
        scrolls = page.evaluate(
            "(() => { const box = document.getElementById('diagram-picture');"
            " return [box.scrollWidth, box.clientWidth]; })()"
        )
        assert scrolls[0] > scrolls[1], f"the picture does not scroll inside its box: {scrolls}"
        # ... and its edge with more beyond it is shaded, as every sideways-scroll box is.
        scrolls_with_a_hint(page.locator("#diagram-picture"))
        save_screenshot(page, "diagram-phone")
        page.locator("#diagram-box").screenshot(path=ARTIFACTS / "diagram-box-phone.png")
        assert errors == [], errors
    finally:
        context.close()
