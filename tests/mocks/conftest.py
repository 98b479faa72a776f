"""Fixtures for the mock-interview tests: the people in a session, a running session with a
person as interviewer, and a signed-in client."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client


@pytest.fixture
def people(content_loaded):
    """A candidate, an interviewer and a stranger (someone else signed in)."""
    return {
        name: User.objects.create(username=name)
        for name in ("candidate", "interviewer", "stranger")
    }


def chat_session(candidate, *, interviewer=None):
    """A mock interview of the chat question for `candidate`: with the app as interviewer,
    or with `interviewer` joined by the invite link. Either way the clock runs."""
    from mocks import services as mock
    from questions.models import Question

    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    mode = "app" if interviewer is None else "human"
    session = mock.mock_session_start(user=candidate, revision=revision, mode=mode)
    if interviewer is not None:
        token = mock.invite_token(session)
        mock.invite_accept(session_id=session.pk, token=token, user=interviewer)
        session.refresh_from_db()
    return session


@pytest.fixture
def joined_session(people):
    """A mock interview of the chat question whose interviewer has joined: the clock runs."""
    return chat_session(people["candidate"], interviewer=people["interviewer"])


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client
