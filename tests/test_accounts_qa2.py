"""Log-out's `next` as a visitor meets it: a bare word or the log-out page itself."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-Passphrase-42"


@pytest.mark.parametrize(
    "bad", ["history", " /concepts/", "//evil.example/", "https://evil.example/"]
)
def test_log_out_goes_home_when_next_is_not_a_path_on_this_site(client, bad):
    """A bare word was redirected to as it is: relative to /accounts/logout/, a 404."""
    client.force_login(User.objects.create_user("ada", password=PASSWORD))
    response = client.post(reverse("logout"), {"next": bad})
    assert response.status_code == 302
    assert response["Location"] == reverse("home")
    assert not client.get(reverse("home")).wsgi_request.user.is_authenticated


def test_log_out_with_next_at_itself_is_not_the_admins_page(client):
    """next=/accounts/logout/ rendered django.contrib.admin's 'Logged out | Django site admin'."""
    client.force_login(User.objects.create_user("ada", password=PASSWORD))
    response = client.post(reverse("logout"), {"next": reverse("logout")})
    assert "Django" not in response.content.decode()
    assert response.status_code == 302
    assert not client.get(reverse("home")).wsgi_request.user.is_authenticated


def test_log_out_goes_on_to_a_path_on_this_site(client):
    client.force_login(User.objects.create_user("ada", password=PASSWORD))
    assert client.post(reverse("logout"), {"next": "/concepts/"})["Location"] == "/concepts/"


def test_guessing_the_old_password_on_the_change_page_is_paused(client):
    """The change-password form checked the old password with no limit: anyone at a signed-in
    browser could try passwords there without end, where log-in locks out after five."""
    from django.core.cache import cache

    cache.clear()
    user = User.objects.create_user("ada", password=PASSWORD)
    client.force_login(user)
    new = {"new_password1": "Zz9-another-pass", "new_password2": "Zz9-another-pass"}
    for guess in range(5):
        response = client.post(reverse("password_change"), {"old_password": f"guess{guess}", **new})
        assert response.status_code == 200
        assert "Your old password was entered incorrectly" in response.content.decode()
    response = client.post(reverse("password_change"), {"old_password": PASSWORD, **new})
    assert response.status_code == 429
    assert "Too many wrong passwords" in response.content.decode()
    user.refresh_from_db()
    assert user.check_password(PASSWORD)  # the right one, once paused, changes nothing


def test_a_mistyped_new_password_does_not_count_as_a_guess(client):
    from django.core.cache import cache

    cache.clear()
    user = User.objects.create_user("ada", password=PASSWORD)
    client.force_login(user)
    for _ in range(6):
        client.post(
            reverse("password_change"),
            {"old_password": PASSWORD, "new_password1": "Zz9-another-pass", "new_password2": "x"},
        )
    response = client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": "Zz9-another-pass",
         "new_password2": "Zz9-another-pass"},
    )  # fmt: skip
    assert response["Location"] == reverse("password_change_done")


def _autofocused(html: str) -> list[str]:
    return re.findall(r"<input[^>]*\bautofocus\b[^>]*>", html)


def test_a_refused_password_change_puts_the_cursor_on_the_field_to_fix(client):
    client.force_login(User.objects.create_user("changer", password=PASSWORD))
    new = "an-Other-passphrase-9"
    mismatch = client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new + "x"},
    )
    # Filed under the confirmation; both new boxes come back empty: the first one is typed
    # first.
    focused = _autofocused(mismatch.content.decode())
    assert len(focused) == 1 and 'name="new_password1"' in focused[0], focused
    wrong_old = client.post(
        reverse("password_change"),
        {"old_password": "not-it", "new_password1": new, "new_password2": new},
    )
    focused = _autofocused(wrong_old.content.decode())
    assert len(focused) == 1 and 'name="old_password"' in focused[0], focused
