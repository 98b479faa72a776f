"""Communication is scored once: once scored, the interviewer's form shows the score given,
ticked, and says it is final, with nothing left to choose or send (as a step's blind score
gives way to its verdicts), on a reload and in the answer to the scoring itself."""

from tests.mocks.test_mock_live import live, url  # noqa: F401 (fixture)


def communication_block(html: str) -> str:
    return html.split('id="communication-score"')[1].split("</form>")[0]


def test_before_scoring_the_form_offers_the_three_verdicts(live):  # noqa: F811
    session, _them, us = live
    block = communication_block(us.get(url("mock_interview", session)).content.decode())
    assert " checked" not in block and " disabled>" not in block and " disabled " not in block
    assert "Score communication</button>" in block


def test_a_scored_communication_shows_ticked_and_final_after_a_reload(live):  # noqa: F811
    session, _them, us = live
    scored = us.post(url("mock_communication", session), {"communication": "partial"})
    assert scored.status_code == 200
    for html in (scored.content.decode(), us.get(url("mock_interview", session)).content.decode()):
        block = communication_block(html)
        assert 'value="partial" checked disabled' in block
        assert 'value="hit" disabled' in block and 'value="miss" disabled' in block
        assert "Score communication</button>" not in block
        assert "Scored: partial. A score is final." in block
