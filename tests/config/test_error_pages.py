"""The error pages a user can meet in production (DEBUG off, as in tests): each says what
happened and what to do next in the site's own layout, not Django's bare default."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings


@pytest.mark.django_db
def test_a_missing_page_says_so_and_links_back(client):
    response = client.get("/questions/no-such-question/")
    assert response.status_code == 404
    page = " ".join(response.content.decode().split())
    assert "<h1>Page not found</h1>" in page and 'href="/"' in page
    assert 'class="site-header"' in page  # the site's layout, with its navigation


@pytest.mark.django_db
def test_an_expired_form_says_nothing_was_saved_and_how_to_send_it_again():
    User.objects.create_user("casey", password="a-long-Passphrase-42")
    browser = Client(enforce_csrf_checks=True)
    response = browser.post(
        "/accounts/login/", {"username": "casey", "password": "a-long-Passphrase-42"}
    )
    assert response.status_code == 403
    page = " ".join(response.content.decode().split())
    assert "<h1>This form has expired</h1>" in page
    assert "Nothing was saved from it." in page and "reload the page" in page


@pytest.mark.django_db
def test_a_request_too_large_to_read_is_a_page_that_says_so(client_in_session):
    body = {"text": "x" * (3 * 1024 * 1024)}  # past DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB)
    response = client_in_session.post("/diagram/preview/", body)
    assert response.status_code == 400
    page = " ".join(response.content.decode().split())
    assert "<h1>The request could not be read</h1>" in page and "too large" in page


@pytest.mark.django_db
def test_a_body_past_the_request_limit_is_told_to_the_signed_in_user_with_a_way_back(
    client_in_session,
):
    # A file upload over the request limit is refused by its length, before any view reads it;
    # the page still knows who is signed in and leads back to the page the form was on.
    body = b"x" * (settings.MAX_REQUEST_BODY_BYTES + 1)
    response = client_in_session.generic(
        "POST",
        "/author/questions/some-question/upload/",
        body,
        content_type="multipart/form-data; boundary=b",
        HTTP_REFERER="https://elsewhere.example/author/questions/some-question/?tab=2",
    )
    assert response.status_code == 400
    page = " ".join(response.content.decode().split())
    assert "<h1>The request could not be read</h1>" in page and "choose a smaller file" in page
    assert "Signed in as <strong" in page and "Log in" not in page
    # The Referer's path only: the link cannot lead off the site.
    back = '<a href="/author/questions/some-question/?tab=2">Back to the page you were on</a>'
    assert back in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("referer", "back"),
    [
        ("", None),
        ("javascript:alert(1)", None),
        ("/\\evil.example", None),  # a browser reads /\ as //, another site
        ("//evil.example/x", "/x"),  # another site's address: its path, on this site
    ],
)
def test_a_400_leads_back_only_to_a_page_of_this_site(client, referer, back):
    body = {"text": "x" * (3 * 1024 * 1024)}
    response = client.post("/diagram/preview/", body, HTTP_REFERER=referer)
    assert response.status_code == 400
    page = response.content.decode()
    assert "evil" not in page and 'href="/"' in page
    if back is None:
        assert "Back to the page you were on" not in page
    else:
        assert f'<a href="{back}">Back to the page you were on</a>' in page


def test_a_refused_host_is_the_sites_400_page(client):
    response = client.get("/", HTTP_HOST="not-allowed.example")
    assert response.status_code == 400
    assert "<h1>The request could not be read</h1>" in " ".join(response.content.decode().split())


@pytest.fixture
def client_in_session(client):
    client.force_login(User.objects.create_user("sam", password="a-long-Passphrase-42"))
    return client


@override_settings(ROOT_URLCONF="tests.config.urls_failing")
def test_a_server_error_is_the_sites_page_and_needs_no_database():
    """The 500 page is rendered without a request, so it cannot query the database that may
    be what failed: this test has no database access at all."""
    response = Client(raise_request_exception=False).get("/failing/")
    assert response.status_code == 500
    page = " ".join(response.content.decode().split())
    assert "<h1>Something went wrong on our side</h1>" in page
    assert "Drafts saved before it are kept" in page and 'href="/healthz"' in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("address", "above"),
    # /mock/1/invite/ takes a POST only: the link goes past it, to the session's page.
    [
        ("/drills/sets/", "/drills/"),
        ("/planner/evaluate/", "/planner/"),
        ("/mock/1/invite/revoke/", "/mock/1/"),
    ],
)
def test_a_visit_to_an_address_for_a_form_is_a_page_that_leads_up(
    client_in_session, address, above
):
    response = client_in_session.get(address)
    assert response.status_code == 405
    assert "POST" in response["Allow"]
    page = " ".join(response.content.decode().split())
    assert "<h1>This address is for a form</h1>" in page and "Nothing was changed." in page
    assert f'<a href="{above}">{above}</a>, the page above this address' in page
    assert 'class="site-header"' in page


def test_a_start_visited_leads_to_its_question(content_loaded, client_in_session):
    slug = "chat-api-50qps"
    response = client_in_session.get(f"/questions/{slug}/start/")
    assert response.status_code == 405
    assert f'href="/questions/{slug}/"' in response.content.decode()


@pytest.mark.django_db
def test_an_htmx_request_by_the_wrong_method_gets_the_bare_answer(client_in_session):
    response = client_in_session.get("/drills/sets/", headers={"HX-Request": "true"})
    assert response.status_code == 405 and response.content == b""
