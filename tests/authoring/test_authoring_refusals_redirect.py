"""The editor's upload takes only a question's (or note's) .md file, and a refused Publish or
upload follows Post/Redirect/Get: the editor's own address tells the refusal, once."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from authoring import services
from authoring.models import Draft
from authoring.views import REFUSALS_KEPT, REFUSALS_SESSION_KEY
from questions.models import QuestionRevision

SLUG = "mine"
EDITOR = f"/author/questions/{SLUG}/"


def _upload(client, name: str, data: bytes, version: int, slug: str = SLUG):
    return client.post(
        reverse("authoring:question_upload", args=[slug]),
        {
            "file": SimpleUploadedFile(name, data, content_type="text/plain"),
            "base_version": version,
        },
    )


def _publish(client, text: str, version: int):
    return client.post(
        reverse("authoring:question_publish", args=[SLUG]),
        {"text": text, "base_version": str(version)},
    )


def _upload_error(page: str) -> str:
    found = re.search(r'<p class="field-errors" id="upload-error" role="alert">([^<]*)</p>', page)
    return found.group(1) if found else ""


def _refused_at(response) -> str:
    """The address a refused Publish or upload sends the browser to: the editor's own."""
    assert response.status_code == 302
    location = response["Location"]
    assert location.split("?")[0] == EDITOR
    return location


def _refusal(page: str) -> str:
    start = page.find('id="refusal"')
    return "" if start < 0 else page[start : page.index("</div>", start)]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name, data, said",
    [
        ("x.txt", b"hello", "x.txt is not a .md file: choose the question&#x27;s .md file."),
        ("mine.md.txt", None, "mine.md.txt is not a .md file"),  # the question's own text
        ("mine", None, "mine is not a .md file"),
        (
            "x.md",
            b"hello",
            "The file is not a question file: line 1: front matter must start with a "
            "&#x27;---&#x27; line.",
        ),
        (
            "x.md",
            b"# Notes\n\n---\nslug: mine\n",
            "The file is not a question file: line 1: front matter must start",
        ),
    ],
    ids=["txt", "md.txt", "no extension", "no front matter", "front matter later"],
)
def test_an_upload_that_is_no_md_question_file_is_refused_at_its_field_and_the_draft_kept(
    instructor, instructor_client, name, data, said
):
    # x.txt holding "hello" became the whole draft: one line, no front matter.
    draft = services.question_new(slug=SLUG, user=instructor)
    data = draft.text.encode() if data is None else data
    response = _upload(instructor_client, name, data, draft.version)
    page = instructor_client.get(_refused_at(response)).content.decode()
    error = _upload_error(page)
    assert said in error and error.endswith("This draft is unchanged.")
    assert 'aria-invalid="true" aria-describedby="upload-error" autofocus' in page
    kept = services.question_draft(SLUG)
    assert (kept.text, kept.version) == (draft.text, draft.version)


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["mine.MD", "Mine.Md"])
def test_an_md_file_is_taken_whatever_the_case_of_its_extension(
    instructor, instructor_client, name
):
    draft = services.question_new(slug=SLUG, user=instructor)
    text = draft.text + "\nFrom a file."
    response = _upload(instructor_client, name, text.encode(), draft.version)
    assert (response.status_code, response["Location"]) == (302, EDITOR)
    assert services.question_draft(SLUG).text == text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("mangle", "said"),
    [
        (lambda text: text.replace("title: ", "title: [unclosed ", 1), "is not valid YAML"),
        (lambda text: "---\nslug: mine\ntitle: Cut off\n", "is not closed"),
    ],
    ids=["broken yaml", "unclosed"],
)
def test_a_file_that_opens_its_front_matter_goes_in_for_the_editor_to_show(
    instructor, instructor_client, mangle, said
):
    # A front-matter block is opened: the file is the author's, mid-edit; the editor says
    # what is wrong with it at its line.
    draft = services.question_new(slug=SLUG, user=instructor)
    text = mangle(draft.text)
    response = _upload(instructor_client, "mine.md", text.encode(), draft.version)
    assert (response.status_code, response["Location"]) == (302, EDITOR)
    assert services.question_draft(SLUG).text == text
    page = instructor_client.get(EDITOR).content.decode()
    assert f"front matter {said}" in page and not _upload_error(page)


@pytest.mark.django_db
def test_another_questions_file_with_an_unclosed_block_is_refused_by_its_slug_line(
    instructor, instructor_client
):
    # Its front matter unread, the file still names its question: it would replace this
    # draft with another question's text.
    draft = services.question_new(slug=SLUG, user=instructor)
    text = "---\nslug: someone-elses\ntitle: Cut off\n"
    response = _upload(instructor_client, "theirs.md", text.encode(), draft.version)
    error = _upload_error(instructor_client.get(_refused_at(response)).content.decode())
    assert "This file is for &#x27;someone-elses&#x27;" in error, error
    assert services.question_draft(SLUG).text == draft.text


@pytest.mark.django_db
def test_a_refused_upload_redirects_to_the_editor_which_tells_it_once(
    instructor, instructor_client
):
    draft = services.question_new(slug=SLUG, user=instructor)
    location = _refused_at(_upload(instructor_client, "x.txt", b"hello", draft.version))
    # A HEAD shows nothing, so it takes nothing.
    assert instructor_client.head(location).status_code == 200
    first = instructor_client.get(location).content.decode()
    assert _upload_error(first).startswith("x.txt is not a .md file")
    assert 'id="refusal"' not in first  # told at the field, not again at the top
    again = instructor_client.get(location).content.decode()  # a reload: its token is spent
    assert not _upload_error(again) and "is not a .md file" not in again
    assert "autofocus" not in again


@pytest.mark.django_db
def test_an_upload_with_no_file_redirects_and_asks_for_one(instructor, instructor_client):
    draft = services.question_new(slug=SLUG, user=instructor)
    response = instructor_client.post(
        reverse("authoring:question_upload", args=[SLUG]), {"base_version": draft.version}
    )
    page = instructor_client.get(_refused_at(response)).content.decode()
    assert _upload_error(page) == "Choose a .md file."


@pytest.mark.django_db
def test_a_refused_publish_redirects_to_the_editor_which_lists_it_once(
    instructor, instructor_client
):
    # Refused, the page was the POST's: a reload sent the form again and saved the draft
    # again, and Back showed a cached page with an old draft version.
    draft = services.question_new(slug=SLUG, user=instructor)
    miss = "      expect: {batching-engine: miss}"
    text = draft.text.replace("      expect: {batching-engine: hit}", miss, 1) + "\nEdited."
    lines = text.split("\n")
    response = _publish(instructor_client, text, draft.version)
    location = _refused_at(response)
    saved = Draft.objects.get(slug=SLUG)
    assert (saved.text, saved.version) == (text, draft.version + 1)  # the POST's save stays
    assert not QuestionRevision.objects.filter(question__slug=SLUG).exists()

    page = instructor_client.get(location).content.decode()
    start = page.index('id="refusal"')
    refusal = page[start : page.index("</div>", start)]
    assert "Not published: 2 problems and 1 failing test." in refusal
    listed = re.findall(r'class="problem-line" data-line="(\d+)">Line \1</a>: ([^<]*)', refusal)
    placeholder_lines = [
        number
        for number, line in enumerate(lines, start=1)
        if any(placeholder in line for placeholder in services.TEMPLATE_PLACEHOLDERS)
    ]
    assert [int(line) for line, _ in listed] == [*placeholder_lines, lines.index(miss) + 1]
    assert listed[2][1].endswith("expected batching-engine: miss, got batching-engine: hit")
    assert f"Draft version {saved.version}" in page

    again = instructor_client.get(location).content.decode()  # a reload: its token is spent
    assert 'id="refusal"' not in again and 'id="refusal-problems"' not in again
    assert Draft.objects.get(slug=SLUG).version == saved.version  # reloading saves nothing


@pytest.mark.django_db
def test_a_refusal_is_not_told_beside_a_draft_saved_since(instructor, instructor_client):
    # The redirect not followed (a closed tab), then the draft saved again: the refusal spoke
    # of the older text.
    draft = services.question_new(slug=SLUG, user=instructor)
    response = _publish(instructor_client, draft.text, draft.version)
    location = _refused_at(response)
    token = location.split("?refusal=")[1]
    assert instructor_client.session[REFUSALS_SESSION_KEY][token]["refusal"]
    saved = Draft.objects.get(slug=SLUG)
    services.draft_save(
        kind=Draft.Kind.QUESTION,
        slug=SLUG,
        text=saved.text + "\nA later edit.",
        base_version=saved.version,
        user=instructor,
    )
    page = instructor_client.get(location).content.decode()
    assert 'id="refusal"' not in page
    assert REFUSALS_SESSION_KEY not in instructor_client.session  # taken all the same


@pytest.mark.django_db
def test_a_refused_concept_publish_redirects_to_its_editor(instructor, instructor_client):
    note = services.draft_new(kind=Draft.Kind.CONCEPT, slug="my-note", user=instructor)
    editor = reverse("authoring:concept", args=["my-note"])
    text = note.text.replace("slug: my-note", "slug: my-note\nsurprise: 1", 1)
    response = instructor_client.post(
        reverse("authoring:concept_publish", args=["my-note"]),
        {"text": text, "base_version": note.version},
    )
    location = response["Location"]
    assert (response.status_code, location.split("?refusal=")[0]) == (302, editor)
    page = instructor_client.get(location).content.decode()
    assert "Not published: 1 problem." in page and 'id="refusal-problems"' in page
    assert "Not published:" not in instructor_client.get(location).content.decode()


@pytest.mark.django_db
def test_another_tab_of_the_editor_neither_shows_nor_takes_a_refusal(instructor, instructor_client):
    # Two tabs of one editor, one session: tab 1's Publish is refused; tab 2 loads the
    # editor of the same draft at the same version before tab 1's redirect lands. Tab 2
    # showed (and took) tab 1's refusal, and tab 1 then showed nothing.
    draft = services.question_new(slug=SLUG, user=instructor)
    refused = _publish(instructor_client, draft.text, draft.version)
    tab_1 = _refused_at(refused)
    tab_2 = instructor_client.get(EDITOR).content.decode()
    assert not _refusal(tab_2) and "Not published:" not in tab_2
    page = instructor_client.get(tab_1).content.decode()
    assert "Not published: 2 problems." in _refusal(page)
    # Tab 1 reloaded (its spent token in the address): told once, nothing sent again.
    version = Draft.objects.get(slug=SLUG).version
    again = instructor_client.get(tab_1).content.decode()
    assert not _refusal(again) and "Not published:" not in again
    assert Draft.objects.get(slug=SLUG).version == version


@pytest.mark.django_db
def test_two_tabs_refused_at_one_draft_version_each_see_their_own_refusal(
    instructor, instructor_client
):
    # Tab 1's Publish and tab 2's upload are both refused at the same draft version: the
    # later refusal took the draft's one place in the session, so tab 1 was told tab 2's
    # upload error and its own refusal was lost.
    draft = services.question_new(slug=SLUG, user=instructor)
    tab_1 = _refused_at(_publish(instructor_client, draft.text, draft.version))
    version = Draft.objects.get(slug=SLUG).version
    tab_2 = _refused_at(_upload(instructor_client, "x.txt", b"hello", version))

    page_1 = instructor_client.get(tab_1).content.decode()
    assert "Not published: 2 problems." in _refusal(page_1) and not _upload_error(page_1)
    page_2 = instructor_client.get(tab_2).content.decode()
    assert _upload_error(page_2).startswith("x.txt is not a .md file")
    assert not _refusal(page_2) and "Not published:" not in page_2


@pytest.mark.django_db
def test_a_token_is_told_only_at_its_own_editor(instructor, instructor_client):
    services.question_new(slug=SLUG, user=instructor)
    services.question_new(slug="other", user=instructor)
    location = _refused_at(_upload(instructor_client, "x.txt", b"hello", 1))
    query = location.split("?", 1)[1]
    other = reverse("authoring:question", args=["other"])
    assert not _upload_error(instructor_client.get(f"{other}?{query}").content.decode())
    concept = services.draft_new(kind=Draft.Kind.CONCEPT, slug=SLUG, user=instructor)
    assert concept.slug == SLUG  # a note of the same slug is another editor too
    note = reverse("authoring:concept", args=[SLUG])
    assert not _upload_error(instructor_client.get(f"{note}?{query}").content.decode())
    assert _upload_error(instructor_client.get(location).content.decode())
    # A made-up token shows nothing.
    assert not _upload_error(instructor_client.get(f"{EDITOR}?refusal=nope").content.decode())


@pytest.mark.django_db
def test_refusals_whose_redirects_are_never_followed_are_kept_to_a_few(
    instructor, instructor_client
):
    # Each refusal waits apart for its own redirect, so one never followed (a closed tab)
    # loses no other; the oldest go first, so the session does not grow without end.
    draft = services.question_new(slug=SLUG, user=instructor)
    locations = [
        _refused_at(_upload(instructor_client, f"n{n}.txt", b"hello", draft.version))
        for n in range(REFUSALS_KEPT + 3)
    ]
    assert len(instructor_client.session[REFUSALS_SESSION_KEY]) == REFUSALS_KEPT
    for n, location in enumerate(locations[:3]):
        assert not _upload_error(instructor_client.get(location).content.decode()), n
    for n, location in reversed(list(enumerate(locations))[3:]):
        error = _upload_error(instructor_client.get(location).content.decode())
        assert error.startswith(f"n{n}.txt is not a .md file"), (n, error)
    assert REFUSALS_SESSION_KEY not in instructor_client.session
