"""Every concept note renders its math and fits a phone: no LaTeX source reaches the page,
and no formula pushes the page wider than a 360 px screen."""

import re

import pytest

from questions.models import Concept

# A dollar, then LaTeX up to a \times with no dollar between: math the renderer left as source
# (a closing dollar glued to a unit, or a space before it).
LEFTOVER_LATEX = re.compile(r"\$[^$<]*\\(times|text|frac|approx)")


@pytest.mark.django_db
def test_no_concept_note_shows_latex_source(client, content_loaded) -> None:
    slugs = list(Concept.objects.values_list("slug", flat=True))
    assert len(slugs) >= 20
    leftovers = {}
    for slug in slugs:
        response = client.get(f"/concepts/{slug}/")
        assert response.status_code == 200, slug
        found = LEFTOVER_LATEX.findall(response.content.decode())
        if found:
            leftovers[slug] = found
    assert leftovers == {}


@pytest.mark.browser
@pytest.mark.one_database
def test_every_concept_note_fits_a_phone(page, live_server_url) -> None:
    slugs = list(Concept.objects.values_list("slug", flat=True))
    assert len(slugs) >= 20
    page.set_viewport_size({"width": 360, "height": 740})
    wide = {}
    for slug in slugs:
        page.goto(f"{live_server_url}/concepts/{slug}/")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 360:
            wide[slug] = width
    assert wide == {}
    assert page.js_errors == []
