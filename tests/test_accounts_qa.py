"""Accounts as a visitor meets them: look-alike names with digits or a capital I, the
password pages, where log-in goes on to, and log-out by address."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from accounts.usernames import username_look_alike

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-Passphrase-42"


def _signup(client, username):
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    return client.post(reverse("signup"), data)


def test_a_look_alike_with_a_digit_is_refused(client):
    """The confusables data maps "2" outside ASCII, which once hid the name from the check."""
    User.objects.create_user("paypal2", password=PASSWORD)
    response = _signup(client, "раураl2")  # Cyrillic р, а, у
    assert "looks the same as an account that already exists" in response.content.decode()
    assert not User.objects.filter(username="раураl2").exists()


@pytest.mark.parametrize("existing", ["Ivan", "ivan"])
@pytest.mark.parametrize("capital_i", ["\u0406", "\u0399", "\u04c0"])  # Cyrillic, Greek, palochka
def test_a_capital_i_from_another_alphabet_is_a_look_alike(existing, capital_i):
    User.objects.create_user(existing, password=PASSWORD)
    assert username_look_alike(f"{capital_i}van") == existing


def test_an_ascii_l_is_still_not_an_i():
    """ASCII names among themselves are Django's own case-insensitive check: no wider."""
    User.objects.create_user("ivan", password=PASSWORD)
    assert username_look_alike("lvan") is None
    assert username_look_alike("ivan2") is None


def test_the_password_pages_are_the_sites_own_not_the_admins(client):
    user = User.objects.create_user("ada", password=PASSWORD)
    client.force_login(user)
    form = client.get(reverse("password_change")).content.decode()
    assert "Change your password" in form
    assert "Django administration" not in form
    response = client.post(
        reverse("password_change"),
        {"old_password": "wrong", "new_password1": "x", "new_password2": "x"},
    )
    assert 'class="field-errors"' in response.content.decode()
    done = client.get(reverse("password_change_done")).content.decode()
    assert "Your new password is in effect" in done
    assert "Django administration" not in done


@pytest.mark.parametrize(
    "bad", ["history", " /concepts/", "javascript:alert(1)", "//evil.example/"]
)
def test_log_in_goes_home_when_next_is_not_a_path_on_this_site(client, bad):
    """A bare word was redirected to as it is: relative to /accounts/login/, a 404."""
    User.objects.create_user("ada", password=PASSWORD)
    page = client.get(reverse("login"), {"next": bad}).content.decode()
    assert 'name="next"' not in page
    response = client.post(reverse("login"), {"username": "ada", "password": PASSWORD, "next": bad})
    assert response.status_code == 302
    assert response["Location"] == reverse("home")


def test_log_in_goes_on_to_a_path_on_this_site(client):
    User.objects.create_user("ada", password=PASSWORD)
    response = client.post(
        reverse("login"), {"username": "ada", "password": PASSWORD, "next": "/concepts/"}
    )
    assert response["Location"] == "/concepts/"


def test_the_log_out_address_opened_in_the_browser_offers_the_button(client):
    """A GET of /accounts/logout/ was a blank 405 page."""
    assert client.get(reverse("logout"))["Location"] == reverse("home")
    client.force_login(User.objects.create_user("ada", password=PASSWORD))
    page = client.get(reverse("logout"))
    assert page.status_code == 200
    assert f'action="{reverse("logout")}"' in page.content.decode()
    assert client.get(reverse("home")).wsgi_request.user.is_authenticated  # GET changes nothing
    assert client.post(reverse("logout"))["Location"] == reverse("home")
    assert not client.get(reverse("home")).wsgi_request.user.is_authenticated
