"""After the candidate answers a follow-up, their panel keeps the question and the answer they
gave, read-only, under "You answered the follow-up." (not only in the report, after the end)."""

from tests.mocks.test_mock_live import live, url  # noqa: F401 (fixture)

QUESTION = "Which percentile do you design for?"
ANSWER = "p99 TTFT under 300 ms, at the peak."


def test_the_panel_keeps_the_answered_follow_up_and_its_answer(live):  # noqa: F811
    session, them, us = live
    assert us.post(url("mock_ask", session), {"text": QUESTION}).status_code == 200
    fu_submit = url("mock_follow_up_submit", session, follow_up="mock:ask-1")
    answered = them.post(fu_submit, {"text": ANSWER, "step": "clarify"})
    assert answered.status_code == 200
    reloaded = them.get(url("mock_panel", session) + "?step=clarify")
    for html in (answered.content.decode(), reloaded.content.decode()):
        assert "Submit the follow-up answer" not in html and "<textarea" not in html
        messages = html.split('class="mock-messages"')[1].split("</ul>")[0]
        item = messages.split("You answered the follow-up.")[1].split("</li>")[0]
        assert (
            f"Your interviewer asked (Clarify the requirements):</strong> <bdi>{QUESTION}</bdi>"
            in item
        )
        assert f'<pre class="mock-answer">{ANSWER}</pre>' in item
