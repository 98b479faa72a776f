"""An upload never replaces unpublished edits unless the author ticks that it may; words the
instructor meets: a preview refused for one problem, the step a report's test is for, a
candidate's direction controls written escaped into the test, and the expired-form page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from authoring import services
from authoring.models import Draft, ProblemReport
from questions.models import Question

CHAT = "chat-api-50qps"
CHAT_FILE = Path(settings.CONTENT_DIR) / "questions" / f"{CHAT}.md"
UNPUBLISHED_LINE = "\nAn edit typed since the last publish."


def _upload(client, slug: str, data: bytes, version: int, **extra):
    upload = SimpleUploadedFile(f"{slug}.md", data, content_type="text/markdown")
    return client.post(
        reverse("authoring:question_upload", args=[slug]),
        {"file": upload, "base_version": str(version), **extra},
        follow=True,
    )


def _save(client, slug: str, text: str, version: int) -> Draft:
    client.post(
        reverse("authoring:question_save", args=[slug]),
        {"text": text, "base_version": str(version)},
        HTTP_HX_REQUEST="true",
    )
    return Draft.objects.get(slug=slug)


@pytest.mark.django_db
def test_an_upload_over_unpublished_edits_is_refused_and_the_draft_kept(
    content_loaded, instructor_client
):
    published = CHAT_FILE.read_text(encoding="utf-8")
    draft = _save(instructor_client, CHAT, published + UNPUBLISHED_LINE, 0)
    editor = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    assert 'id="upload-replace-field" hidden' not in editor  # the box is offered
    response = _upload(instructor_client, CHAT, (published + "\nFrom a file.").encode(), 1)
    page = " ".join(response.content.decode().split())
    assert "Not uploaded: this draft holds edits that are not published" in page
    assert "Replace my unpublished draft" in page and "This draft is unchanged." in page
    draft.refresh_from_db()
    assert draft.text == published + UNPUBLISHED_LINE and draft.version == 1


@pytest.mark.django_db
def test_an_upload_with_the_box_ticked_replaces_unpublished_edits(
    content_loaded, instructor_client
):
    published = CHAT_FILE.read_text(encoding="utf-8")
    _save(instructor_client, CHAT, published + UNPUBLISHED_LINE, 0)
    response = _upload(
        instructor_client, CHAT, (published + "\nFrom a file.").encode(), 1, replace_draft="yes"
    )
    assert "is now the draft (version 2)" in response.content.decode()
    assert Draft.objects.get(slug=CHAT).text == published + "\nFrom a file."


@pytest.mark.django_db
def test_an_upload_over_a_draft_that_is_the_published_text_needs_no_box(
    content_loaded, instructor_client
):
    published = CHAT_FILE.read_text(encoding="utf-8")
    editor = instructor_client.get(reverse("authoring:question", args=[CHAT])).content.decode()
    assert 'id="upload-replace-field" hidden' in editor  # nothing unpublished: nothing to ask
    response = _upload(instructor_client, CHAT, (published + "\nFrom a file.").encode(), 0)
    assert "is now the draft (version 1)" in response.content.decode()
    # Saved back to the published text, the draft again holds nothing unpublished.
    _save(instructor_client, CHAT, published, 1)
    response = _upload(instructor_client, CHAT, (published + "\nAgain.").encode(), 2)
    assert "is now the draft (version 3)" in response.content.decode()


@pytest.mark.django_db
def test_a_new_question_untouched_takes_an_upload_but_not_once_written(instructor_client):
    services.question_new(slug="fresh", user=None)
    template = Draft.objects.get(slug="fresh").text
    mine = template.replace("title: Design a", "title: My own", 1)
    response = _upload(instructor_client, "fresh", mine.encode(), 0)
    assert "is now the draft (version 1)" in response.content.decode()  # only the template
    refused = _upload(instructor_client, "fresh", template.encode(), 1)
    assert "Not uploaded: this draft holds edits" in refused.content.decode()
    assert Draft.objects.get(slug="fresh").text == mine


@pytest.mark.django_db
def test_a_preview_refused_for_one_problem_says_it(instructor, instructor_client):
    services.question_new(slug="one-problem", user=instructor)
    draft = Draft.objects.get(slug="one-problem")
    Draft.objects.filter(pk=draft.pk).update(
        text=draft.text.replace("difficulty: core", "difficulty: extreme", 1)
    )
    tried = instructor_client.post(
        reverse("authoring:question_try", args=["one-problem"]), follow=True
    )
    page = tried.content.decode()
    assert "Not tried: the draft has 1 problem; fix it first." in page


@pytest.mark.django_db
def test_the_add_a_test_page_names_the_step_as_the_editor_does(content_loaded, instructor_client):
    revision = Question.objects.get(slug=CHAT).current_revision
    report = ProblemReport.objects.create(
        question=revision.question,
        revision=revision,
        step_key="clarify",
        message="Right answer.",
        answer_text="Ask for the peak load.",
    )
    page = instructor_client.get(reverse("authoring:report_add_test", args=[report.pk]))
    text = " ".join(page.content.decode().split())
    assert "Step: Clarify the requirements." in text
    assert "Step clarify" not in text


@pytest.mark.django_db
def test_a_candidates_direction_controls_go_into_the_test_escaped(
    content_loaded, instructor_client
):
    revision = Question.objects.get(slug=CHAT).current_revision
    answer = "Peak load is \u202e05 SPQ\u202c, with \u2066isolated\u2069 tenants."
    report = ProblemReport.objects.create(
        question=revision.question,
        revision=revision,
        step_key="clarify",
        message="Right answer.",
        answer_text=answer,
    )
    url = reverse("authoring:report_add_test", args=[report.pk])
    form = instructor_client.get(url).content.decode()
    points = re.findall(r'name="verdict-([a-z0-9-]+)" value="hit"', form)
    assert instructor_client.post(url, {f"verdict-{p}": "miss" for p in points}).status_code == 302
    draft = Draft.objects.get(slug=CHAT).text
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", draft)
    assert "\\u202E05 SPQ\\u202C" in draft
    check = services.question_check(slug=CHAT, text=draft)
    assert check.problems == []
    assert check.cf.meta["tests"]["clarify"][-1]["answer"] == answer


@pytest.mark.django_db
def test_an_expired_form_after_signing_out_does_not_promise_the_form_behind_back(instructor):
    browser = Client(enforce_csrf_checks=True)
    browser.cookies["csrftoken"] = "a" * 32  # a token from before the session ended
    response = browser.post(
        reverse("authoring:question_save", args=[CHAT]), {"text": "x", "base_version": "0"}
    )
    assert response.status_code == 403
    page = " ".join(response.content.decode().split())
    assert "what you typed is still in the form" not in page
    assert "your session has ended" in page and "going back leads to the sign-in page" in page
    assert "the page offers to restore it" in page


@pytest.mark.django_db
def test_an_expired_form_while_signed_in_says_to_go_back_and_send_it_again():
    user = User.objects.create_user("casey", password="a-long-Passphrase-42")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    browser.cookies["csrftoken"] = "a" * 32
    response = browser.post("/accounts/logout/")
    assert response.status_code == 403
    page = " ".join(response.content.decode().split())
    assert "Go back to the page" in page and "reload the page, and send it again" in page
    assert "your session has ended" not in page
