"""The home page's search, as a candidate types or pastes it. A title written with an en dash
("Put a 7B–8B chat model on one GPU") was not found by "7B-8B" typed on a keyboard, and a
search pasted with an invisible character (a zero-width space, a soft hyphen, a direction
mark) found nothing while the box showed a plain word."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from practice.bank import fold

pytestmark = pytest.mark.django_db
CARD_SLUG = re.compile(r'<li class="card question-card" data-slug="([^"]+)"')


def listed(client, q: str) -> list[str]:
    response = client.get(reverse("home"), {"q": q})
    assert response.status_code == 200
    return CARD_SLUG.findall(response.content.decode())


@pytest.mark.parametrize(
    "typed",
    [
        "7B-8B",  # the hyphen on a keyboard, for the title's en dash
        "7B\u20118B",  # a non-breaking hyphen, as a word processor pastes it
        "7B\u20148B",  # an em dash
        "7B\u22128B",  # a minus sign
    ],
)
def test_any_dash_finds_a_title_written_with_an_en_dash(client, bank_loaded, typed):
    assert listed(client, typed) == listed(client, "7B\u20138B") != []


@pytest.mark.parametrize("invisible", ["\u200b", "\u00ad", "\u200e", "\u202e", "\ufeff"])
def test_an_invisible_character_in_the_search_changes_nothing(client, bank_loaded, invisible):
    assert listed(client, f"long{invisible}-context") == listed(client, "long-context") != []
    assert listed(client, f"RAG{invisible}") == listed(client, "RAG") != []


def test_fold_reads_every_dash_as_a_hyphen_and_drops_format_characters():
    assert fold("7B\u20138B\u2014x\u2212y\u2011z") == "7b-8b-x-y-z"
    assert fold("R\u200bA\u00adG\ufeff") == "rag"
