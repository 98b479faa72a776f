"""The napkin-math step's answer is its worksheet and its quantity boxes as much as its
notes: the replay shows each saved version of them, and the interviewer's live view shows
them as they save."""

from __future__ import annotations

from django.urls import reverse

from mocks import report as mock_report
from mocks import services as mock
from practice import services as flow
from tests.mocks.conftest import client_for

WORKSHEET = "W = 16 GB\nbw = 3.35 TB/s"
FIELDS = {"worksheet": WORKSHEET, "answers": {"tpot_floor": "W / (eta * bw)"}}


def _save(session, fields, text=""):
    answer = flow.answer_open(attempt=session.attempt, step_key="estimate")
    flow.draft_save(answer=answer, text=text, fields=fields, base_version=answer.version)


def test_the_replay_shows_the_worksheet_and_quantities_of_each_version(joined_session):
    session = joined_session
    _save(session, {"worksheet": "W = 16 GB"})
    _save(session, FIELDS)
    context = mock_report.replay_context(session, step_key="estimate", version=None)
    first, last = context["versions"]
    assert first["worksheet"] == "W = 16 GB" and first["quantities"] == []
    assert last["worksheet"] == WORKSHEET
    assert [(q["id"], q["expression"]) for q in last["quantities"]] == [
        ("tpot_floor", "W / (eta * bw)")
    ]
    assert last["quantities"][0]["label"].startswith("Decode TPOT floor")
    html = (
        client_for(session.attempt.user)
        .get(reverse("mock_replay", kwargs={"session_id": session.pk}) + "?step=estimate")
        .content.decode()
    )
    shown = html[html.index('data-version="1"') :]
    assert "bw = 3.35 TB/s" in shown
    assert "W / (eta * bw)" in shown
    assert "Decode TPOT floor" in shown
    assert "(nothing written yet)" not in shown


def test_the_live_view_shows_the_quantity_boxes(joined_session, people):
    session = joined_session
    mock.step_open(session=session, step_key="estimate")
    _save(session, FIELDS)
    html = (
        client_for(people["interviewer"])
        .get(reverse("mock_interview", kwargs={"session_id": session.pk}))
        .content.decode()
    )
    assert "bw = 3.35 TB/s" in html
    assert "W / (eta * bw)" in html


def test_the_replays_way_up_opens_while_the_session_runs_and_after(joined_session, people):
    session = joined_session
    replay = reverse("mock_replay", kwargs={"session_id": session.pk})
    for who, running_up in (
        (session.attempt.user, reverse("mock_session", kwargs={"session_id": session.pk})),
        (people["interviewer"], reverse("mock_interview", kwargs={"session_id": session.pk})),
    ):
        client = client_for(who)
        html = client.get(replay).content.decode()
        crumbs = html[html.index('aria-label="Breadcrumb"') :]
        up = crumbs[crumbs.index('<li><a href="') + len('<li><a href="') :]
        up = up[: up.index('"')]
        assert up == running_up
        assert client.get(up).status_code == 200  # not the report's "not ready yet"
    mock.session_end(session=session, reason="candidate")
    html = client_for(session.attempt.user).get(replay).content.decode()
    report = reverse("mock_report", kwargs={"session_id": session.pk})
    assert f'<a href="{report}">Mock interview report</a>' in html
