"""Work saved on a mock interview's step after the session ended is kept as practice, out of
its report: the status beside the answer box says so after a save and after a submit (on a
phone the panel telling of the end is far above the box), and a plain attempt's does not."""

from __future__ import annotations

import re

import pytest

from mocks import services as mock
from practice import services as flow
from tests.mocks.conftest import chat_session, client_for

pytestmark = pytest.mark.django_db

NOTE = "The interview has ended: this is practice now, not part of its report."


def _post(client, attempt_id: int, action: str, text: str, version: int) -> str:
    url = f"/attempts/{attempt_id}/steps/architecture/{action}/"
    response = client.post(url, {"base_version": version, "text": text}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def _status(html: str) -> str:
    status = html.split('id="save-status"')[1].split("</div>")[0]
    return " ".join(status.split(">", 1)[1].split())


def test_after_the_end_a_save_and_a_submit_say_they_are_practice(people):
    session = chat_session(people["candidate"], interviewer=people["interviewer"])
    client = client_for(people["candidate"])
    before = _post(client, session.attempt_id, "draft", "A router, then replicas.", 0)
    assert NOTE not in before  # while the session runs the save is the interview's
    # Its feedback is withheld until the report: the status points at none.
    during = _status(_post(client, session.attempt_id, "submit", "A router, replicas.", 1))
    assert during.startswith("Submitted at") and "#feedback" not in during

    mock.session_end(session=session, reason="ended")
    saved = _status(_post(client, session.attempt_id, "draft", "Typed after the end.", 2))
    assert re.search(r"Draft saved at \d\d:\d\d:\d\d UTC\. " + re.escape(NOTE), saved)
    submitted = _status(_post(client, session.attempt_id, "submit", "Submitted after.", 3))
    assert submitted.startswith("Submitted at") and submitted.endswith(NOTE)
    page = client.get(f"/attempts/{session.attempt_id}/steps/architecture/").content.decode()
    assert NOTE in _status(page)


def test_a_plain_attempts_save_says_nothing_of_interviews(people, content_loaded):
    from questions.models import Question

    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=people["candidate"], revision=revision)
    saved = _post(client_for(people["candidate"]), attempt.pk, "draft", "A router.", 0)
    assert "Draft saved at" in saved and "interview" not in _status(saved)
