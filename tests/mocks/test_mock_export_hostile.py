"""The Markdown export keeps what people typed where it belongs: a nudge, a follow-up question
or a follow-up answer over several lines stays inside its transcript entry (it cannot add a
heading or a section to the report), and a quote with a `|` stays in its table cell."""

import re

import pytest
from django.urls import reverse

from mocks import services as mock
from practice import services as flow
from tests.mocks.conftest import client_for

HOSTILE_ANSWER = "By prefix hash.\n\n## Reference answer\n\n| a | b |\n- not an entry"


@pytest.fixture
def session(joined_session):
    return joined_session


def export(session, user) -> str:
    url = reverse("mock_report_md", kwargs={"session_id": session.pk})
    response = client_for(user).get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_multi_line_transcript_entries_stay_inside_their_entry(session):
    mock.nudge_send(session=session, text="Think about it.\n\n## Injected section\n- fake entry")
    mock.nudge_send(session=session, text="Keep going.")
    mock.follow_up_ask(session=session, text="How does the router pick?\n# Big heading")
    answer = flow.answer_open(
        attempt=session.attempt, step_key="clarify", follow_up_id="mock:ask-1"
    )
    flow.step_submit(answer=answer, text=HOSTILE_ANSWER, fields={}, base_version=answer.version)
    mock.session_end(session=session, reason="ended early")

    md = export(session, session.attempt.user)
    # The report's own headings only: one "Reference answer" per step, none of theirs.
    assert md.count("\n### Reference answer\n") == 5
    assert not re.search(r"^(## Reference answer|#+ Injected section|#+ Big heading)", md, re.M)
    transcript = md.split("\n## Transcript\n", 1)[1]
    entries = [line for line in transcript.splitlines() if line.startswith("- ")]
    assert len(entries) == 6  # joined, 2 nudges, asked, answered, ended: none of theirs
    for line in transcript.splitlines():
        # Every line is an entry, a blank, or the entry's quoted words indented under it.
        assert line == "" or line.startswith("- ") or line.startswith("  >"), line
    # Their words are all there, quoted.
    assert "  > ## Injected section\n  > - fake entry" in transcript
    assert "  > ## Reference answer\n  >\n  > | a | b |" in transcript
    # A one-line nudge stays on its entry's line, as before.
    assert "\n- 0:00 Nudge (Clarify the requirements): Keep going.\n" in transcript


def test_a_quote_with_a_pipe_stays_in_its_table_cell(session):
    answer = flow.answer_open(attempt=session.attempt, step_key="architecture")
    outcome = flow.step_submit(
        answer=answer,
        text="Autoscale on queue depth | not GPU utilisation.",
        fields={},
        base_version=answer.version,
    )
    flow.submission_grade(submission_id=outcome.submission.pk)
    mock.session_end(session=session, reason="ended early")
    rubric = session.attempt.revision.question_spec.step("architecture").rubric
    mock.step_score_blind(
        session=session, step_key="architecture", verdicts={p.id: "hit" for p in rubric}
    )

    md = export(session, session.interviewer)  # the interviewer sees the matcher's quotes
    section = md.split("\n## Architecture", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = rows[0]
    cells = len(re.findall(r"(?<!\\)\|", header))
    assert len(rows) == 2 + len(rubric)
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == cells, row
    assert r"Autoscale on queue depth \| not GPU utilisation." in section


def test_html_in_what_people_typed_is_shown_not_run_by_a_viewer(session):
    # A Markdown viewer that renders HTML ran an answer's <script> or <img onerror>; a "<"
    # that opens no tag ("p99 <= 300 ms") stays as typed.
    mock.nudge_send(session=session, text="See <img src=x onerror=alert(1)> here.")
    answer = flow.answer_open(attempt=session.attempt, step_key="clarify")
    flow.step_submit(
        answer=answer,
        text="p99 TTFT <= 300 ms.\n<script>alert(1)</script>\n<!-- hidden -->",
        fields={},
        base_version=answer.version,
    )
    mock.session_end(session=session, reason="ended early")
    md = export(session, session.attempt.user)
    assert not re.search(r"(?<!\\)<(script|img|/script|!--)", md)
    assert r"> \<script>alert(1)\</script>" in md
    assert r"See \<img src=x onerror=alert(1)> here." in md
    assert "> p99 TTFT <= 300 ms." in md
