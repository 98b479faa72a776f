"""Finding a question in a real browser, and one new question of the bank walked end to end.

(a) A candidate filters the home page by a topic (htmx swaps the list and puts the filter in
the address bar) and finds the question, on a desktop and on a 360 px phone without sideways
scrolling. (b) The same candidate opens a new question from the home page, starts it, answers
the five steps, checks a napkin quantity with the worksheet's Check button (marked correct) and
reaches the scorecard. Grading runs in this process (the worker's own function; the worker
itself is covered by the practice-flow tests). No script error or CSP violation on any page."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from questionbank import load_question_spec
from tests.conftest import save_screenshot, signed_in_context, timers_held, watched_page
from tests.practice.conftest import check_quantity

pytestmark = pytest.mark.browser

NEW_QUESTION = "spec-decoding-assistant"
SPEC = load_question_spec(NEW_QUESTION)
TOPIC = SPEC.tags[0]
ANSWERS = {
    "clarify": "Pin the model, the context length, peak and mean load and the p99 SLOs first: "
    "we size for the peak, and the SLO decides how hard each request may be batched.",
    "architecture": "A gateway with auth and rate limits, a router that keeps requests sharing a "
    "prefix on the replica that holds it, and vLLM replicas behind it, scaled on queue depth.",
    "bottlenecks": "Past the knee the queue grows and p99 latency breaks; a dead replica moves "
    "its load to the rest, so we keep headroom; a cold start takes tens of seconds.",
    "tradeoffs": "FP8 weights or KV buy memory for a small quality cost we evaluate first; "
    "routing for cache hits trades against even load.",
}


def ready(page) -> None:
    """The page has loaded and no htmx request is in flight (static/js/ready.js)."""
    page.locator("html[data-ready]").wait_for(state="attached")


def cards_for_topic(topic: str, q: str = "", sort: str | None = None) -> int | list[str]:
    """How many cards a visitor sees for this topic and search; with `sort`, their titles in
    that order."""
    from practice.bank import BankFilters, question_bank

    visitor = User(username="visitor")  # unsaved: no statuses, no queries for them
    filters = BankFilters(topic=topic, q=q, sort=sort or "")
    entries = question_bank(user=visitor, filters=filters).entries
    return len(entries) if sort is None else [e.revision.title for e in entries]


@pytest.fixture
def candidate(live_server_bank_url):
    return User.objects.create_user("bank-walker", password="a-long-Passphrase-42")


@pytest.mark.parametrize(
    "viewport", [{"width": 1280, "height": 900}, {"width": 360, "height": 740}]
)
def test_filter_by_topic_finds_the_question(browser, live_server_bank_url, candidate, viewport):
    errors: list[str] = []
    context = signed_in_context(browser, live_server_bank_url, candidate, viewport=viewport)
    page = watched_page(context, errors)
    page.goto(live_server_bank_url + "/")
    ready(page)
    total = page.locator(".question-card").count()
    assert total == cards_for_topic("")  # every published question, unfiltered
    page.get_by_label("Topic", exact=True).select_option(TOPIC)
    page.wait_for_url(re.compile(rf"[?&]topic={re.escape(TOPIC)}(&|$)"))
    cards = page.locator(".question-card")
    expect(cards).to_have_count(cards_for_topic(TOPIC))
    expect(page.locator(f'.question-card a[href="/questions/{NEW_QUESTION}/"]')).to_be_visible()
    expect(page.locator("#bank-count")).to_contain_text(f"of {total} question")
    expect(page.locator(f'[data-slug="{NEW_QUESTION}"] .bank-status')).to_have_text("Not started")
    # The address bar now holds a link to share: loaded afresh, it shows the same list.
    page.reload()
    ready(page)
    expect(page.get_by_label("Topic", exact=True)).to_have_value(TOPIC)
    expect(cards).to_have_count(cards_for_topic(TOPIC))
    # Keyboard order follows the form: the search, then each filter.
    page.get_by_label("Search").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "bank-topic"
    if viewport["width"] == 360:
        wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert wide <= 0, f"the page scrolls sideways by {wide} px"
        save_screenshot(page, "bank-topic-phone")
    else:
        save_screenshot(page, "bank-topic-desktop")
        # Typing searches as you go; no match says so and offers the way back.
        page.get_by_label("Search").fill("zzzz-no-such-question")
        expect(page.locator(".bank-empty")).to_contain_text("No question matches")
        page.get_by_role("link", name="Clear the filters").click()
        page.wait_for_url(live_server_bank_url + "/")
        expect(cards).to_have_count(total)
        # Back after a search and a filter: the box says what the list is filtered by.
        page.get_by_label("Search").fill("kv")
        page.wait_for_url(re.compile(r"[?&]q=kv(&|$)"))
        ready(page)
        page.get_by_label("Topic", exact=True).select_option(TOPIC)
        page.wait_for_url(re.compile(rf"[?&]topic={re.escape(TOPIC)}(&|$)"))
        ready(page)
        page.go_back()
        page.wait_for_url(lambda url: "q=kv" in url and f"topic={TOPIC}" not in url)
        ready(page)
        expect(page.get_by_label("Search")).to_have_value("kv")
        expect(cards).to_have_count(cards_for_topic("", q="kv"))
        # Choosing an order lists the same questions in it, the search kept.
        page.get_by_label("Sort").select_option("hardest")
        page.wait_for_url(re.compile(r"[?&]sort=hardest(&|$)"))
        ready(page)
        expect(cards).to_have_count(cards_for_topic("", q="kv"))
        hardest = cards_for_topic("", q="kv", sort="hardest")
        assert cards.locator("h3 a").all_inner_texts() == hardest
        assert hardest != cards_for_topic("", q="kv", sort="title")
    context.close()
    assert errors == []


def test_the_filters_work_without_javascript(browser, live_server_bank_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server_bank_url + "/")
    page.get_by_label("Topic", exact=True).select_option(TOPIC)
    page.get_by_role("button", name="Show questions").click()
    page.wait_for_url(re.compile(rf"[?&]topic={re.escape(TOPIC)}(&|$)"))
    expect(page.locator(".question-card")).to_have_count(cards_for_topic(TOPIC))
    context.close()


def submit_and_grade(page, user) -> None:
    """Submit the step, grade it in this process (the function the worker's task runs; no
    model here, so the candidate's self-check is what would score it) and wait until the
    feedback stops polling: leaving a page mid-poll aborts a request, which htmx logs."""
    from practice import services as flow
    from practice.models import Submission

    page.locator("#submit-button").click()
    page.locator("#feedback .grade-status").wait_for()
    for submission in Submission.objects.filter(
        answer__attempt__user=user, grade_status=Submission.GradeStatus.QUEUED
    ):
        flow.submission_grade(submission_id=submission.pk)
    page.locator("#feedback:not([hx-get])").wait_for()
    ready(page)


def test_a_candidate_walks_a_new_question_from_the_home_page(
    browser, live_server_bank_url, candidate
):
    errors: list[str] = []
    context = signed_in_context(browser, live_server_bank_url, candidate)
    page = watched_page(context, errors)
    page.goto(live_server_bank_url + "/")
    ready(page)
    page.get_by_label("Search").fill(SPEC.title)
    page.get_by_label("Search").press("Enter")
    page.wait_for_url("**q=**")
    expect(page.locator(".question-card")).to_have_count(1)
    page.get_by_role("link", name=SPEC.title).click()
    page.wait_for_url(f"**/questions/{NEW_QUESTION}/")
    page.get_by_role("button", name="Start practising").click()
    page.wait_for_url("**/steps/clarify/")

    page.locator("#answer-text").fill(ANSWERS["clarify"])
    submit_and_grade(page, candidate)

    page.get_by_role("link", name="Napkin math →").click()
    page.wait_for_url("**/steps/estimate/")
    ready(page)
    # The instructor's own formula over the givens (the givens are names in every box).
    first = SPEC.step("estimate").quantities[0]
    assert "Correct" in check_quantity(page, first.id, first.formula).inner_text()
    page.locator("#answer-text").fill(f"{first.label}: {first.formula}.")
    submit_and_grade(page, candidate)

    for key, link in [
        ("architecture", "Architecture →"),
        ("bottlenecks", "Bottlenecks and failure modes →"),
        ("tradeoffs", "Trade-offs and follow-ups →"),
    ]:
        page.get_by_role("link", name=link).click()
        page.wait_for_url(f"**/steps/{key}/")
        ready(page)
        page.locator("#answer-text").fill(ANSWERS[key])
        submit_and_grade(page, candidate)

    page.get_by_role("button", name="Finish and see the scorecard").click()
    page.wait_for_url("**/scorecard/")
    card = page.locator("main").inner_text()
    assert SPEC.title in card and "Per step" in card
    assert f"{first.label}: Correct" in card  # the napkin check the candidate made
    save_screenshot(page, "bank-walk-scorecard")

    page.goto(live_server_bank_url + "/")
    ready(page)
    # Finished, and not scored until the candidate self-checks (no model here).
    expect(page.locator(f'[data-slug="{NEW_QUESTION}"] .bank-status')).to_have_text(
        "Attempted · not scored yet"
    )
    context.close()
    assert errors == []


def test_arrow_keys_through_a_filter_make_one_request_and_one_step_back(
    browser, live_server_bank_url, candidate
):
    # A closed select fires a change at each arrow key: a keyboard user passing topics on
    # the way to theirs asks for the list once, and Back goes to where they started.
    context = signed_in_context(browser, live_server_bank_url, candidate)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(live_server_bank_url + "/")
    ready(page)
    lists = []
    page.on("request", lambda r: lists.append(r.url) if "topic=" in r.url else None)
    steps = page.evaluate("history.length")
    topic = page.get_by_label("Topic", exact=True)
    topic.focus()
    with timers_held(page):  # the filter's 400 ms wait cannot run out between two keys
        for _ in range(3):
            page.keyboard.press("ArrowDown")
        chosen = topic.input_value()
    page.wait_for_url(re.compile(rf"[?&]topic={re.escape(chosen)}(&|$)"))
    ready(page)
    assert len(lists) == 1, lists
    assert page.evaluate("history.length") == steps + 1
    context.close()
    assert errors == []
