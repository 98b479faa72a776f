"""The instructor's Assign form starts with no choice made, so a note typed alone assigns
nothing, and lists the questions by the titles it shows."""

from __future__ import annotations

import re

from drills import selectors
from drills.models import Assignment


def options(html: str) -> list[tuple[str, str]]:
    select = html.split('id="assign-what"')[1].split("</select>")[0]
    return re.findall(r'<option value="([^"]*)"( selected)?>', select)


def test_the_form_opens_on_an_empty_required_choice(instructor, candidate, client):
    client.force_login(instructor)
    html = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    first, *rest = options(html)
    assert first == ("", " selected")
    assert all(not selected for _, selected in rest)


def test_a_note_alone_is_refused_and_kept_with_the_choice_marked(instructor, candidate, client):
    client.force_login(instructor)
    response = client.post(
        f"/drills/instructor/candidates/{candidate.pk}/assign/", {"what": "", "note": "Try it"}
    )
    html = response.content.decode()
    assert response.status_code == 422
    assert "Choose a drill set or a question to assign: nothing was assigned." in html
    assert 'value="Try it"' in html
    select = html.split('id="assign-what"')[1].split(">")[0]
    assert 'aria-invalid="true"' in select and 'aria-describedby="assign-error"' in select
    assert not Assignment.objects.exists()


def test_questions_are_listed_by_title(bank_loaded):
    titles = [label for value, label in selectors.assignment_choices() if value.startswith("q")]
    assert len(titles) > 2
    assert titles == sorted(titles, key=str.casefold)
