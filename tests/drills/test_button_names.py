"""The buttons of "What to practise next" each say which question or drills they start,
since the box can hold several with the same visible words ("Open the question")."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User

from accounts.instructors import instructor_grant
from drills import selectors, services


@pytest.fixture
def candidate(content_loaded):
    return User.objects.create_user("learner", password="a-long-Passphrase-42")


def accessible_names(html: str) -> list[str]:
    """The names of the box's buttons and button links: their text, hidden parts included."""
    box = html.split('id="drill-next-h"')[1].split("Due today")[0]
    found = re.findall(r'<(?:button|a class="button)[^>]*>(.*?)</(?:button|a)>', box, re.S)
    return [re.sub(r"<[^>]+>", "", name).strip() for name in found]


def test_each_button_of_the_next_box_names_what_it_starts(candidate, client):
    teacher = User.objects.create_user("teacher", password="a-long-Passphrase-42")
    instructor_grant(teacher)
    services.assignment_create(
        instructor=teacher, candidate=candidate, question_slug="long-context-rag"
    )
    services.assignment_create(instructor=teacher, candidate=candidate, kind="ttft")
    recommended = selectors.recommendation(user=candidate)
    assert recommended.action == "Open the question"
    client.force_login(candidate)
    names = accessible_names(client.get("/").content.decode())
    assert len(names) == 3 and len(set(names)) == 3, names
    assert f"Open the question: {recommended.title}" in names
    assert any(n.startswith("Open the question: ") and "RAG" in n for n in names), names
    assert any(n.startswith("Start 5 drills: ") for n in names), names
