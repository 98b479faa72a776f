"""On the interviewer's page: a nudge pasted past the limit is refused in words beside its
button and kept whole in its box (no maxlength cuts it, no "Sent."); communication, once
scored, shows its score ticked and final, with nothing left to choose or send."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from mocks import services as mock
from mocks.log import Kind
from tests.conftest import signed_in_context, watched_page
from tests.mocks.conftest import chat_session

pytestmark = pytest.mark.browser


def test_a_long_nudge_is_refused_and_kept_and_communication_is_final(
    browser, live_server_url, settings, content_loaded
):
    settings.MOCK_POLL_SECONDS = 60  # no redraw of the live view during the test
    interviewer = User.objects.create(username="interviewer")
    session = chat_session(User.objects.create(username="candidate"), interviewer=interviewer)
    errors: list[str] = []
    page = watched_page(signed_in_context(browser, live_server_url, interviewer), errors)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server_url}/mock/{session.pk}/interview/")

    long = "p99 " * 300  # 1,200 characters
    box = page.locator("#nudge-text")
    box.fill(long)
    page.get_by_role("button", name="Send the nudge").click()
    expect(page.locator("#nudge-status")).to_contain_text(
        "This nudge is 1,199 characters; the limit is 1,000, so it was not sent."
    )
    assert box.input_value() == long
    assert not session.events.filter(kind=Kind.NUDGE).exists()

    form = page.locator("#communication-score")
    form.get_by_label("partial").check()
    form.get_by_role("button", name="Score communication").click()
    expect(form).to_contain_text("Scored: partial. A score is final.")
    expect(form.get_by_label("partial")).to_be_checked()
    for verdict in ("hit", "partial", "miss"):
        expect(form.get_by_label(verdict)).to_be_disabled()
    expect(form.get_by_role("button")).to_have_count(0)
    page.reload()
    form = page.locator("#communication-score")
    expect(form.get_by_label("partial")).to_be_checked()
    expect(form.get_by_label("hit")).to_be_disabled()
    assert mock.interviewer_scores(session)[""] == {"communication": "partial"}
    assert [e for e in errors if "status of 422" not in e] == []
