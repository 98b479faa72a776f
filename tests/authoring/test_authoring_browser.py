"""In a real browser: an instructor writes, checks, publishes and
republishes a question while a candidate practises it."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from accounts.instructors import instructor_grant
from authoring import services
from tests.authoring.conftest import written
from tests.conftest import save_screenshot, signed_in_context, watched_page

pytestmark = pytest.mark.browser
SLUG = "browser-made"
OLD_PROMPT = "Draw the serving path from the client to the GPU."
NEW_PROMPT = "Draw the serving path from the client to the GPU, and say where requests queue."


def _context(browser, user, base):
    errors: list[str] = []
    context = signed_in_context(browser, base, user)
    return context, watched_page(context, errors), errors


def _new_question_in_the_editor(browser, base):
    """An instructor's browser on the editor of a question just made from the template."""
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    services.question_new(slug=SLUG, user=instructor)
    context, page, errors = _context(browser, instructor, base)
    url = f"{base}/author/questions/{SLUG}/"
    page.goto(url)
    return context, page, errors, url


def _without_step(text: str, step: str) -> tuple[str, int]:
    """The text without `step`'s block, and the line of `steps:` (where the problem is)."""
    lines = text.split("\n")
    start = lines.index(f"  {step}:")
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"^  [a-z]+:$", lines[i]))
    return "\n".join(lines[:start] + lines[end:]), lines.index("steps:") + 1


def test_an_instructor_writes_publishes_and_republishes_while_a_candidate_practises(
    browser, live_server_url
):
    base = live_server_url
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    candidate = User.objects.create_user("cato", password="a-Candidate-passphrase-7")
    author_ctx, author, author_errors = _context(browser, instructor, base)
    cand_ctx, cand, cand_errors = _context(browser, candidate, base)

    # From the template.
    author.goto(f"{base}/author/")
    author.fill("#new-slug", SLUG)
    author.get_by_role("button", name="Create from the template").click()
    author.wait_for_url(f"{base}/author/questions/{SLUG}/")
    # The template validates, but Publish refuses its placeholder lines: the preview says so
    # at those lines, and Publish lists them, each a link to its line.
    untouched = author.input_value("#source")
    expect(author.locator("#problems")).to_contain_text("2 problems")
    expect(author.locator("#problems")).to_contain_text("this constraint is still the template's")
    author.locator("#publish-button").click()
    refused = author.locator("#refusal-problems .problem-line")
    expect(refused).to_have_count(2)
    refused.nth(1).click()
    cursor = author.evaluate("document.getElementById('source').selectionStart")
    assert "Write the scenario here:" in untouched[cursor:].split("\n", 1)[0]
    template = written(untouched)
    author.fill("#source", template)
    author.locator("#no-problems").wait_for()

    # Delete a step: the live list names it at its line; a click puts the cursor there.
    broken, line = _without_step(template, "bottlenecks")
    author.fill("#source", broken)
    problem = author.locator(".problem-line", has_text=f"Line {line}")
    problem.wait_for()
    assert "missing step 'bottlenecks'" in author.inner_text("#problems")
    save_screenshot(author, "author-editor-problem")
    problem.click()
    cursor = author.evaluate("document.getElementById('source').selectionStart")
    assert broken[:cursor].count("\n") == line - 1
    author.fill("#source", template)
    author.locator("#no-problems").wait_for()

    # A rubric test that fails: publishing is refused and names it; then fixed.
    author.fill("#source", template.replace("{batching-engine: hit}", "{batching-engine: miss}"))
    author.locator("#test-failures").wait_for()
    author.locator("#publish-button").click()
    refusal = author.inner_text("#refusal")
    assert "architecture test 1 (engine named): expected batching-engine: miss" in refusal
    author.fill("#source", template)
    author.locator("#no-problems").wait_for()

    # Publish r1; the candidate finds the question and starts it.
    author.locator("#publish-button").click()
    author.get_by_text("Published revision 1.", exact=True).wait_for()
    cand.goto(f"{base}/questions/{SLUG}/")
    cand.get_by_role("button", name="Start practising").click()
    cand.wait_for_url(re.compile(r"/attempts/\d+/steps/clarify/$"))
    open_attempt = cand.url.split("/steps/")[0]
    cand.goto(f"{open_attempt}/steps/architecture/")
    assert OLD_PROMPT in cand.inner_text(".prompt")

    # The instructor edits and republishes: r2.
    author.fill("#source", author.input_value("#source").replace(OLD_PROMPT, NEW_PROMPT))
    author.locator("#publish-button").click()
    author.get_by_text("Published revision 2.", exact=True).wait_for()

    # The open attempt still shows r1; a new attempt shows r2.
    cand.reload()
    assert OLD_PROMPT in cand.inner_text(".prompt")
    assert "where requests queue" not in cand.inner_text(".prompt")
    cand.goto(f"{base}/questions/{SLUG}/")
    cand.get_by_role("button", name="Start practising").click()
    cand.wait_for_url(re.compile(r"/attempts/\d+/steps/clarify/$"))
    assert cand.url.split("/steps/")[0] != open_attempt
    cand.goto(cand.url.replace("/clarify/", "/architecture/"))
    assert NEW_PROMPT in cand.inner_text(".prompt")

    # The revision page shows the diff.
    author.goto(f"{base}/author/questions/{SLUG}/revisions/2/")
    assert f"-      {OLD_PROMPT}" in author.inner_text(".diff-del")
    assert f"+      {NEW_PROMPT}" in author.inner_text(".diff-add")
    assert services.question_draft(SLUG).version >= 1
    # A refused publish redirects to the editor (Post/Redirect/Get): nothing may log an error.
    assert author_errors == [] and cand_errors == []
    author_ctx.close()
    cand_ctx.close()


def test_the_editor_loses_nothing_when_a_save_fails_or_another_tab_saved_first(
    browser, live_server_url
):
    """A failed autosave says so and keeps the text in the page and the browser; a reload
    offers it back. A save from another tab wins the version race: this tab is told, shown the
    newer text, and keeps its own."""
    base = live_server_url
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    services.question_new(slug=SLUG, user=instructor)
    context, page, errors = _context(browser, instructor, base)
    url = f"{base}/author/questions/{SLUG}/"
    status = page.locator("#save-status")

    page.goto(url)
    template = page.input_value("#source")
    page.fill("#source", template + "\nSaved while the server is up.")
    expect(status).to_contain_text("Draft saved")

    # The server fails the next save: told, and kept.
    page.route(re.compile(r".*/save/$"), lambda route: route.fulfill(status=500, body="boom"))
    lost = template + "\nTyped while the server fails."
    page.fill("#source", lost)
    expect(status).to_contain_text("Not saved. The server had an error (500)")
    expect(status).to_contain_text("kept in this page and in this browser")
    assert page.input_value("#source") == lost
    page.unroute(re.compile(r".*/save/$"))

    # A reload shows the server's last draft and offers the browser's copy back.
    page.reload()
    assert "Typed while the server fails." not in page.input_value("#source")
    page.get_by_role("button", name="Restore it").click()
    assert page.input_value("#source") == lost
    expect(status).to_contain_text("(version 2)")  # saved by the autosave the restore starts
    assert services.question_draft(SLUG).text.endswith("Typed while the server fails.")

    # Another tab saves first: this one is told and shown that text, and keeps its own.
    other = watched_page(context, errors)
    other.goto(url)
    other.fill("#source", lost + "\nFrom the other tab.")
    expect(other.locator("#save-status")).to_contain_text("Draft saved")
    page.fill("#source", lost + "\nFrom this tab.")
    expect(status).to_contain_text("Not saved.")
    status.get_by_text("See the newer text saved elsewhere").click()
    expect(status.locator(".other-draft")).to_contain_text("From the other tab.")
    assert page.input_value("#source").endswith("From this tab.")
    assert services.question_draft(SLUG).text.endswith("From the other tab.")
    context.close()
    # The 500 and the 409 are logged by the browser and htmx on purpose; nothing else may be.
    expected = ("status of 500", "Error Code 500", "status of 409")
    assert [e for e in errors if not any(code in e for code in expected)] == []


def test_an_upload_after_autosaves_replaces_the_draft(browser, live_server_url, tmp_path):
    """The upload form sends the version the autosave reached, not the one the page loaded
    with (which was refused as 'saved from another tab')."""
    base = live_server_url
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    services.question_new(slug=SLUG, user=instructor)
    context, page, errors = _context(browser, instructor, base)
    page.goto(f"{base}/author/questions/{SLUG}/")
    template = page.input_value("#source")
    page.fill("#source", template + "\nOne autosave.")
    expect(page.locator("#save-status")).to_contain_text("(version 1)")
    upload = tmp_path / f"{SLUG}.md"
    upload.write_text(template + "\nFrom a file.", encoding="utf-8")
    page.set_input_files("#upload-file", str(upload))
    # The autosaved edit is unpublished: the upload replaces it only with the box ticked.
    page.get_by_label("Replace my unpublished draft").check()
    page.get_by_role("button", name="Upload", exact=True).click()
    page.wait_for_load_state()
    assert services.question_draft(SLUG).text.endswith("From a file.")
    assert page.input_value("#source").endswith("From a file.")
    context.close()
    assert errors == []


def test_a_file_over_the_limit_is_told_at_the_upload_field_unsent(
    browser, live_server_url, tmp_path
):
    """A file past the question-file limit is refused in the page: past the request limit it
    would never reach the view, and the upload would leave the editor for an error page."""
    context, page, errors, url = _new_question_in_the_editor(browser, live_server_url)
    expect(page.locator("label[for=upload-file]")).to_contain_text("at most 512 KiB")
    upload = tmp_path / f"{SLUG}.md"
    upload.write_bytes(b"---\n" + b"# padding\n" * (5 * 1024 * 1024 // 10))  # past 4 MiB
    page.set_input_files("#upload-file", str(upload))
    page.get_by_role("button", name="Upload", exact=True).click()
    said = page.locator("#upload-error")
    expect(said).to_have_text(
        "The file is 5121 KiB; a question file holds at most 512 KiB. Choose a smaller file."
    )
    assert page.url == url
    expect(page.locator("#upload-file")).to_be_focused()
    expect(page.locator("#upload-file")).to_have_attribute("aria-invalid", "true")
    assert services.question_draft(SLUG).version == 0
    context.close()
    assert errors == []


def test_a_text_too_large_to_send_is_refused_in_the_page_and_kept(browser, live_server_url):
    """Past the request limit (2.5 MB) the server never sees the text: the autosave and the
    preview say what is wrong, and Publish does not leave the page for an error."""
    context, page, errors, url = _new_question_in_the_editor(browser, live_server_url)
    huge = page.input_value("#source") + "\n" + "# padding for a paste gone wrong\n" * 90_000
    # Pasted: typing three megabytes into the box would take the browser minutes.
    page.locator("#source").evaluate(
        "(box, text) => { box.value = text;"
        " box.dispatchEvent(new Event('input', {bubbles: true})); }",
        huge,
    )
    status = page.locator("#save-status")
    expect(status).to_contain_text("Not saved. This text is 2", timeout=15_000)
    expect(status).to_contain_text("a question file holds at most 512 KiB")
    expect(page.locator("#live-preview")).to_contain_text("a question file holds at most 512 KiB")
    page.locator("#publish-button").click()
    assert page.url == url and page.input_value("#source") == huge
    expect(status).to_contain_text("Shorten it, then save.")
    assert services.question_draft(SLUG).version == 0
    context.close()
    # The refused requests are logged by the browser and htmx; nothing else may be.
    assert [e for e in errors if "400" not in e] == []


def test_text_the_browser_puts_back_after_back_and_forward_is_checked_and_saved(
    browser, live_server_url
):
    """Back before the autosave, then Forward: the browser puts the typed text back in the
    box of a freshly loaded page. It is not taken for the server's draft: the preview checks
    it, the autosave saves it, and the browser's copy is not offered again."""
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    draft = services.question_new(slug=SLUG, user=instructor)
    context, page, errors = _context(browser, instructor, live_server_url)
    page.goto(f"{live_server_url}/author/")
    page.goto(f"{live_server_url}/author/questions/{SLUG}/")
    broken, line = _without_step(draft.text, "bottlenecks")
    page.fill("#source", broken)
    page.go_back()  # well inside the preview's 0.5 s and the autosave's 1.2 s
    page.go_forward()
    assert page.input_value("#source") == broken
    expect(page.locator("#save-status")).to_contain_text(f"(version {draft.version + 1})")
    expect(page.locator("#problems")).to_contain_text(f"Line {line}: missing step 'bottlenecks'")
    expect(page.locator(".restore")).to_have_count(0)
    assert services.question_draft(SLUG).text == broken
    context.close()
    assert errors == []


def test_a_taken_slug_is_told_at_its_field_in_view(browser, live_server_url):
    """The form to start a question is at the foot of a long list: refused, the page came
    back at its top, the error out of sight at the bottom."""
    instructor = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(instructor)
    errors: list[str] = []
    context = signed_in_context(
        browser, live_server_url, instructor, viewport={"width": 360, "height": 640}
    )
    page = watched_page(context, errors)
    page.goto(f"{live_server_url}/author/")
    assert page.evaluate("document.documentElement.scrollHeight") > 2 * 640
    page.fill("#new-slug", "chat-api-50qps")
    page.get_by_role("button", name="Create from the template").click()
    error = page.locator("#new-error")
    expect(error).to_contain_text("There is already a question 'chat-api-50qps'")
    expect(error).to_be_in_viewport()
    field = page.locator("#new-slug")
    expect(field).to_be_focused()
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_attribute("aria-describedby", "new-error")
    save_screenshot(page, "author-taken-slug-360")
    context.close()
    # The refusal is a 422 page by design; nothing else may log an error.
    assert [e for e in errors if "status of 422" not in e] == []
