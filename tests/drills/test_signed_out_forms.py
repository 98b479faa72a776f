"""A drills form posted after the session expired leads, once signed in again, back to the
page it was sent from (its own address answers only a POST: a 405), and the instructor's
Assign form says that nothing was assigned, filled in again as it was sent."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from drills import services
from drills.models import Assignment
from tests.drills.conftest import PASSWORD


def next_of(response) -> str:
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert location.path == "/accounts/login/"
    return parse_qs(location.query)["next"][0]


@pytest.mark.parametrize("path", ["/drills/sets/", "/drills/assignments/{pk}/start/"])
def test_a_start_posted_signed_out_signs_in_back_to_the_page_it_came_from(
    instructor, candidate, client, path
):
    assignment = services.assignment_create(instructor=instructor, candidate=candidate, kind="ttft")
    response = client.post(
        path.format(pk=assignment.pk), {"kind": "ttft"}, HTTP_REFERER="http://testserver/drills/"
    )
    assert next_of(response) == "/drills/"
    # Signing in there leads to the page, which answers a GET.
    signed_in = client.post(
        "/accounts/login/", {"username": "learner", "password": PASSWORD, "next": "/drills/"}
    )
    assert signed_in.status_code == 302 and signed_in["Location"] == "/drills/"
    assert client.get("/drills/").status_code == 200


def test_a_start_posted_signed_out_from_another_site_goes_home(instructor, candidate, client):
    response = client.post("/drills/sets/", HTTP_REFERER="https://elsewhere.example/drills/")
    assert next_of(response) == "/"


def test_an_answer_posted_signed_out_signs_in_back_to_its_set(candidate, client):
    drill_set = services.drill_set_start(user=candidate, kind="ttft")
    response = client.post(f"/drills/sets/{drill_set.pk}/drills/1/answer/", {"answer": "1"})
    assert next_of(response) == f"/drills/sets/{drill_set.pk}/"


def test_an_assignment_posted_signed_out_says_nothing_was_assigned_after_signing_in(
    instructor, candidate, client
):
    page = f"/drills/instructor/candidates/{candidate.pk}/"
    response = client.post(
        f"{page}assign/",
        {"what": "drill:ttft", "note": "Do these", "due": "2026-12-10"},
        HTTP_REFERER=f"http://testserver{page}",
    )
    assert next_of(response) == page
    assert not Assignment.objects.exists()
    signed_in = client.post(
        "/accounts/login/", {"username": "teacher", "password": PASSWORD, "next": page}
    )
    assert signed_in["Location"] == page
    html = client.get(page).content.decode()
    assert "You were signed out, so nothing was assigned" in html
    # The form comes back as it was sent: the choice, the note and the due date.
    assert '<option value="drill:ttft" selected>' in html
    assert 'value="Do these"' in html and 'value="2026-12-10"' in html
    # Said, and filled in, once.
    again = client.get(page).content.decode()
    assert "nothing was assigned" not in again and 'value="Do these"' not in again
    assert '<option value="drill:ttft" selected>' not in again


def test_a_plain_sign_in_says_nothing_of_unsent_forms(instructor, client):
    client.post("/accounts/login/", {"username": "teacher", "password": PASSWORD, "next": "/"})
    assert "You were signed out" not in client.get("/").content.decode()


def test_a_kept_form_is_dropped_when_signing_in_goes_elsewhere(instructor, candidate, client):
    """Kept only for the page the sign-in goes on to: signing in towards another page drops
    it, so it never fills the form on a later visit, or for whoever signs in next here."""
    page = f"/drills/instructor/candidates/{candidate.pk}/"
    client.post(
        f"{page}assign/",
        {"what": "drill:ttft", "note": "Do these"},
        HTTP_REFERER=f"http://testserver{page}",
    )
    client.post("/accounts/login/", {"username": "teacher", "password": PASSWORD, "next": "/"})
    html = client.get(page).content.decode()
    assert 'value="Do these"' not in html
    assert '<option value="drill:ttft" selected>' not in html
