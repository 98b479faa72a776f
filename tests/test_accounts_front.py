"""The site's front as a first-time visitor meets it: the account pages' links, where the
header says you are, a form sent without a cookie, and long echoed errors on a phone."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

PASSWORD = "a-long-Passphrase-42"


@pytest.mark.django_db
def test_the_sign_up_pages_log_in_link_keeps_where_the_visitor_was_heading(client):
    """The log-in page's "Create an account" kept `next`; the way back dropped it, so a
    visitor who already had an account landed on the home page instead of their history."""
    page = client.get(reverse("signup"), {"next": "/history/"}).content.decode()
    assert f'href="{reverse("login")}?next=/history/"' in page


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["history", "password_change"])
def test_the_header_marks_the_account_page_you_are_on(client, name):
    client.force_login(User.objects.create_user("ada", password=PASSWORD))
    header = client.get(reverse(name)).content.decode().split("</header>")[0]
    assert f'href="{reverse(name)}" aria-current="page"' in header
    assert header.count('aria-current="page"') == 1


@pytest.mark.django_db
def test_a_form_sent_without_any_cookie_says_to_allow_cookies():
    """A browser that blocks cookies was told it had signed in or out in another tab and to
    reload and send again, which can never work for it."""
    response = Client(enforce_csrf_checks=True).post(
        reverse("login"), {"username": "ada", "password": PASSWORD}
    )
    assert response.status_code == 403
    page = " ".join(response.content.decode().split())
    assert "allow them for this site" in page
    assert "another tab" not in page


@pytest.mark.django_db
def test_a_form_sent_with_a_stale_token_does_not_talk_about_cookies():
    browser = Client(enforce_csrf_checks=True)
    browser.get(reverse("login"))  # the CSRF cookie is set
    response = browser.post(
        reverse("login"),
        {"username": "ada", "password": PASSWORD, "csrfmiddlewaretoken": "x" * 64},
    )
    assert response.status_code == 403
    page = " ".join(response.content.decode().split())
    assert "another tab" in page and "allow them for this site" not in page


@pytest.mark.browser
@pytest.mark.one_database
def test_a_long_echoed_error_wraps_instead_of_widening_a_phone_page(browser, live_server_url):
    """An error that echoes a long typed value (an unknown key from an edited link, a pasted
    URL) widened the whole page at 360 px wherever a page had no rule of its own (the planner
    had one). The site's error boxes are filled here with such a value, as a page would."""
    context = browser.new_context(viewport={"width": 360, "height": 800})
    page = context.new_page()
    page.goto(f"{live_server_url}{reverse('signup')}")
    page.evaluate(
        """(value) => {
            const main = document.querySelector("main");
            for (const cls of ["field-errors", "form-errors", "message message-error"]) {
                const box = document.createElement("p");
                box.className = cls;
                box.textContent = `Select a valid choice. ${value} is not one of them.`;
                main.prepend(box);
            }
        }""",
        "x" * 400,
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    context.close()


@pytest.mark.django_db
def test_a_message_list_keeps_its_list_role_and_is_announced(client):
    """role="status" on the <ul> itself made it no list, its items orphaned (axe: listitem);
    the drills page's refusal was the same."""
    import re

    from django.contrib import messages
    from django.contrib.messages import get_messages
    from django.contrib.messages.storage.fallback import FallbackStorage
    from django.template.loader import render_to_string
    from django.test import RequestFactory

    request = RequestFactory().get("/")
    request.session = client.session
    request._messages = FallbackStorage(request)
    messages.success(request, "Saved.")
    request.user = User.objects.create_user("msg", password=PASSWORD)
    html = render_to_string("base.html", {"messages": get_messages(request)}, request=request)
    assert re.search(r'<div role="status"><ul class="messages">\s*<li[^>]*>Saved\.</li>', html)
    assert not re.search(r"<(ul|ol)[^>]*role=", html)
    client.force_login(request.user)
    refused = client.post(reverse("drills:set_start"), {"kind": "no-such-kind"}).content.decode()
    assert not re.search(r"<(ul|ol)[^>]*role=", refused)
    assert '<div class="messages" role="alert"><p class="message message-error">' in refused
