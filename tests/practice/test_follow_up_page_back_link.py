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


def test_the_back_link_a_follow_up_submit_redraws_still_goes_to_trade_offs(
    content_loaded, client, django_capture_on_commit_callbacks
):
    # A submit redraws the pager out of band: its back link must agree with the page's.
    user = User.objects.create_user("follow-back", password="a-long-Passphrase-42")
    client.force_login(user)
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    first = revision.question_spec.step("tradeoffs").follow_ups[0].id
    url = f"/attempts/{attempt.pk}/steps/tradeoffs/follow-ups/{first}/"
    assert client.get(url).status_code == 200
    with django_capture_on_commit_callbacks(execute=False):
        html = client.post(
            url + "submit/",
            {"base_version": 0, "text": "Shed the batch tier first; keep interactive SLOs."},
            HTTP_HX_REQUEST="true",
        ).text
    assert 'id="pager"' in html
    back = f'href="/attempts/{attempt.pk}/steps/tradeoffs/">← Trade-offs and follow-ups</a>'
    assert back in html
    assert "← Bottlenecks and failure modes" not in html
