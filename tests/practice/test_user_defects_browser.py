"""What a new candidate met on the practice pages: a planner link that gave the napkin answers
away, a follow-up list that went stale after a submit, pages wider than a phone, and a
scorecard that named worksheet lines without their values."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import extensions
from practice import services as flow
from tests.conftest import save_screenshot, signed_in_context, watched_page

pytestmark = [pytest.mark.browser]

SLUG = "chat-api-50qps"
PREFILLED_PLANNER = f'a[href*="/planner/capacity/"][href*="question={SLUG}"]'
WORKSHEET = (
    "W = 15.2 GB\n"
    "kv = 2 * 28 * 4 * 128 * 2 B\n"
    "t = W / (0.7 * 1008 GB/s) in ms\n"
    "r = T_out / out_len\n"
    "n = ceil(qps_peak / (rho * r))"
)
PHONES = (360, 390)


def _candidate(username: str):
    from questions.models import Question

    user = User.objects.create_user(username, password="a-long-Passphrase-42")
    revision = Question.objects.get(slug=SLUG).current_revision
    return user, flow.attempt_start(user=user, revision=revision)


def _submit(attempt, step: str, text: str, follow_up: str = "", fields=None, grade=False):
    answer = flow.answer_open(attempt=attempt, step_key=step, follow_up_id=follow_up)
    outcome = flow.step_submit(answer=answer, text=text, fields=fields or {}, base_version=0)
    if grade:
        # Graded with no model, then self-checked (every point "partly"): a scored part.
        from practice.models import Submission
        from practice.self_check import self_check_save

        flow.submission_grade(submission_id=outcome.submission.pk)
        submission = Submission.objects.get(pk=outcome.submission.pk)
        spec = flow.step_spec(attempt.revision, step, follow_up)
        flagged = submission.grades.get(grader="rubric").misconceptions
        self_check_save(
            submission=submission,
            ratings={p.id: "partly" for p in spec.rubric},
            wrong_ideas={m["id"]: "dismissed" for m in flagged},
            base_version=0,
        )
    return outcome.submission


def _ready(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("html[data-ready]", state="attached")


# Boxes whose content must fit inside them: a worksheet row and its formula and value, the
# question's call to action, a card, the scorecard's table (which must not hide a column).
FITTED = ".ws-line, .ws-math, .ws-value, .cta, .card, .scorecard-table"


def _too_wide(page, width: int, what: str) -> list[str]:
    """Whether the page scrolls sideways, and every box of FITTED whose content is cut or
    spills over its edge."""
    problems = []
    scroll = page.evaluate("document.documentElement.scrollWidth")
    if scroll > width:
        problems.append(f"{what} at {width} px is {scroll} px wide")
    clipped = page.evaluate(
        """(selector) => Array.from(document.querySelectorAll(selector))
             .filter((el) => el.scrollWidth > el.clientWidth + 1)
             .map((el) => `${el.className} (${el.scrollWidth} > ${el.clientWidth} px): `
                          + el.textContent.trim().replace(/\\s+/g, " ").slice(0, 60))""",
        FITTED,
    )
    problems += [f"{what} at {width} px clips {c}" for c in clipped]
    return problems


def test_the_prefilled_capacity_planner_is_offered_only_after_the_estimate_is_submitted(
    browser, live_server_url
):
    user, attempt = _candidate("planner-peek")
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, user)
    page = watched_page(context, errors)
    try:
        _ready(page, f"{live_server_url}/attempts/{attempt.pk}/steps/estimate/")
        assert page.locator(PREFILLED_PLANNER).count() == 0
        page.locator("#worksheet").fill("W = 15.2 GB")
        page.locator("#answer-text").fill("Weights 15.2 GB; the TPOT floor clears 50 ms.")
        page.locator("#submit-button").click()
        page.locator("#feedback").wait_for()
        # Offered with the submission, without a reload, and on the page from then on.
        page.locator(PREFILLED_PLANNER).first.wait_for()
        _ready(page, page.url)
        assert page.locator(PREFILLED_PLANNER).count() >= 1
        assert errors == []
    finally:
        context.close()


@pytest.mark.django_db
def test_a_running_mock_interview_never_offers_the_prefilled_planner(
    client, content_loaded, monkeypatch
):
    user, attempt = _candidate("mock-peek")
    client.force_login(user)
    monkeypatch.setattr(extensions, "feedback_withheld", lambda attempt_id: True)
    url = reverse("attempt_step", kwargs={"attempt_id": attempt.pk, "step": "estimate"})
    assert f"question={SLUG}" not in client.get(url).content.decode()
    _submit(attempt, "estimate", "Weights 15.2 GB.", fields={"worksheet": "W = 15.2 GB"})
    assert f"question={SLUG}" not in client.get(url).content.decode()


def test_a_follow_up_submit_opens_the_next_one_as_the_next_action(browser, live_server_url):
    user, attempt = _candidate("follow-through")
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, user)
    page = watched_page(context, errors)
    follow_ups = page.locator(".follow-up-states")
    finish = page.get_by_role("button", name="Finish and see the scorecard")
    try:
        _ready(page, f"{live_server_url}/attempts/{attempt.pk}/steps/tradeoffs/")
        page.locator("#answer-text").fill("AWQ trades a little quality for VRAM.")
        page.locator("#submit-button").click()
        page.locator("#feedback").wait_for()
        # The main answer is in: follow-up 1 is the primary next action, Finish is not.
        page.locator(".follow-up-states a.button:not(.button-secondary)").wait_for()
        assert "Follow-up 1" in follow_ups.locator("a.button").inner_text()
        assert "button-secondary" in (finish.get_attribute("class") or "")

        follow_ups.locator("a.button").click()
        page.wait_for_url("**/follow-ups/**")
        page.wait_for_selector("html[data-ready]", state="attached")
        page.locator("#answer-text").fill("At 500 QPS, about a hundred instances: cost rules.")
        page.locator("#submit-button").click()
        page.locator("#feedback").wait_for()
        # Without a reload: follow-up 2 is open and is the next action.
        nxt = follow_ups.locator("a.button:not(.button-secondary)", has_text="Follow-up 2")
        nxt.wait_for()
        assert "Follow-up 2 (locked)" not in follow_ups.inner_text()
        assert "answered" in follow_ups.locator("li").first.inner_text().lower()
        assert "button-secondary" in (finish.get_attribute("class") or "")
        save_screenshot(page, "follow-up-next-action")
        assert errors == []
    finally:
        context.close()


def test_the_question_and_the_estimate_step_fit_a_phone(browser, live_server_url):
    user, attempt = _candidate("phone-estimate")
    # A returning candidate: the question page lists each attempt beside its start button.
    for _ in range(3):
        flow.attempt_start(user=user, revision=attempt.revision)
    problems: list[str] = []
    errors: list[str] = []
    for width in PHONES:
        context = signed_in_context(
            browser, live_server_url, user, viewport={"width": width, "height": 800}
        )
        page = watched_page(context, errors)
        try:
            _ready(page, f"{live_server_url}/questions/{SLUG}/")
            problems += _too_wide(page, width, "the question page")
            _ready(page, f"{live_server_url}/attempts/{attempt.pk}/steps/estimate/")
            page.locator("#worksheet").fill(WORKSHEET)
            page.locator("#worksheet-lines .ws-line").nth(4).wait_for()
            problems += _too_wide(page, width, "the estimate step")
            save_screenshot(page, f"estimate-phone-{width}")
        finally:
            context.close()
    assert problems == [], "\n".join(problems)
    assert errors == []


def test_the_scorecard_shows_napkin_values_and_how_parts_combine_and_fits_a_phone(
    browser, live_server_url
):
    user, attempt = _candidate("phone-scorecard")
    follow_up = attempt.revision.question_spec.step("tradeoffs").follow_ups[0].id
    fields = {"worksheet": WORKSHEET, "answers": {"tpot_floor": "t", "kv_per_token": "kv"}}
    _submit(attempt, "estimate", "The floor is 21.5 ms.", fields=fields, grade=True)
    _submit(
        attempt,
        "tradeoffs",
        "Prefix-aware routing trades even load for cache hits; AWQ trades a little quality "
        "for VRAM and a lower TPOT floor.",
        grade=True,
    )
    _submit(attempt, "tradeoffs", "More GPUs.", follow_up=follow_up, grade=True)
    problems: list[str] = []
    for width in (*PHONES, 1280):
        context = signed_in_context(
            browser, live_server_url, user, viewport={"width": width, "height": 800}
        )
        page = watched_page(context, [])
        try:
            _ready(page, f"{live_server_url}/attempts/{attempt.pk}/scorecard/")
            if width in PHONES:
                problems += _too_wide(page, width, "the scorecard")
                continue
            napkin = page.locator("section[aria-labelledby=napkin-h]").inner_text()
            assert "21.54 ms" in napkin and "56 KiB" in napkin, napkin
            tradeoffs = page.locator(".scorecard-table tr", has_text="Trade-offs").inner_text()
            assert "main answer" in tradeoffs and "follow-up 1" in tradeoffs, tradeoffs
            assert "mean" in tradeoffs.lower(), tradeoffs
            save_screenshot(page, "scorecard-parts")
        finally:
            context.close()
    assert problems == [], "\n".join(problems)
