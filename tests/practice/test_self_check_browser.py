"""The self-check in a real browser, with no model: no score until every point is rated, the
ratings saved as they are chosen (a reload loses nothing), the score they make on the
scorecard labelled "Self-checked"; once with the mouse on a desktop, once on a 360 px phone by
keyboard alone. The grading runs in this process (the function the task runs) instead of a
worker, which the practice-flow tests already cover."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from questionbank import load_question_spec
from tests.conftest import signed_in_context, watched_page

pytestmark = pytest.mark.browser

ARCH = load_question_spec("chat-api-50qps").step("architecture")
WEIGHTS = {p.id: p.weight for p in ARCH.rubric}
CREDIT = {"covered": 1.0, "partly": 0.5, "not": 0.0}
WRONG = "The autoscaler adds a replica whenever average GPU utilization goes above 80 percent."
ANSWER = (
    "Clients reach an API gateway that terminates TLS and applies per-key rate limits. " + WRONG
)
IDEA = "GPU utilisation is the signal to autoscale on."


def expected_percent(ratings: dict[str, str], held_to_partly: tuple[str, ...] = ()) -> str:
    """The score the ratings make, worked out from the rubric's weights: a point a confirmed
    wrong idea contradicts counts at most partly."""
    earned = sum(
        WEIGHTS[p] * min(CREDIT[r], 0.5 if p in held_to_partly else 1.0) for p, r in ratings.items()
    )
    return f"{round(100 * earned / sum(WEIGHTS.values()))}%"


def grade_in_process(attempt) -> None:
    from practice import services as flow
    from practice.models import Submission

    submission = Submission.objects.get(answer__attempt=attempt)
    flow.submission_grade(submission_id=submission.pk)


def saved(page, attempt, ratings: dict[str, str], timeout_s: float = 10) -> None:
    """Wait until the page has no autosave in flight and the server holds these ratings: a
    reload before the last autosave landed would load a page one version behind, which the
    version guard then rightly refuses."""
    from practice.models import SelfCheck

    expect(page.locator("#self-check-form")).not_to_have_class(re.compile("htmx-request"))
    deadline = time.monotonic() + timeout_s
    row = None
    while time.monotonic() < deadline:
        row = SelfCheck.objects.filter(submission__answer__attempt=attempt).first()
        if row is not None and row.ratings == ratings:
            return
        time.sleep(0.05)
    raise AssertionError(f"the ratings saved are {row.ratings if row else None}, not {ratings}")


RATINGS = dict(
    zip(
        WEIGHTS,
        ("covered", "partly", "not", "covered", "partly", "covered", "not", "covered"),
        strict=True,
    )
)
LABELS = {"covered": "Covered", "partly": "Partly", "not": "Not covered"}


def test_no_score_until_rated_then_the_ratings_score_the_step(step_page, live_server_url):
    page, attempt = step_page
    page.locator("#answer-text").fill(ANSWER)
    page.locator("#submit-button").click()
    page.locator("#feedback").wait_for()
    grade_in_process(attempt)

    form = page.locator("#self-check-form")
    form.wait_for()  # the panel polls until grading is done
    feedback = page.locator("#feedback")
    expect(feedback.locator(".score-line")).to_contain_text("Not scored yet")
    expect(feedback.locator(".score")).to_have_count(0)
    expect(feedback.locator(".verdict-tag")).to_have_count(0)  # no hit / miss from the matcher
    expect(feedback.locator("details.reference")).to_have_attribute("open", "")
    # The matcher points at the candidate's sentence; it does not decide.
    gateway = form.locator("#point-arch-gateway")
    expect(gateway.locator(".point-quote")).to_contain_text(
        "Where the keyword matcher points (it may cover this): "
    )
    # The possible wrong idea, asked first, with the sentence and why it breaks.
    idea = form.locator("#idea-a1-autoscale-gpu-util")
    expect(idea.locator("legend")).to_contain_text(f"This sentence may say: {IDEA}")
    expect(idea.locator("mark.mark-wrong")).to_have_text(WRONG)
    expect(idea.locator(".wrong-idea-why")).to_contain_text("vllm:num_requests_waiting")

    idea.get_by_label("Yes, I meant that").check()
    points = list(RATINGS.items())
    for point_id, rating in points[:3]:
        form.locator(f"#point-{point_id}").get_by_label(LABELS[rating], exact=True).check()
    status = page.locator("#self-check-status")
    expect(status).to_contain_text("4 of 9 rated")
    expect(feedback.locator(".score")).to_have_count(0)
    saved(page, attempt, dict(points[:3]))

    page.reload()  # in the middle of rating: nothing is lost
    expect(page.locator("#idea-a1-autoscale-gpu-util-confirmed")).to_be_checked()
    for point_id, rating in points[:3]:
        expect(page.locator(f"#rating-{point_id}-{rating}")).to_be_checked()
    for point_id, rating in points[3:]:
        page.locator(f"#point-{point_id}").get_by_label(LABELS[rating], exact=True).check()
    expected = expected_percent(RATINGS, held_to_partly=("arch-autoscale-queue",))
    expect(status).to_contain_text(f"Self-checked: {expected}")
    expect(page.locator("#score-line .score")).to_have_text(expected)
    expect(page.locator("#score-line")).to_contain_text("Self-checked")

    page.goto(f"{live_server_url}/attempts/{attempt.pk}/scorecard/")
    row = page.locator(".scorecard-table tr", has_text="Architecture")
    expect(row.locator(".step-score")).to_have_text(expected)
    expect(row).to_contain_text("Self-checked")
    wrong = page.locator("section", has=page.get_by_role("heading", name="Wrong ideas in"))
    expect(wrong).to_contain_text(IDEA)  # the one the candidate confirmed


PHONE_ANSWER = "An API gateway terminates TLS. Ten vLLM replicas sit behind a router."
PHONE_RATINGS = dict(
    zip(
        WEIGHTS,
        ("covered", "covered", "partly", "not", "partly", "covered", "not", "partly"),
        strict=True,
    )
)


def test_a_phone_by_keyboard_alone_rates_and_reloads_without_losing_a_rating(
    browser, live_server_url
):
    from django.contrib.auth.models import User

    from practice import services as flow
    from questions.models import Question

    user = User.objects.create_user("thumbs", password="a-long-Passphrase-42")
    attempt = flow.attempt_start(
        user=user, revision=Question.objects.get(slug="chat-api-50qps").current_revision
    )
    context = signed_in_context(
        browser, live_server_url, user, viewport={"width": 360, "height": 740}, has_touch=True
    )
    errors: list[str] = []
    page = watched_page(context, errors)
    step = f"{live_server_url}/attempts/{attempt.pk}/steps/architecture/"

    def tab_to(predicate_js: str, limit: int = 150) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            script = f"(() => {{ const el = document.activeElement; return {predicate_js}; }})()"
            if page.evaluate(script):
                return
        raise AssertionError(f"could not reach {predicate_js} with Tab")

    def rate(point_id: str, rating: str) -> None:
        tab_to(f"el.name === 'rating-{point_id}'")
        assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
        page.keyboard.press("Space")  # the group's first choice: covered
        for _ in range(list(LABELS).index(rating)):
            page.keyboard.press("ArrowRight")  # partly, then not covered

    try:
        page.goto(step)
        tab_to("el.id === 'answer-text'")
        page.keyboard.type(PHONE_ANSWER)
        tab_to("el.id === 'submit-button'")
        page.keyboard.press("Enter")
        page.locator("#feedback").wait_for()
        grade_in_process(attempt)
        page.locator("#self-check-form").wait_for()
        expect(page.locator("#feedback .score")).to_have_count(0)

        points = list(PHONE_RATINGS.items())
        for point_id, rating in points[:4]:
            rate(point_id, rating)
        status = page.locator("#self-check-status")
        expect(status).to_contain_text("4 of 8 rated")
        expect(page.locator("#feedback .score")).to_have_count(0)
        saved(page, attempt, dict(points[:4]))

        page.reload()
        page.locator("#self-check-form").wait_for()
        for point_id, rating in points[:4]:
            expect(page.locator(f"#rating-{point_id}-{rating}")).to_be_checked()
        for point_id, rating in points[4:]:
            rate(point_id, rating)
        expected = expected_percent(PHONE_RATINGS)
        expect(status).to_contain_text(f"Self-checked: {expected}")
        expect(page.locator("#score-line .score")).to_have_text(expected)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 360, f"the step page is {wide} px wide on a 360 px phone"

        page.goto(f"{live_server_url}/attempts/{attempt.pk}/scorecard/")
        row = page.locator(".scorecard-table tr", has_text="Architecture")
        expect(row.locator(".step-score")).to_have_text(expected)
        expect(row).to_contain_text("Self-checked")
    finally:
        context.close()
    assert errors == []
