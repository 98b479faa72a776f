"""A step submitted while the interviewer's follow-up waits is refused; the status line beside
it tells the truth about the draft: saved when the autosave already has what was posted, not
saved otherwise, and the refusal never claims the opposite."""

from __future__ import annotations

import re

from django.urls import reverse

from tests.mocks.test_mock_live import live, url  # noqa: F401 (fixture)


def status_line(page: str) -> str:
    match = re.search(r'<div id="save-status"[^>]*>(.*?)</div>', page, re.S)
    return " ".join(re.sub(r"<[^>]+>", "", match.group(1)).split())


def refused_submit(session, them, us, *, autosaved: bool) -> str:
    kwargs = {"attempt_id": session.attempt_id, "step": "clarify"}
    version = 0
    if autosaved:
        them.post(
            reverse("attempt_draft", kwargs=kwargs), {"text": "Peak 50 QPS.", "base_version": 0}
        )
        version = 1
    us.post(url("mock_ask", session), {"text": "Which percentile do you design for?"})
    post = {"text": "Peak 50 QPS.", "base_version": version}
    refused = them.post(reverse("attempt_submit", kwargs=kwargs), post)
    assert refused.status_code == 422
    return refused.content.decode()


def test_an_autosaved_draft_reads_as_saved_beside_the_refusal(live):  # noqa: F811
    # The status read "Not saved. Answer the interviewer's follow-up first (in the panel
    # above): your draft here is saved": two opposite claims in one line.
    session, them, us = live
    page = refused_submit(session, them, us, autosaved=True)
    assert "follow-up first" in page
    line = status_line(page)
    assert line.startswith("Draft saved") and "Not saved" not in line


def test_a_draft_the_autosave_has_not_got_is_not_claimed_saved(live):  # noqa: F811
    session, them, us = live
    page = refused_submit(session, them, us, autosaved=False)
    assert "follow-up first" in page
    assert status_line(page).startswith("Not saved.")
    assert "is saved" not in page
