"""A slug past the 50-character limit is refused with its length and the limit, what was
typed kept whole in its box: no maxlength cuts a paste short and creates another slug."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from authoring.models import Draft


def _slug_input(page: str) -> str:
    return re.search(r'<input[^>]*id="new-slug"[^>]*>', page).group()


@pytest.mark.django_db
def test_the_slug_box_has_no_maxlength(instructor_client):
    page = instructor_client.get(reverse("authoring:index")).content.decode()
    assert "maxlength" not in _slug_input(page)


@pytest.mark.django_db
def test_a_long_slug_is_refused_with_its_length_and_kept_whole(instructor_client):
    slug = "-".join(["kv-cache-offload"] * 7) + "-x"
    slug = slug[:120]
    assert len(slug) == 120 and not slug.endswith("-")
    response = instructor_client.post(reverse("authoring:create"), {"slug": slug})
    assert response.status_code == 422
    page = response.content.decode()
    assert "This slug is 120 characters; the limit is 50, so nothing was created." in page
    assert f'value="{slug}"' in _slug_input(page)
    assert not Draft.objects.exists()
