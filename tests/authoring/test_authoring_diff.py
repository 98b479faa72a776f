"""The revision page's diff: line by line where that is cheap, and never a page that hangs."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from authoring import selectors
from questions.models import Question, QuestionRevision


def _revisions(*texts: str) -> list[QuestionRevision]:
    question = Question.objects.create(slug="diffed")
    return [
        QuestionRevision.objects.create(
            question=question,
            number=number,
            content_hash=f"{number}",
            source_text=text,
            title="Diffed",
            summary="s",
            difficulty="core",
            spec={},
            rendered={},
        )
        for number, text in enumerate(texts, start=1)
    ]


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


@pytest.mark.django_db
def test_a_revision_of_many_similar_lines_is_diffed_without_hanging():
    # 3,000 lines drawn from 150 different ones, each under difflib's 1% "popular" cut, in
    # another order: a line-by-line diff took 0.8 s of these, 14 s of 8,000, 210 s of 20,000.
    head, tail = ["---", "slug: diffed"], ["---", "The scenario."]
    old = head + ["- " + "x" * (i % 150) for i in range(3000)] + tail
    new = head + ["- " + "x" * ((i * 7 + 1) % 150) for i in range(3000)] + tail
    _first, second = _revisions(_text(old), _text(new))

    started = time.monotonic()
    _previous, diff, coarse = selectors.revision_diff(second)
    assert time.monotonic() - started < 5
    assert coarse
    # Every changed line is still shown, between the lines both revisions share.
    assert [d.text for d in diff if d.kind == "del"] == [f"-{line}" for line in old[2:-2]]
    assert [d.text for d in diff if d.kind == "add"] == [f"+{line}" for line in new[2:-2]]
    shared = [d.text for d in diff if d.kind == "same"]
    assert shared == [" ---", " slug: diffed", " ---", " The scenario."]
    assert diff[0].text == "@@ -1,3004 +1,3004 @@"


@pytest.mark.django_db
def test_the_revision_page_says_when_its_diff_is_coarse(instructor_client, monkeypatch):
    monkeypatch.setattr(selectors, "DIFF_PAIRS_MAX", 3)
    _revisions(_text(["a", "b", "c", "d"]), _text(["a", "<b>x</b>", "y", "z"]))
    response = instructor_client.get(reverse("authoring:revision", args=["diffed", 2]))
    body = response.content.decode()
    assert response.status_code == 200
    assert "too many changed lines to compare one by one" in body
    assert "+&lt;b&gt;x&lt;/b&gt;" in body and "-d" in body and "<b>x</b>" not in body


@pytest.mark.django_db
def test_a_small_change_to_a_long_revision_is_still_diffed_line_by_line():
    lines = ["- " + "x" * (i % 150) for i in range(8000)]
    changed = [*lines[:4000], "- a new line", *lines[4000:]]
    _first, second = _revisions(_text(lines), _text(changed))
    _previous, diff, coarse = selectors.revision_diff(second)
    assert not coarse
    assert [d.text for d in diff if d.kind in ("add", "del")] == ["+- a new line"]
