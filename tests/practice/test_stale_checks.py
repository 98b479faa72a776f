"""A napkin-math check's verdict belongs to the box and the worksheet it read. Once either
changes, the page stops showing it (in the browser as the edit is typed, and on the page the
server draws after a reload): "Correct (you have 1)" beside a box that now reads 17 would be
read as the new answer's, which the submit then grades wrong."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from practice import services as flow
from questions.models import Question

STALE = "Changed since its check: check it again."
FLOOR = "15.2 GB / (0.7 * 1008 GB/s) in ms"


@pytest.fixture
def checked(client, content_loaded):
    """A candidate whose tpot_floor box was checked Correct, with the worksheet it read."""
    user = User.objects.create_user("stale-checks", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    client.force_login(user)
    answer = flow.answer_open(attempt=attempt, step_key="estimate")
    fields = {"worksheet": "W2 = 15.2 GB", "answers": {"tpot_floor": FLOOR}}
    answer = flow.draft_save(answer=answer, text="", fields=fields, base_version=answer.version)
    post = {"quantity": "tpot_floor", "expr_tpot_floor": FLOOR, "worksheet": "W2 = 15.2 GB"}
    checked = client.post(reverse("attempt_check", args=[attempt.pk]), post, HTTP_HX_REQUEST="true")
    assert "Correct" in checked.content.decode()
    return client, attempt


def _step(client, attempt) -> str:
    page = client.get(reverse("attempt_step", args=[attempt.pk, "estimate"])).content.decode()
    return page[page.index('id="check-tpot_floor"') :].split("</div>")[0]


def _save(attempt, **fields):
    answer = flow.answer_open(attempt=attempt, step_key="estimate")
    fields = {**answer.fields, **fields}
    flow.draft_save(answer=answer, text="", fields=fields, base_version=answer.version)


@pytest.mark.django_db
def test_a_check_still_standing_is_shown(checked):
    client, attempt = checked
    assert "Correct" in _step(client, attempt) and STALE not in _step(client, attempt)


@pytest.mark.django_db
def test_a_box_changed_since_its_check_shows_no_verdict(checked):
    client, attempt = checked
    _save(attempt, answers={"tpot_floor": FLOOR + " * 17"})
    shown = _step(client, attempt)
    assert STALE in shown and "Correct" not in shown


@pytest.mark.django_db
def test_a_worksheet_changed_since_the_check_shows_no_verdict(checked):
    client, attempt = checked
    _save(attempt, worksheet="W2 = 30 GB")
    shown = _step(client, attempt)
    assert STALE in shown and "Correct" not in shown


@pytest.mark.browser
def test_an_edit_takes_the_verdict_away_as_it_is_typed(open_step):
    page, _attempt = open_step("estimate", username="stale-browser")
    page.wait_for_selector("html[data-ready]", state="attached")
    box, result = page.locator("#q-tpot_floor"), page.locator("#check-tpot_floor")
    box.fill(FLOOR)
    box.press("Enter")
    expect(result).to_contain_text("Correct")
    box.press("End")
    box.press_sequentially(" * 2")
    expect(result).to_have_text(STALE)
    box.press("Enter")
    expect(result).not_to_contain_text(STALE)
    # An edit of the worksheet, too: a line the box names may now compute another value.
    page.locator("#worksheet").press_sequentially("x = 1")
    expect(result).to_have_text(STALE)
