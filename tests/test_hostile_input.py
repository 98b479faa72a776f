"""No hostile input crashes the app: every URL, asked with hostile form data or query
parameters by a signed-in instructor who is also a candidate with rows behind every
parameter, answers below 500.

The walk reuses the HEAD test's rows and URL list, so a view added later is covered too.
"""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import get_resolver, reverse

from tests.test_head import _kwargs, _named_patterns
from tests.test_head import signed_in as signed_in  # noqa: F401 (the fixture)

HOSTILE_VALUES = [
    "",
    "\x00\x01<script>alert(1)</script>",
    "9" * 400,
    "-1",
    "²",  # a digit to str.isdigit(), not to int()
    "x" * 300_000,
    "{{ 7*7 }} {% debug %}",
    "---\na: &a [1]\nb: *a\n---\n",
]
FIELDS = [
    "text", "base_version", "version", "mode", "verdict", "message", "share_answer",
    "answer", "step", "reason", "worksheet", "quantity", "expression", "next", "name",
    "fixed_in", "slug", "communication", "grader", "labels",
]  # fmt: skip


def test_no_post_of_hostile_form_data_is_a_server_error(client, signed_in):  # noqa: F811
    # One walk per value in one test: the rows behind the URLs are built once (on
    # PostgreSQL a 500 from the database also fails every later request, which is loud).
    failures = []
    for value in HOSTILE_VALUES:
        for name, params in _named_patterns(get_resolver().url_patterns):
            if name in ("logout", "login"):
                continue  # signing out would end the walk
            url = reverse(name, kwargs=_kwargs(name, params, signed_in))
            data = {field: value for field in FIELDS}
            data["file"] = SimpleUploadedFile("q.md", value.encode("utf-8", "surrogatepass"))
            status = client.post(url, data).status_code
            if status >= 500:
                failures.append(f"{url} with {value[:20]!r}: {status}")
    assert failures == []


def test_no_get_with_hostile_query_parameters_is_a_server_error(client, signed_in):  # noqa: F811
    names = ("after", "step", "page", "version", "graded", "q", "grader", "next")
    failures = []
    for value in HOSTILE_VALUES[:5]:
        for name, params in _named_patterns(get_resolver().url_patterns):
            url = reverse(name, kwargs=_kwargs(name, params, signed_in))
            status = client.get(url, dict.fromkeys(names, value)).status_code
            if status >= 500:
                failures.append(f"{url} with {value[:20]!r}: {status}")
    assert failures == []


def test_nul_characters_are_dropped_before_any_view_sees_them(client, signed_in):  # noqa: F811
    """PostgreSQL refuses NUL in a text column: a pasted NUL must not turn a save into a 500
    (CI runs this file on PostgreSQL too)."""
    from practice.models import StepAnswer

    url = reverse(
        "attempt_draft", kwargs={"attempt_id": signed_in["attempt_id"], "step": "architecture"}
    )
    response = client.post(url, {"text": "gate\x00way", "base_version": "0"})
    assert response.status_code < 300
    answer = StepAnswer.objects.get(attempt_id=signed_in["attempt_id"], step_key="architecture")
    assert answer.text == "gateway"


def test_an_oversized_upload_is_refused_before_it_is_read(client, db, settings):
    """DATA_UPLOAD_MAX_MEMORY_SIZE leaves uploaded files out: a multipart POST of any size to
    any address, signed out (a CSRF cookie is free), was read whole and spooled to a temporary
    file on disk before any view ran (the NUL filter reads every form). It is refused by its
    Content-Length instead, with the too-large page."""
    big = SimpleUploadedFile("big.bin", b"\0" * (settings.MAX_REQUEST_BODY_BYTES + 1))
    response = client.post("/accounts/login/", {"username": "x", "password": "y", "file": big})
    assert response.status_code == 400
    page = " ".join(response.content.decode().split())
    assert "<h1>The request could not be read</h1>" in page and "too large" in page
    # The cap leaves room for the largest legitimate request: an authored question file.
    from questionbank.files import MAX_FILE_BYTES

    assert MAX_FILE_BYTES + settings.DATA_UPLOAD_MAX_MEMORY_SIZE < settings.MAX_REQUEST_BODY_BYTES
