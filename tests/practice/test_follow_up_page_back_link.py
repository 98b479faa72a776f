"""A follow-up page's "previous" link leads back to the trade-offs answer it follows, not past
it to the bottlenecks step."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice import services as flow
from questions.models import Question

pytestmark = pytest.mark.django_db


def test_the_follow_up_page_goes_back_to_its_trade_offs_answer(bank_loaded, client):
    user = User.objects.create_user("follow-back", password="a-long-Passphrase-42")
    client.force_login(user)
    revision = Question.objects.get(slug="structured-extraction-api").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    first = revision.question_spec.step("tradeoffs").follow_ups[0].id
    page = client.get(f"/attempts/{attempt.pk}/steps/tradeoffs/follow-ups/{first}/").text
    back = f'href="/attempts/{attempt.pk}/steps/tradeoffs/">← Trade-offs and follow-ups</a>'
    assert back in page
    assert "← Bottlenecks and failure modes" not in page
