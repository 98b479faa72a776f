"""In a real browser: a refused Publish or upload lands on the editor's own address, so a
reload reloads the editor instead of sending the form (and saving the draft) again."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from accounts.instructors import instructor_grant
from authoring import services
from tests.conftest import save_screenshot, signed_in_context, watched_page

pytestmark = pytest.mark.browser
SLUG = "browser-refused"


def _instructor():
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    services.question_new(slug=SLUG, user=instructor)
    return instructor


def test_a_refused_publish_lands_on_the_editor_and_a_reload_sends_nothing(browser, live_server_url):
    instructor = _instructor()
    errors: list[str] = []
    context = signed_in_context(browser, live_server_url, instructor)
    page = watched_page(context, errors)
    editor = f"{live_server_url}/author/questions/{SLUG}/"
    page.goto(editor)
    page.fill("#source", page.input_value("#source") + "\nEdited.")
    page.locator("#publish-button").click()  # the template's placeholders: refused
    # The editor's own address, with the one-time token that names this refusal.
    page.wait_for_url(re.compile(re.escape(editor) + r"\?refusal=[\w-]+$"))
    told_at = page.url
    expect(page.locator("#refusal-problems .problem-line")).to_have_count(2)
    version = services.question_draft(SLUG).version
    assert services.question_draft(SLUG).text.endswith("Edited.")  # the POST's save stays
    expect(page.locator("#draft-meta")).to_contain_text(f"Draft version {version}")
    page.reload()
    assert page.url == told_at
    expect(page.locator("#refusal")).to_have_count(0)  # told once: the token is spent
    assert services.question_draft(SLUG).version == version  # nothing sent again
    context.close()
    assert errors == []


@pytest.mark.parametrize("width", [360, 1280])
def test_a_refused_upload_is_told_at_its_field_in_view(browser, live_server_url, tmp_path, width):
    instructor = _instructor()
    before = services.question_draft(SLUG)
    errors: list[str] = []
    context = signed_in_context(
        browser, live_server_url, instructor, viewport={"width": width, "height": 720}
    )
    page = watched_page(context, errors)
    editor = f"{live_server_url}/author/questions/{SLUG}/"
    page.goto(editor)
    notes = tmp_path / "x.txt"
    notes.write_text("hello", encoding="utf-8")
    page.set_input_files("#upload-file", str(notes))
    page.get_by_role("button", name="Upload", exact=True).click()
    page.wait_for_url(re.compile(re.escape(editor) + r"\?refusal=[\w-]+$"))
    error = page.locator("#upload-error")
    expect(error).to_have_text(
        "x.txt is not a .md file: choose the question's .md file. This draft is unchanged."
    )
    expect(error).to_be_in_viewport()
    field = page.locator("#upload-file")
    expect(field).to_be_focused()
    expect(field).to_have_attribute("aria-describedby", "upload-error")
    save_screenshot(page, f"author-upload-refused-{width}")
    kept = services.question_draft(SLUG)
    assert (kept.text, kept.version) == (before.text, before.version)
    page.reload()
    expect(page.locator("#upload-error")).to_be_hidden()
    context.close()
    assert errors == []
