"""The planner pages in a real Chromium: typing updates a line, errors show inline, the
capacity planner renders its derivation and charts. Screenshots land in tests/artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import save_screenshot

# The planner reads published content only; its pages are the same on either database.
pytestmark = [pytest.mark.browser, pytest.mark.one_database]


def test_typing_a_line_updates_its_value(page, live_server_url) -> None:
    page.goto(f"{live_server_url}/planner/")
    # The example worksheet is evaluated server-side on first load.
    assert page.locator("#ws-line-4 .pl-value").inner_text() == "= 21.54 ms"
    page.fill("#id_lines", "")
    page.locator("#id_lines").press_sequentially(
        "W = 15.2 GB\nbw = 0.7 * 1008 GB/s\nW / bw in ms", delay=5
    )
    # Each pause re-evaluates; the last one shows the finished line.
    expect(page.locator("#ws-line-3 .pl-value")).to_have_text("= 21.54 ms", timeout=15_000)
    assert page.locator("#ws-line-3 math").count() == 1
    # Change one figure: the line follows.
    page.fill("#id_lines", "W = 5.5 GB\nbw = 0.7 * 1008 GB/s\nW / bw in ms")
    expect(page.locator("#ws-line-3 .pl-value")).to_have_text("= 7.795 ms", timeout=15_000)
    save_screenshot(page, "planner-worksheet")
    assert page.js_errors == []


def test_an_error_shows_inline_at_its_line(page, live_server_url) -> None:
    page.goto(f"{live_server_url}/planner/")
    page.fill("#id_lines", "a = 2 GB\nb = a + 3 ms\nc = a * 2")
    error = page.locator("#ws-line-2.pl-error")
    expect(error).to_be_visible(timeout=15_000)
    assert "Cannot add bytes and time" in error.locator(".pl-message").inner_text()
    assert error.locator(".pl-source").inner_text().splitlines()[1] == "      ^"
    assert page.locator("#ws-line-3 .pl-value").inner_text() == "= 4 GB"
    # A screen reader hears a count, not every line again: the results are no live region.
    expect(page.locator("#ws-announce")).to_have_text(
        "2 values worked out; 1 line with an error, the first line 2."
    )
    assert page.locator("#ws-results").get_attribute("aria-live") is None
    assert page.locator("[aria-live], [role=status]").evaluate_all(
        "els => els.every(e => !e.querySelector('math, ol'))"
    )
    save_screenshot(page, "planner-worksheet-error")
    assert page.js_errors == []


def test_worksheet_works_without_javascript(browser, live_server_url) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server_url}/planner/")
    page.fill("#id_lines", "50 QPS * 2 s in req")
    page.click("button[type=submit]")
    page.wait_for_url("**/planner/evaluate/")
    assert page.locator("#ws-line-1 .pl-value").inner_text() == "= 100 req"
    context.close()


def test_capacity_planner_renders_derivation_and_charts(page, live_server_url) -> None:
    page.goto(f"{live_server_url}/planner/capacity/")
    assert page.locator("#plan-n-gpu").inner_text() == "10"
    steps = page.locator("#plan-steps tbody tr")
    assert steps.count() == 39
    # Streams hold the brief's 512 + 256 tokens in flight, not the whole 8k context.
    assert "321" in page.locator("#step-N_seq").inner_text()
    assert page.locator("#step-kappa math").count() == 2
    assert page.locator("svg.pl-svg").count() == 3
    assert page.locator("svg.pl-svg path.pl-series").count() == 2
    assert page.locator("svg.pl-svg path.pl-bound").count() == 2
    assert "the ttft bound binds" in page.locator("#bound-r-inst").inner_text()
    assert "derived" in page.locator("#plan-binding").inner_text()
    save_screenshot(page, "planner-capacity")
    # Doubling the peak QPS re-plans in place (htmx) and pushes the URL.
    page.fill("#id_qps", "100")
    page.locator("#id_qps").dispatch_event("change")
    expect(page.locator("#plan-n-gpu")).to_have_text("19", timeout=15_000)
    assert "qps=100" in page.url
    assert page.js_errors == []


def test_capacity_planner_derivation_reads_on_a_phone(page, live_server_url) -> None:
    """At 360 px each derivation row keeps its label readable and the table scrolls in its
    own box; the page itself does not scroll sideways."""
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server_url}/planner/capacity/")
    labels = page.locator("#plan-steps tbody th[scope=row]")
    widths = labels.evaluate_all("cells => cells.map(c => c.getBoundingClientRect().width)")
    assert len(widths) == 39 and min(widths) >= 100, widths
    wrap = page.locator("#plan-steps").locator("xpath=..")
    assert wrap.evaluate("w => getComputedStyle(w).overflowX") == "auto"
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    save_screenshot(page, "planner-capacity-360")
    assert page.js_errors == []


def test_capacity_planner_long_context(page, live_server_url) -> None:
    page.goto(
        f"{live_server_url}/planner/capacity/?model=qwen2.5-7b-instruct&gpu=rtx-4090"
        "&weights=awq-int4&kv=bf16&context=131072&mem_util=0.9&bw_eff=0.7&tp=1"
        "&knee_tok_s=2000&out_len=256&qps=50&rho=0.7&tpot_slo_ms=50&overhead_gib=1.5"
    )
    assert "7 GiB" in page.locator("#step-kv_stream").inner_text()
    save_screenshot(page, "planner-capacity-128k")
    assert page.js_errors == []


def test_capacity_planner_shows_the_memory_bound_binding_for_long_context_rag(
    page, live_server_url
) -> None:
    page.goto(
        f"{live_server_url}/planner/capacity/?model=qwen2.5-7b-instruct&gpu=rtx-4090"
        "&weights=awq-int4&kv=fp8&context=32768&mem_util=0.9&bw_eff=0.7&tp=1"
        "&knee_tok_s=2000&out_len=128&qps=10&rho=0.7&overhead_gib=1.5&hold_s=4"
    )
    assert page.locator("#plan-n-gpu").inner_text() == "4"
    # A changed input announces the plan's headline alone, not the derivation.
    assert page.locator("#plan-result").get_attribute("aria-live") is None
    page.locator("#id_qps").fill("20")
    page.locator("#id_qps").dispatch_event("change")
    expect(page.locator("#plan-announce")).to_have_text(
        re.compile(r"^Planned: \d+ GPUs in \d+ instances(, (not )?feasible)?; binding: memory\.$")
    )
    expect(page.locator("#plan-n-gpu")).not_to_have_text("4")
    memory = page.locator("#bound-memory")
    assert "4 req/s" in memory.inner_text().replace("4.00", "4") and "binds" in memory.inner_text()
    assert "binds" not in page.locator("#bound-speed").inner_text()
    chart = page.locator("svg.pl-svg").first
    assert "the memory bound binds" in chart.locator("title").first.text_content()
    # Both bounds are drawn: the flat speed bound and the falling memory bound.
    assert chart.locator("path.pl-speed").count() == 1
    assert chart.locator("path.pl-mem").count() == 1
    save_screenshot(page, "planner-capacity-bounds-rag")
    assert page.js_errors == []


def test_capacity_planner_works_without_javascript(browser, live_server_url) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server_url}/planner/capacity/")
    page.fill("#id_qps", "500")
    page.click("button[type=submit]")
    page.wait_for_url("**qps=500**")
    assert page.locator("#plan-n-gpu").inner_text() == "91"
    context.close()


def test_capacity_planner_in_dark_mode(dark_page, live_server_url) -> None:
    dark_page.goto(f"{live_server_url}/planner/capacity/?question=long-context-rag")
    assert dark_page.locator("svg.pl-svg").count() == 3
    save_screenshot(dark_page, "planner-capacity-dark")
    assert dark_page.js_errors == []
