"""What the candidate's panel gives mock.js to tell a screen reader: each nudge, time warning
and follow-up (data-announce-seq) in its own words, with whose words they are
(data-announce-text); nothing else, and no live region that its redraws would replace."""

import re

from django.urls import reverse

from mocks import services as mock
from mocks.log import Kind, event_append
from tests.mocks.conftest import client_for

SAID = re.compile(
    r'data-announce-seq="(\d+)"[^>]*>.*?<[^>]*data-announce-text>(.*?)</(?:span|p)>', re.S
)


def test_the_panel_marks_each_nudge_time_warning_and_follow_up_to_announce(joined_session):
    session = joined_session
    mock.step_open(session=session, step_key="architecture")  # what the follow-up is about
    nudge = mock.nudge_send(session=session, text="Think about the shared system prompt.")
    warning = event_append(
        session_id=session.pk,
        kind=Kind.TIME_WARNING,
        step_key="architecture",
        payload={"minutes": 8},
    )
    asked = mock.follow_up_ask(session=session, text="Which percentile do you design for?")
    url = reverse("mock_panel", kwargs={"session_id": session.pk}) + "?step=architecture&after=-1"
    html = client_for(session.attempt.user).get(url).content.decode()

    said = {
        int(seq): " ".join(re.sub(r"<[^>]+>", "", text).split()) for seq, text in SAID.findall(html)
    }
    assert said == {
        nudge.seq: "Your interviewer says: Think about the shared system prompt.",
        warning.seq: "The app says: Time check: you are past the 8 minutes planned for "
        "Architecture. Wrap it up and move on.",
        asked.seq: "Your interviewer asks (Architecture): Which percentile do you design for?",
    }
    assert "aria-live" not in html  # the panel is redrawn whole: mock.js's region says it
