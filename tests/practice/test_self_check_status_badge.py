"""The feedback panel's status badge follows the self-check as it is saved: once every point is
rated, the badge beside the score no longer asks for the self-check the candidate just did (it
said "Ready for your self-check" beside "78% Self-checked" until the page was reloaded)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.practice.self_check_helpers import all_rated, form, offline_submission, post_ratings

pytestmark = pytest.mark.django_db


def badge(html: str) -> str:
    match = re.search(r'<span id="grade-status"[^>]*>(.*?)</span>', html, re.S)
    return " ".join(match.group(1).split()) if match else ""


def test_the_badge_changes_with_the_last_rating_without_a_reload(candidate):
    client = Client()
    client.force_login(candidate)
    submission = offline_submission(candidate)
    step = f"/attempts/{submission.answer.attempt_id}/steps/architecture/"
    assert badge(client.get(step).text) == "Ready for your self-check"

    done = post_ratings(client, submission, form(all_rated("partly"), 0), HTTP_HX_REQUEST="true")
    assert done.status_code == 200
    assert 'id="grade-status"' in done.text and 'hx-swap-oob="true"' in done.text
    assert badge(done.text) == badge(client.get(step).text)
    assert badge(done.text) != "Ready for your self-check"
