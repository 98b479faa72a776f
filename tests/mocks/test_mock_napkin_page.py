"""The napkin-math step inside a running mock interview says what the session does with the
candidate's numbers: no Check button that is always refused, no promise of expected values
after submitting (the report has them), and the checks come back once the session ends."""

from __future__ import annotations

import re

from mocks import services as mock
from questions.models import Question
from tests.mocks.conftest import client_for


def estimate_page(client, session) -> str:
    return client.get(f"/attempts/{session.attempt_id}/steps/estimate/").content.decode()


def check_buttons(page: str) -> list[str]:
    return re.findall(r'<button type="submit" name="quantity"[^>]*>', page)


def test_a_running_mock_offers_no_check_it_would_refuse(people, bank_loaded):
    # The page said "type a worksheet name and check it. Expected values are revealed after you
    # submit the step", yet every Check answered "In a mock interview the numbers are checked
    # at the end", and submitting revealed nothing.
    revision = Question.objects.get(slug="structured-extraction-api").current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="app")
    client = client_for(people["candidate"])
    page = estimate_page(client, session)
    assert "Expected values are revealed in the feedback once you submit the step" not in page
    assert "checked when the session ends" in page
    buttons = check_buttons(page)
    assert buttons and all("disabled" in b and "hidden" in b for b in buttons)
    # The boxes stay: what the candidate types in them is what the report checks.
    assert 'name="expr_n_gpu"' in page

    mock.session_end(session=session, reason="ended early")
    page = estimate_page(client, session)
    assert "Expected values are revealed in the feedback once you submit the step" in page
    assert not any("disabled" in b for b in check_buttons(page))
