"""The Givens panel's note on an SLO card figure the worksheet does not use says how the
calculator read it, in the calculator's own words, where that reading explains the difference
(a card's 1k read as 1,000 where the brief gives 1,024)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from practice import services as flow
from practice.slo import figure_readings
from questions.models import Question

pytestmark = pytest.mark.django_db

SLUG = "knee-load-test-framework-choice"  # the brief's input length is 1024, a given in_len


@pytest.fixture
def client_and_attempt(bank_loaded):
    user = User.objects.create_user("card-reader", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug=SLUG).current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    client = Client()
    client.force_login(user)
    return client, attempt


def _panel(client, attempt, card: dict) -> str:
    base = f"/attempts/{attempt.pk}/steps/"
    saved = client.post(
        f"{base}clarify/draft/",
        {"base_version": 0, "text": "", **card},
        headers={"HX-Request": "true"},
    )
    assert saved.status_code == 200, saved.content.decode()[:500]
    page = client.get(f"{base}estimate/").content.decode()
    return page[page.index('class="card givens-card"') : page.index("</aside>")]


def test_a_card_figure_read_as_a_thousand_says_how_it_was_read(client_and_attempt):
    client, attempt = client_and_attempt
    panel = _panel(client, attempt, {"input_tokens": "1k", "output_tokens": "256"})
    reading = figure_readings({"input_tokens": "1k"}, attempt.revision.question_spec.brief)
    note = reading["Input length"]
    assert note.startswith("1k reads as 1,000;")  # the calculator's note, not a sentence of ours
    assert (
        "Your SLO card has <code>in_len</code> = <code>1000 tok/req</code>; the worksheet and "
        "the checks use the brief's <code>1024</code>. " + note
    ) in panel
    assert panel.count("reads as") == 1  # the output length (256, no k) has no reading


def test_a_card_figure_that_differs_for_another_reason_has_no_reading(client_and_attempt):
    client, attempt = client_and_attempt
    panel = _panel(client, attempt, {"input_tokens": "1000"})
    assert "Your SLO card has <code>in_len</code> = <code>1000 tok/req</code>" in panel
    assert "reads as" not in panel
