"""A locked follow-up is locked by URL too, not only on the page that draws the lock."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import services as flow
from practice.models import Attempt, StepAnswer, Submission


@pytest.fixture
def attempt(client, content_loaded):
    user = User.objects.create_user("cand", password="cand-Passphrase-1")
    client.force_login(user)
    client.post(reverse("attempt_start", args=["chat-api-50qps"]))
    return Attempt.objects.get()


def _follow_ups(attempt):
    return [fu.id for fu in attempt.revision.question_spec.step("tradeoffs").follow_ups]


def _url(attempt, follow_up, action=""):
    base = f"/attempts/{attempt.pk}/steps/tradeoffs/follow-ups/{follow_up}/"
    return base + (f"{action}/" if action else "")


def test_the_rule_opens_follow_ups_one_at_a_time():
    assert flow.follow_ups_open(["a", "b", "c"], set()) == [True, False, False]
    assert flow.follow_ups_open(["a", "b", "c"], {"a"}) == [True, True, False]
    assert flow.follow_ups_open(["a", "b", "c"], {"a", "b"}) == [True, True, True]


def test_a_locked_follow_up_cannot_be_opened_by_url(client, attempt):
    # Its address leads to the step, which says why, rather than to a bare 404.
    second = _follow_ups(attempt)[1]
    opened = client.get(_url(attempt, second))
    step = reverse("attempt_step", kwargs={"attempt_id": attempt.pk, "step": "tradeoffs"})
    assert opened.status_code == 302 and opened["Location"] == step + "#follow-ups"
    page = client.get(opened["Location"]).content.decode()
    assert "This follow-up opens once you submit the one before it." in page
    assert not StepAnswer.objects.filter(follow_up_id=second).exists()
    # One the question does not have is still not found.
    assert client.get(_url(attempt, "fu-no-such-thing")).status_code == 404


def test_a_locked_follow_up_cannot_be_saved_or_submitted_by_url(
    client, attempt, django_capture_on_commit_callbacks
):
    second = _follow_ups(attempt)[1]
    form = {"base_version": 0, "text": "Submitted before its turn."}
    with django_capture_on_commit_callbacks(execute=False):
        assert client.post(_url(attempt, second, "draft"), form).status_code == 404
        assert client.post(_url(attempt, second, "submit"), form).status_code == 404
    assert not Submission.objects.exists()


def test_a_draft_row_of_a_locked_follow_up_still_cannot_be_submitted(attempt):
    # A row made some other way (an older release, an admin) must not bypass the rule.
    second = _follow_ups(attempt)[1]
    answer = StepAnswer.objects.create(attempt=attempt, step_key="tradeoffs", follow_up_id=second)
    with pytest.raises(flow.FollowUpLocked):
        flow.step_submit(answer=answer, text="Too early.", fields={}, base_version=0)
    assert not Submission.objects.exists()


def test_the_next_follow_up_opens_by_url_once_the_one_before_is_submitted(
    client, attempt, django_capture_on_commit_callbacks
):
    first, second = _follow_ups(attempt)[:2]
    with django_capture_on_commit_callbacks(execute=False):
        client.post(_url(attempt, first, "submit"), {"base_version": 0, "text": "Scale out."})
    assert client.get(_url(attempt, second)).status_code == 200
