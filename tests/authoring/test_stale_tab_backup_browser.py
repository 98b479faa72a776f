"""In a real browser: a stale tab's Save, refused beside the newer draft, keeps the browser's
copy of its text until the server has it, so the newer draft's page offers it back; and a
refused Close of a problem report is told at its field, in view, the value typed kept."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from accounts.instructors import instructor_grant
from authoring import services
from tests.conftest import save_screenshot, signed_in_context, watched_page

pytestmark = pytest.mark.browser
SLUG = "browser-stale"


@pytest.mark.parametrize("width", [360, 1280])
def test_a_stale_tabs_refused_save_keeps_its_text_in_the_browser(browser, live_server_url, width):
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    services.question_new(slug=SLUG, user=instructor)
    errors: list[str] = []
    context = signed_in_context(
        browser, live_server_url, instructor, viewport={"width": width, "height": 720}
    )
    url = f"{live_server_url}/author/questions/{SLUG}/"
    stale, other = watched_page(context, errors), watched_page(context, errors)
    stale.goto(url)
    other.goto(url)
    template = other.input_value("#source")
    other.fill("#source", template + "\nFrom the other tab.")
    expect(other.locator("#save-status")).to_contain_text("Draft saved")

    mine = template + "\nFrom the stale tab."
    stale.fill("#source", mine)
    expect(stale.locator("#save-status")).to_contain_text("Not saved.")  # the autosave's 409
    stale.get_by_role("button", name="Save draft").click()  # the page's own Save: 409 too
    expect(stale.locator("#load-newer")).to_be_visible()
    assert stale.input_value("#source") == mine
    save_screenshot(stale, f"author-stale-save-refused-{width}")

    stale.locator("#load-newer").click()
    stale.wait_for_url(url)
    assert stale.input_value("#source").endswith("From the other tab.")
    stale.get_by_role("button", name="Restore it").click()
    assert stale.input_value("#source") == mine
    context.close()
    # The refused saves are logged by the browser and htmx on purpose; nothing else may be.
    assert [e for e in errors if "409" not in e] == []


@pytest.mark.parametrize("width", [360, 1280])
def test_a_bad_fixing_revision_is_told_at_its_field_in_view(browser, live_server_url, width):
    from tests.authoring.conftest import problem_report

    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    slug = "chat-api-50qps"
    report = problem_report(slug=slug, step_key="clarify", message="Unclear.")
    errors: list[str] = []
    context = signed_in_context(
        browser, live_server_url, instructor, viewport={"width": width, "height": 720}
    )
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/author/questions/{slug}/")
    field = page.locator(f"#fixed-{report.pk}")
    field.fill("99")
    page.locator(f"#fixed-{report.pk} ~ button").click()
    page.wait_for_url("**?refusal=*")
    expect(field).to_have_value("99")
    expect(field).to_be_focused()
    error = page.locator(f"#fixed-{report.pk}-error")
    expect(error).to_have_text("There is no published revision 99 of this question.")
    expect(error).to_be_in_viewport()
    save_screenshot(page, f"author-report-close-refused-{width}")
    context.close()
    assert errors == []
