"""The SLO card the candidate filled on Clarify is part of their answer: the report's
"The answer submitted" and the replay's versions show its values, labelled for a person
(never the graders' form values markers)."""

from __future__ import annotations

from django.urls import reverse

from grading.text import FORM_BLOCK_END, FORM_BLOCK_START
from mocks import report as mock_report
from mocks import services as mock
from practice import services as flow
from practice.slo import NUMBER_FIELDS, TEXT_FIELDS
from tests.mocks.conftest import client_for

CARD = {"model": "Llama-3.1-8B-Instruct", "peak_qps": "50", "ttft_p99_ms": "800"}
LABELS = {f.name: f.label for f in NUMBER_FIELDS + TEXT_FIELDS}
SHOWN = (
    f"{LABELS['model']}: Llama-3.1-8B-Instruct",
    f"{LABELS['peak_qps']}: 50 QPS",
    f"{LABELS['ttft_p99_ms']}: 800 ms",
)


def test_the_report_shows_the_card_submitted(joined_session):
    session = joined_session
    answer = flow.answer_open(attempt=session.attempt, step_key="clarify")
    flow.step_submit(answer=answer, text="", fields=CARD, base_version=answer.version)
    mock.session_end(session=session, reason="candidate")
    client = client_for(session.attempt.user)
    html = client.get(reverse("mock_report", kwargs={"session_id": session.pk})).content.decode()
    step = html[html.index('id="step-clarify-h"') :]
    step = step[: step.index("</section>")]
    assert "The answer submitted" in step
    for line in SHOWN:
        assert line in step
    assert FORM_BLOCK_START not in html and FORM_BLOCK_END not in html
    md = client.get(reverse("mock_report_md", kwargs={"session_id": session.pk})).content
    md = md.decode()
    section = md[md.index("## Clarify") : md.index("## Napkin")]
    for line in SHOWN:
        assert line in section
    assert FORM_BLOCK_START not in md


def test_the_replay_shows_the_card_of_each_version(joined_session):
    session = joined_session
    answer = flow.answer_open(attempt=session.attempt, step_key="clarify")
    flow.draft_save(answer=answer, text="", fields=CARD, base_version=answer.version)
    versions = mock_report.replay_context(session, step_key="clarify", version=None)["versions"]
    assert len(versions) == 1
    for line in SHOWN:
        assert line in versions[0]["card"]
    page = client_for(session.attempt.user).get(
        reverse("mock_replay", kwargs={"session_id": session.pk}) + "?step=clarify"
    )
    html = page.content.decode()
    for line in SHOWN:
        assert line in html
    assert FORM_BLOCK_START not in html
