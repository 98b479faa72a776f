"""New attempts are capped per user per day, with a clear message and nothing lost."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import services as flow
from practice.models import Attempt, StepAnswer
from rate_limits import LimitExceeded

START = reverse("attempt_start", args=["chat-api-50qps"])


@pytest.fixture
def candidate(client, content_loaded):
    user = User.objects.create_user("cand", password="cand-Passphrase-1")
    client.force_login(user)
    return user


def test_starting_past_the_daily_cap_is_refused_with_the_page_and_a_message(
    client, candidate, settings
):
    settings.ATTEMPTS_PER_DAY = 2
    # Each attempt holds work, or Start would carry on with the blank one.
    for text in ("Kept.", "Also kept."):
        assert client.post(START).status_code == 302
        latest = Attempt.objects.order_by("pk").last()
        StepAnswer.objects.create(attempt=latest, step_key="clarify", text=text)
    first = Attempt.objects.order_by("pk").first()

    refused = client.post(START)
    assert refused.status_code == 429
    html = refused.content.decode()
    assert "used today&#x27;s 2 new attempts" in html
    # The refusal is on the question's page, beside links to the attempts already made.
    assert f'href="/attempts/{first.pk}/"' in html
    assert Attempt.objects.count() == 2
    assert StepAnswer.objects.get(attempt=first).text == "Kept."


def test_the_cap_is_per_user(client, candidate, settings, content_loaded):
    settings.ATTEMPTS_PER_DAY = 1
    client.post(START)
    other = User.objects.create_user("other", password="other-Passphrase-1")
    client.force_login(other)
    assert client.post(START).status_code == 302


def test_the_flow_refuses_past_the_cap(candidate, settings):
    settings.ATTEMPTS_PER_DAY = 1
    revision = Attempt._meta.get_field("revision").related_model.objects.first()
    flow.attempt_start(user=candidate, revision=revision)
    with pytest.raises(LimitExceeded):
        flow.attempt_start(user=candidate, revision=revision)
