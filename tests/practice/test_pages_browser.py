"""What a person sees: home page -> a question -> a step -> a concept, in light and dark."""

import pytest

from tests.conftest import save_screenshot

# These pages only read the shipped content: one database's run checks them.
pytestmark = [pytest.mark.browser, pytest.mark.one_database]


def test_home_to_question_to_concept(page, live_server_bank_url):
    from questions.models import Question

    page.goto(live_server_bank_url + "/")
    assert page.title().startswith("Design questions")
    cards = page.locator(".question-card")
    # One card per published question, however large the bank has grown.
    assert cards.count() == Question.objects.filter(current_revision__isnull=False).count() >= 3
    for slug in ("chat-api-50qps", "multi-tenant-lora", "long-context-rag"):
        assert page.locator(f'a[href="/questions/{slug}/"]').is_visible()
    save_screenshot(page, "home-light")

    page.locator('a[href="/questions/chat-api-50qps/"]').click()
    page.wait_for_url("**/questions/chat-api-50qps/")
    brief = page.locator(".brief")
    assert "50 QPS" in brief.inner_text()
    assert "300 ms" in brief.inner_text()
    steps = page.locator(".step-card")
    assert steps.count() == 5
    save_screenshot(page, "question-light")

    # Every step links to its concepts; follow the first concept of the first step with one.
    page.locator(".step-card .concept-links a").first.click()
    page.wait_for_url("**/concepts/**")
    assert page.locator("article h1").is_visible()
    assert page.locator("nav[aria-label=Breadcrumb] a", has_text="Concepts").is_visible()
    assert page.js_errors == []


def test_question_page_in_dark_mode(dark_page, live_server_bank_url):
    dark_page.goto(live_server_bank_url + "/questions/long-context-rag/")
    background = dark_page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(15, 19, 32)"
    save_screenshot(dark_page, "question-dark")
    dark_page.goto(live_server_bank_url + "/")
    save_screenshot(dark_page, "home-dark")
    assert dark_page.js_errors == []


def test_keyboard_focus_is_visible_and_skip_link_works(page, live_server_url):
    page.goto(live_server_url + "/")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent.trim()")
    assert focused == "Skip to content"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
