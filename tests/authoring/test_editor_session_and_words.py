"""The editor when its session ends or another tab saves, and the words of its refusals and
problem reports."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.shortcuts import resolve_url
from django.urls import reverse
from playwright.sync_api import expect

from accounts.instructors import instructor_grant
from authoring import services
from authoring.models import Draft
from tests.authoring.conftest import INSTRUCTOR_PASSWORD, problem_report
from tests.conftest import signed_in_context, watched_page

CHAT = "chat-api-50qps"
EDITOR = f"/author/questions/{CHAT}/"


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["question_publish", "question_save", "question_try"])
def test_a_signed_out_editor_button_leads_to_sign_in_and_back_to_the_editor(
    content_loaded, client, instructor, action
):
    response = client.post(
        reverse(f"authoring:{action}", args=[CHAT]),
        {"text": "x", "base_version": "0"},
        headers={"referer": f"http://testserver{EDITOR}"},
    )
    assert response.status_code == 302
    assert response["Location"] == f"{resolve_url(settings.LOGIN_URL)}?next={EDITOR}"
    assert not Draft.objects.exists()
    # Signing in there leads back to the editor.
    signed_in = client.post(
        response["Location"],
        {"username": instructor.username, "password": INSTRUCTOR_PASSWORD},
    )
    assert signed_in.status_code == 302 and signed_in["Location"] == EDITOR
    assert client.get(EDITOR).status_code == 200


@pytest.mark.django_db
def test_a_signed_out_editor_page_leads_to_sign_in_and_a_candidate_still_gets_404(
    content_loaded, client, candidate_client
):
    response = client.get(EDITOR)
    assert response.status_code == 302
    assert response["Location"] == f"{resolve_url(settings.LOGIN_URL)}?next={EDITOR}"
    # A form sent from another site's page is not sent back there.
    response = client.post(
        reverse("authoring:question_publish", args=[CHAT]),
        headers={"referer": "https://elsewhere.example/page/"},
    )
    assert "elsewhere" not in response["Location"]
    # Nor from this site's address with a path that reads as another host.
    for path in ("//elsewhere.example/x", "/\\elsewhere.example/x"):
        response = client.post(
            reverse("authoring:question_publish", args=[CHAT]),
            headers={"referer": f"http://testserver{path}"},
        )
        assert "elsewhere" not in response["Location"], path
    assert candidate_client.get(EDITOR).status_code == 404
    publish = reverse("authoring:question_publish", args=[CHAT])
    assert candidate_client.post(publish).status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "---\nslug: chat-api-50qps\n".encode("utf-16")],
    ids=["binary", "utf-16"],
)
def test_an_upload_not_utf8_says_the_draft_is_unchanged_and_what_to_do(
    content_loaded, instructor_client, data
):
    response = instructor_client.post(
        reverse("authoring:question_upload", args=[CHAT]),
        {"file": SimpleUploadedFile(f"{CHAT}.md", data), "base_version": "0"},
        follow=True,
    )
    page = response.content.decode()
    assert "is not UTF-8 text (line 1): save it as UTF-8 and upload it again." in page
    assert "This draft is unchanged." in page
    assert not Draft.objects.exists()


@pytest.mark.django_db
def test_a_problem_report_names_its_revision_once(content_loaded, instructor_client):
    problem_report(slug=CHAT, step_key="clarify", message="A typo in the scenario.")
    page = instructor_client.get(EDITOR).content.decode()
    assert "revision 1," in page
    assert "revision r1" not in page


@pytest.mark.browser
def test_text_a_stale_tab_could_not_save_is_offered_back_after_another_tab_saves(
    browser, live_server_url
):
    """Tab B's text, refused as stale, survives tab A's later saves: B's reload offers it."""
    base = live_server_url
    slug = "two-tabs"
    user = User.objects.create_user("ines", password=INSTRUCTOR_PASSWORD)
    instructor_grant(user)
    services.question_new(slug=slug, user=user)
    errors: list[str] = []
    context = signed_in_context(browser, base, user)
    url = f"{base}/author/questions/{slug}/"
    tab_a, tab_b = watched_page(context, errors), watched_page(context, errors)
    tab_a.goto(url)
    tab_b.goto(url)
    template = tab_a.input_value("#source")

    tab_a.fill("#source", template + "\nFrom tab A.")
    expect(tab_a.locator("#save-status")).to_contain_text("(version 1)")
    refused = template + "\nFrom tab B, refused."
    tab_b.fill("#source", refused)
    expect(tab_b.locator("#save-status")).to_contain_text("Not saved.")
    tab_a.fill("#source", template + "\nFrom tab A, again.")
    expect(tab_a.locator("#save-status")).to_contain_text("(version 2)")

    tab_b.reload()
    assert tab_b.input_value("#source").endswith("From tab A, again.")
    tab_b.get_by_role("button", name="Restore it").click()
    assert tab_b.input_value("#source") == refused
    expect(tab_b.locator("#save-status")).to_contain_text("(version 3)")
    assert services.question_draft(slug).text == refused
    context.close()
    # The refused save's 409 is logged by the browser and htmx on purpose.
    assert [e for e in errors if "409" not in e] == []


@pytest.mark.browser
def test_copies_left_by_closed_tabs_are_pruned_to_the_three_newest_of_a_week(
    browser, live_server_url
):
    """Each tab keeps its own copy; closed tabs' copies would fill the browser's storage
    until backups failed unseen. Opening the editor keeps the three newest of the last week."""
    slug = "pruned"
    user = User.objects.create_user("ines", password=INSTRUCTOR_PASSWORD)
    instructor_grant(user)
    services.question_new(slug=slug, user=user)
    context = signed_in_context(browser, live_server_url, user)
    page = context.new_page()
    url = f"{live_server_url}/author/questions/{slug}/"
    page.goto(url)
    key = page.locator("#editor-form").get_attribute("data-draft-key")
    day = 24 * 3600 * 1000
    page.evaluate(
        """([key, day]) => {
          const now = Date.now();
          [1, 2, 3, 4].forEach((n) => localStorage.setItem(`${key}:recent${n}`,
            JSON.stringify({ at: now - n * 1000, text: `recent ${n}` })));
          localStorage.setItem(`${key}:old`, JSON.stringify({ at: now - 8 * day, text: "old" }));
        }""",
        [key, day],
    )
    page.reload()
    expect(page.get_by_role("button", name="Restore it")).to_be_visible()
    kept = page.evaluate(f"() => Object.keys(localStorage).filter(k => k.startsWith('{key}:'))")
    assert sorted(kept) == [f"{key}:recent1", f"{key}:recent2", f"{key}:recent3"]
    context.close()
