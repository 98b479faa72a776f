"""A session that expires while a candidate works without JavaScript.

Their Submit (or Check) posted the whole answer form to a signed-out session: it was
redirected to the log-in page, which dropped everything typed, and signing in went on to the
POST-only address, a blank 405 page. Now the post answers with what was typed, to copy, and a
way to sign in again; and an address that only takes posts, opened in the browser (as the
log-in's `next`), goes to the page it belongs to.
"""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

from html import unescape

import pytest
from django.test import Client
from django.urls import reverse

from practice import services as flow
from practice.models import StepAnswer, Submission
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    ARCHITECTURE_ANSWER,
    attempt,
    candidate,
    client_in,
    step_url,
)

TYPED = "Two <b>routers</b> & a queue — “p99” ≤ 300 ms\nsecond line"
WORKSHEET = "t = 15.2 GB / (0.7 * 1008 GB/s) in ms"


def _signed_out(attempt):
    """A browser whose session has expired: a fresh client (the test client skips CSRF)."""
    return Client()


def test_an_expired_submit_without_javascript_gives_the_typed_text_back(attempt):
    response = _signed_out(attempt).post(
        step_url(attempt, "architecture", "submit"),
        {"text": TYPED, "diagram": "flowchart LR\n  a --> b", "base_version": "0", "seconds": "3"},
    )
    assert response.status_code == 403
    page = response.content.decode()
    assert "<b>routers</b>" not in page  # escaped, never markup
    assert TYPED in unescape(page)
    assert "flowchart LR\n  a --&gt; b" in page
    assert "not saved" in page.lower()
    # Signing in again leads back to the step page, not to the address the form posted to.
    login = reverse("login") + "?next=" + step_url(attempt, "architecture").replace("/", "%2F")
    assert login in page
    assert not Submission.objects.exists()


def test_an_expired_check_without_javascript_gives_the_worksheet_back(attempt):
    response = _signed_out(attempt).post(
        reverse("attempt_check", args=[attempt.pk]),
        {"worksheet": WORKSHEET, "expr_tpot_floor": "t", "text": "", "base_version": "0"},
    )
    assert response.status_code == 403
    page = unescape(response.content.decode())
    assert WORKSHEET in page
    assert "step=estimate" not in page
    assert "%2Fsteps%2Festimate%2F" in response.content.decode()


def test_an_expired_htmx_post_still_redirects_to_the_log_in_page(attempt):
    """requests.js reads the redirect to the log-in page as "your session has expired"."""
    response = _signed_out(attempt).post(
        step_url(attempt, "architecture", "draft"),
        {"text": TYPED, "base_version": "0"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(
    "action, lands_on",
    [("submit", "architecture"), ("draft", "architecture")],
)
def test_a_post_only_step_address_opened_in_the_browser_goes_to_its_step(
    client_in, attempt, action, lands_on
):
    for method in (client_in.get, client_in.head):
        response = method(step_url(attempt, "architecture", action))
        assert response.status_code == 302
        assert response["Location"] == step_url(attempt, lands_on)


def test_other_post_only_attempt_addresses_opened_in_the_browser_go_somewhere(client_in, attempt):
    flow.draft_save(
        answer=flow.answer_open(attempt=attempt, step_key="architecture"),
        text=ARCHITECTURE_ANSWER,
        fields={},
        base_version=0,
    )
    answer = StepAnswer.objects.get(attempt=attempt, step_key="architecture")
    submission = flow.step_submit(
        answer=answer, text=ARCHITECTURE_ANSWER, fields={}, base_version=answer.version
    ).submission
    expected = {
        reverse("attempt_check", args=[attempt.pk]): step_url(attempt, "estimate"),
        reverse("attempt_worksheet", args=[attempt.pk]): step_url(attempt, "estimate"),
        reverse("attempt_finish", args=[attempt.pk]): reverse("attempt", args=[attempt.pk]),
        # The submission's own step (architecture), not the attempt's open one (estimate).
        reverse("submission_self_check", args=[attempt.pk, submission.pk]): step_url(
            attempt, "architecture"
        )
        + "#self-check",
    }
    for url, lands_on in expected.items():
        response = client_in.get(url)
        assert (response.status_code, response["Location"]) == (302, lands_on), url
    # Finishing is still a POST only: opening its address finished nothing.
    attempt.refresh_from_db()
    assert attempt.finished_at is None


def test_another_candidates_post_only_address_is_still_not_found(attempt):
    other = Client()
    from django.contrib.auth.models import User

    other.force_login(User.objects.create_user("eve", password="eve-Passphrase-1"))
    assert other.get(step_url(attempt, "architecture", "submit")).status_code == 404
    assert other.get(reverse("attempt_finish", args=[attempt.pk])).status_code == 404
    assert other.get(reverse("submission_self_check", args=[attempt.pk, 1])).status_code == 404


def test_the_expired_session_page_is_reached_with_csrf_checked(attempt, candidate):
    """The CSRF token lives in its own cookie, not in the session, so a session that expires
    leaves the form's token valid: the post reaches the kept-text page, not a CSRF refusal."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(candidate)
    browser.get(step_url(attempt, "architecture"))
    token = browser.cookies["csrftoken"].value
    browser.cookies.pop("sessionid")  # the session ran out; the CSRF cookie stays
    response = browser.post(
        step_url(attempt, "architecture", "submit"),
        {"text": TYPED, "base_version": "0", "seconds": "3", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 403
    assert TYPED in unescape(response.content.decode())
