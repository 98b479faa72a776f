"""Sign-up and log-in under abuse: look-alike names, weak passwords, open redirects, spraying."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from accounts.usernames import username_look_alike, username_skeleton

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-Passphrase-42"


def _signup(client, username, password=PASSWORD, **extra):
    data = {"username": username, "password1": password, "password2": password}
    return client.post(reverse("signup") + extra.pop("query", ""), data, **extra)


def test_a_cyrillic_look_alike_of_an_existing_name_is_refused(client):
    User.objects.create_user("paypal", password=PASSWORD)
    response = _signup(client, "раураl")  # Cyrillic р, а, у
    assert response.status_code == 200
    assert "looks the same as an account that already exists" in response.content.decode()
    assert not User.objects.filter(username="раураl").exists()


def test_a_look_alike_of_an_existing_non_latin_name_is_refused_too():
    User.objects.create_user("аda", password=PASSWORD)  # Cyrillic а
    assert username_look_alike("ada") == "аda"
    assert username_look_alike("ADA") == "аda"


def test_a_name_in_another_alphabet_that_imitates_nobody_is_welcome(client):
    User.objects.create_user("ada", password=PASSWORD)
    response = _signup(client, "дмитрий")
    assert response.status_code == 302
    assert User.objects.filter(username="дмитрий").exists()


def test_full_width_letters_are_normalised_so_they_cannot_copy_a_name(client):
    User.objects.create_user("ada", password=PASSWORD)
    response = _signup(client, "ａｄａ")  # full-width: NFKC makes it "ada"
    assert response.status_code == 200
    assert User.objects.filter(username__iexact="ada").count() == 1


def test_skeleton_maps_look_alikes_to_latin_and_folds_case():
    assert username_skeleton("АDA") == username_skeleton("ada") == "ada"


def test_a_weak_password_is_refused_with_the_reason(client):
    response = _signup(client, "newcomer", password="weak3")
    body = response.content.decode()
    assert response.status_code == 200
    assert "too short" in body
    assert not User.objects.filter(username="newcomer").exists()


def _autofocused(html: str) -> list[str]:
    return re.findall(r"<input[^>]*\bautofocus\b[^>]*>", html)


def test_a_refused_sign_up_puts_the_cursor_on_the_first_field_in_error(client):
    refused = client.post(
        reverse("signup"),
        {"username": "newcomer", "password1": PASSWORD, "password2": PASSWORD + "x"},
    )
    # The error is filed under the confirmation, but both boxes come back empty: the cursor
    # goes to the password, typed first.
    focused = _autofocused(refused.content.decode())
    assert len(focused) == 1 and 'name="password1"' in focused[0], focused
    taken = client.post(
        reverse("signup"), {"username": "", "password1": PASSWORD, "password2": PASSWORD}
    )
    focused = _autofocused(taken.content.decode())
    assert len(focused) == 1 and 'name="username"' in focused[0], focused
    # A fresh form still starts at the username.
    focused = _autofocused(client.get(reverse("signup")).content.decode())
    assert len(focused) == 1 and 'name="username"' in focused[0], focused


def test_next_to_plain_http_is_dropped_on_an_https_site(client, settings):
    settings.ALLOWED_HOSTS = ["example.com"]
    response = _signup(
        client,
        "secure",
        query="?next=http://example.com/questions/",
        secure=True,
        HTTP_HOST="example.com",
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("home")


def test_next_on_the_same_site_is_followed(client):
    response = _signup(client, "heading", query="?next=/concepts/")
    assert response["Location"] == "/concepts/"


@pytest.mark.parametrize("bad", ["history", "9999", "javascript:alert(1)", "//evil.example/"])
def test_a_next_that_is_not_a_path_on_this_site_goes_home(client, bad):
    """A view name or a bare word once reached redirect()'s reverse() and crashed (500)."""
    response = _signup(client, f"heading{len(bad)}", query=f"?next={bad}")
    assert response.status_code == 302
    assert response["Location"] == reverse("home")
    assert client.get(reverse("signup") + f"?next={bad}")["Location"] == reverse("home")


def _login(client, username, password="wrong-guess"):
    return client.post(reverse("login"), {"username": username, "password": password})


def test_one_account_from_one_address_is_locked_after_five_failures(client):
    User.objects.create_user("ada", password=PASSWORD)
    for _ in range(4):
        assert _login(client, "ada").status_code == 200
    locked = _login(client, "ada")
    assert locked.status_code == 429  # the fifth failure locks
    # The page says what is paused: this account from this address, not every log-in.
    assert "to this account from your address" in " ".join(locked.content.decode().split())
    # Even the right password is refused while locked out.
    assert _login(client, "ada", PASSWORD).status_code == 429


def test_a_name_longer_than_any_account_gets_the_form_again(client):
    """Pasted into the name box: it once reached axes' record of the failure, a 255-character
    column that PostgreSQL refused (a 500)."""
    response = _login(client, "pasted " * 50)
    assert response.status_code == 200
    assert "at most 150 characters" in response.content.decode()


def test_password_spraying_from_one_address_is_cut_off_before_the_40th_guess(client):
    for n in range(10):
        User.objects.create_user(f"user{n}", password=PASSWORD)
    statuses = [_login(client, f"user{n}").status_code for _ in range(4) for n in range(10)]
    assert 429 in statuses
    first_refused = statuses.index(429)
    assert first_refused < 39
    assert all(s == 429 for s in statuses[first_refused:])
    # Each name saw only 4 guesses, under the per-account limit: the address limit did it.
    assert first_refused == 19  # the 20th failure from the address locks it


def test_another_address_is_not_locked_by_a_sprayer(client):
    User.objects.create_user("ada", password=PASSWORD)
    for n in range(25):
        _login(client, f"nobody{n}")
    other = client.post(
        reverse("login"),
        {"username": "ada", "password": PASSWORD},
        REMOTE_ADDR="10.9.8.7",
    )
    assert other.status_code == 302


def test_sign_ups_from_one_address_are_throttled_with_a_clear_429(client, settings):
    settings.SIGNUPS_PER_ADDRESS_PER_HOUR = 3
    for n in range(3):
        assert _signup(client, f"person{n}").status_code == 302
        client.post(reverse("logout"))
    refused = _signup(client, "person3")
    assert refused.status_code == 429
    assert "Too many sign-ups from your address" in refused.content.decode()
    assert not User.objects.filter(username="person3").exists()


def test_failed_sign_up_forms_count_too(client, settings):
    settings.SIGNUPS_PER_ADDRESS_PER_HOUR = 2
    for _ in range(2):
        assert _signup(client, "someone", password="weak3").status_code == 200
    assert _signup(client, "someone").status_code == 429


def test_the_sign_up_throttle_is_per_address(client, settings):
    settings.SIGNUPS_PER_ADDRESS_PER_HOUR = 1
    assert _signup(client, "first", REMOTE_ADDR="10.1.1.1").status_code == 302
    client.post(reverse("logout"))
    assert _signup(client, "second", REMOTE_ADDR="10.1.1.1").status_code == 429
    assert _signup(client, "third", REMOTE_ADDR="10.1.1.2").status_code == 302


def test_behind_a_trusted_proxy_the_forwarded_address_is_throttled(client, settings):
    # With one trusted proxy, clients behind it are told apart by the address it forwards.
    settings.SIGNUPS_PER_ADDRESS_PER_HOUR = 1
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = {"REMOTE_ADDR": "10.0.0.1"}  # the proxy writes the address it received from
    assert _signup(client, "alice", HTTP_X_FORWARDED_FOR="203.0.113.5", **proxy).status_code == 302
    client.post(reverse("logout"))
    # A client's own X-Forwarded-For entry, left of the proxy's, does not buy a fresh bucket.
    spoofed = {"HTTP_X_FORWARDED_FOR": "198.51.100.7, 203.0.113.5", **proxy}
    assert _signup(client, "bob", **spoofed).status_code == 429
    assert _signup(client, "carol", HTTP_X_FORWARDED_FOR="203.0.113.6", **proxy).status_code == 302


@pytest.mark.parametrize(
    "proxies,forwarded,address",
    [
        (0, "203.0.113.5", "10.0.0.1"),  # no proxy trusted: the header is the client's word
        (1, "203.0.113.5", "203.0.113.5"),
        (1, "198.51.100.7, 203.0.113.5", "203.0.113.5"),
        (2, "203.0.113.5, 10.0.0.2", "203.0.113.5"),
        (2, "10.0.0.2", "10.0.0.1"),  # fewer entries than proxies: only the peer is known
    ],
)
def test_the_client_address_is_the_nth_forwarded_entry_from_the_right(
    rf, settings, proxies, forwarded, address
):
    from axes.helpers import get_client_ip_address

    settings.TRUSTED_PROXY_COUNT = proxies
    request = rf.get("/", HTTP_X_FORWARDED_FOR=forwarded, REMOTE_ADDR="10.0.0.1")
    assert get_client_ip_address(request) == address
