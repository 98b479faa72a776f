"""A new candidate's first drill set, in a real browser: one classic slip (GB for GiB) is
named with its hint and the worked solution; the home page then recommends that skill, the
progress page shows the results, and the card's due date is FSRS's (the clock is fixed)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from drills import engine, services
from drills.models import Card, DrillItem
from tests.conftest import save_screenshot, signed_in_context, watched_page
from tests.drills.factories import fix_drills_clock

pytestmark = pytest.mark.browser

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def fixed_clock(monkeypatch):
    """The drills' clock (services writes, selectors reads) fixed at NOW; the live server
    runs in this process, so its requests read it too."""
    fix_drills_clock(monkeypatch, NOW)


def answer_for(item: DrillItem, slip: bool) -> str:
    drill = engine.drill_generate(item.kind, item.seed)
    if slip:  # the weights worked out in GiB and written down as GB
        return f"{drill.expected * 1e9 / 1024**3:.4f} GB"
    return f"{drill.expected!r} {drill.unit}".strip()


def test_a_first_drill_set_with_gb_for_gib_then_home_and_progress(
    browser, live_server_url, fixed_clock
):
    user = User.objects.create_user("first-drills", password="a-long-Passphrase-42")
    context = signed_in_context(browser, live_server_url, user)
    errors: list[str] = []
    page = watched_page(context, errors)

    page.goto(f"{live_server_url}/drills/")
    page.get_by_role("button", name="A mixed set of 5").click()
    expect(page.locator(".drill-item")).to_have_count(5)
    items = list(DrillItem.objects.filter(user=user).order_by("position"))
    assert "weights" in [i.kind for i in items]

    for item in items:
        slip = item.kind == "weights"
        page.locator(f"#answer-{item.position}").fill(answer_for(item, slip))
        page.locator(f"#drill-{item.position}").get_by_role("button", name="Check").click()
        done = page.locator(f"#drill-{item.position} [data-testid=verdict]")
        expect(done).to_be_visible()
        if slip:
            expect(done).to_contain_text("A known slip")
            expect(done).to_contain_text("GB vs GiB")
            solution = page.locator(f"#drill-{item.position} [data-testid=solution]")
            expect(solution).to_contain_text("(P − P_emb) × b_w + P_emb × b_emb")
            expect(solution).to_contain_text("GiB")
        else:
            expect(done).to_contain_text("Correct")
    expect(page.get_by_role("status")).to_contain_text("Set done")
    save_screenshot(page, "drills-set-done")

    page.goto(f"{live_server_url}/")
    recommendation = page.get_by_test_id("recommendation")
    expect(recommendation).to_contain_text("Weight sizing: your last answer mixed up GB and GiB")
    expect(recommendation).to_contain_text("5 drills, about 6 minutes")
    expect(page.get_by_role("list", name="Due today")).to_contain_text("Weights size")

    # One click starts five drills of that skill.
    page.locator(".drill-next").get_by_role("button", name="Start 5 drills").click()
    expect(page.locator(".drill-item")).to_have_count(5)
    expect(page.locator(".drill-item h2").first).to_contain_text("Weights size")

    page.goto(f"{live_server_url}/drills/progress/")
    expect(page.get_by_role("heading", name="Your progress")).to_be_visible()
    expect(page.locator(".lede")).to_contain_text("5 drills")
    weights = page.locator("#chart-drills g.pg-cell[data-count='1'][data-mean='0.0']")
    expect(weights).to_have_count(2)  # this week's cell and the overall one
    right = page.locator("#chart-drills g.pg-cell[data-count='1'][data-mean='1.0']")
    expect(right).to_have_count(8)  # four kinds right, each week and overall
    page.get_by_text("Drill verdicts per kind, week by week: the figures").click()
    expect(page.get_by_test_id("chart-drills-table")).to_contain_text("Weights size")
    save_screenshot(page, "drills-progress")

    card = Card.objects.get(user=user, key="drill:weights")
    assert card.due == NOW + timedelta(minutes=1)  # missed: due again at once
    assert errors == []
    context.close()


def test_the_pages_read_without_javascript(browser, live_server_url, fixed_clock):
    user = User.objects.create_user("no-script", password="a-long-Passphrase-42")
    services.drill_set_start(user=user, kind="n_inst", now=NOW)
    context = signed_in_context(browser, live_server_url, user, java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server_url}/drills/")
    page.get_by_role("link", name=re.compile("Set of")).click()
    page.locator("#answer-1").fill("1")
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#drill-1 [data-testid=verdict]")).to_be_visible()
    page.goto(f"{live_server_url}/drills/progress/")
    expect(page.locator("#chart-drills")).to_be_visible()
    context.close()


def test_a_set_answered_with_the_keyboard_alone(browser, live_server_url, fixed_clock):
    """Enter checks an answer; focus lands on its verdict, so one Tab reaches the next drill's
    input, and after the last one "Set done" with its links."""
    user = User.objects.create_user("keys-only", password="a-long-Passphrase-42")
    drill_set = services.drill_set_start(user=user, kind="n_inst", now=NOW)
    context = signed_in_context(browser, live_server_url, user)
    errors: list[str] = []
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/drills/sets/{drill_set.pk}/")
    expect(page.locator("#answer-1")).to_be_focused()  # the set opens in its answer box
    for position in range(1, 6):
        page.locator("html[data-ready]").wait_for(state="attached")  # the last swap settled
        page.keyboard.type("3")
        page.keyboard.press("Enter")
        # A check runs the napkin engine; on a loaded machine it can take seconds.
        verdict = page.locator(f"#drill-{position} [data-testid=verdict]")
        expect(verdict).to_be_visible(timeout=15_000)
        if position < 5:
            expect(page.locator(f"#drill-{position} [data-testid=verdict]")).to_be_focused()
            page.keyboard.press("Tab")
            expect(page.locator(f"#answer-{position + 1}")).to_be_focused()
    expect(page.get_by_role("status")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="See your progress")).to_be_focused()
    assert errors == []
    context.close()


def test_an_unreadable_answer_checked_from_the_button_keeps_focus_in_its_box(
    browser, live_server_url, fixed_clock
):
    """Tab to Check and press Enter on an answer the checker cannot read: the error shows and
    focus is back in the answer box, not at the end of the page, where the next Tab left the
    set for the footer's links."""
    user = User.objects.create_user("keys-only", password="a-long-Passphrase-42")
    drill_set = services.drill_set_start(user=user, kind="n_inst", now=NOW)
    context = signed_in_context(browser, live_server_url, user)
    page = watched_page(context, [])
    page.goto(f"{live_server_url}/drills/sets/{drill_set.pk}/")
    expect(page.locator("#answer-1")).to_be_focused()
    page.keyboard.type("99 apples")
    page.keyboard.press("Tab")
    expect(page.locator("#drill-1").get_by_role("button", name="Check")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#answer-error-1")).to_be_visible(timeout=15_000)
    expect(page.locator("#answer-1")).to_be_focused()
    expect(page.locator("#answer-1")).to_have_value("99 apples")
    context.close()


def test_the_charts_keep_their_size_on_a_phone_and_scroll_inside(
    browser, live_server_url, fixed_clock
):
    from tests.practice.test_layout_a11y_browser import PHONE

    user = User.objects.create_user("phone-charts", password="a-long-Passphrase-42")
    context = signed_in_context(browser, live_server_url, user, viewport=PHONE)
    page = context.new_page()
    page.goto(f"{live_server_url}/drills/progress/")
    chart = page.locator("#chart-drills")
    drawn = chart.bounding_box()["width"]
    assert drawn == float(chart.get_attribute("width")) > PHONE["width"]  # not shrunk to 4 px text
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    context.close()


# Layout and accessibility are HTML and CSS: one database's run checks them.
@pytest.mark.one_database
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_drill_pages_fit_a_phone_and_pass_axe(browser, live_server_url, fixed_clock, scheme):
    from tests.drills.factories import graded_submission
    from tests.practice.test_layout_a11y_browser import PHONE, _axe_serious

    user = User.objects.create_user(f"phone-{scheme}", password="a-long-Passphrase-42")
    drill_set = services.drill_set_start(user=user, now=NOW)
    first = drill_set.items.get(position=1)
    services.drill_item_answer(item=first, answer=answer_for(first, slip=False), now=NOW)
    graded_submission(user=user, at=NOW, grades={"self": 0.4})
    context = signed_in_context(
        browser, live_server_url, user, viewport=PHONE, color_scheme=scheme, bypass_csp=True
    )
    problems = []
    for path in ("/", "/drills/", f"/drills/sets/{drill_set.pk}/", "/drills/progress/"):
        page = context.new_page()
        page.goto(live_server_url + path)
        page.wait_for_selector("html[data-ready]", state="attached")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            problems.append(f"{path} scrolls sideways at 360 px: {width} px wide")
        problems += [f"{path}: {v}" for v in _axe_serious(page)]
        page.close()
    context.close()
    assert problems == []


def test_an_answer_refused_for_a_stale_token_says_so_and_goes_through_on_check_again(
    browser, live_server_url, fixed_clock
):
    """A 403 before the view (the page's CSRF token outdated by a sign-in in another tab) was
    not swapped by htmx: Check did nothing at all. Now the box says so, the page takes the
    session's current token, and the next Check is taken."""
    user = User.objects.create_user("stale-token", password="a-long-Passphrase-42")
    drill_set = services.drill_set_start(user=user, kind="n_inst", now=NOW)
    context = signed_in_context(browser, live_server_url, user)
    page = context.new_page()
    page.goto(f"{live_server_url}/drills/sets/{drill_set.pk}/")
    page.locator("html[data-ready]").wait_for(state="attached")
    context.clear_cookies(name="csrftoken")  # the token this page holds no longer matches
    page.locator("#answer-1").fill("3")
    page.keyboard.press("Enter")
    problem = page.locator("#drill-1 [role=alert]")
    expect(problem).to_contain_text("press Check again")
    expect(page.locator("#answer-1")).to_have_value("3")
    page.locator("#drill-1").get_by_role("button", name="Check").click()
    expect(page.locator("#drill-1 [data-testid=verdict]")).to_be_visible()
    assert DrillItem.objects.get(drill_set=drill_set, position=1).answer == "3"
    context.close()


def test_the_seed_and_answer_boxes_wear_the_sites_input_style(
    browser, live_server_url, fixed_clock
):
    # The site styles input[type=text]: a box without a type was a bare browser box.
    user = User.objects.create_user("boxes", password="a-long-Passphrase-42")
    drill_set = services.drill_set_start(user=user, now=NOW)
    context = signed_in_context(
        browser, live_server_url, user, viewport={"width": 360, "height": 800}
    )
    page = watched_page(context, [])
    style = "el => [getComputedStyle(el).borderRadius, getComputedStyle(el).paddingLeft]"
    page.goto(f"{live_server_url}/drills/")
    page.get_by_text("Replay a drill by its seed").click()
    site = page.locator("#replay-kind").evaluate(style)
    assert page.locator("#replay-seed").evaluate(style) == site
    page.goto(f"{live_server_url}/drills/sets/{drill_set.pk}/")
    assert page.locator("#answer-1").evaluate(style) == site
    context.close()
