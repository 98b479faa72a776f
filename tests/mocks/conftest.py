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


@pytest.fixture
def joined_session(people):
    """A mock interview of the chat question whose interviewer has joined: the clock runs."""
    from mocks import services as mock
    from questions.models import Question

    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=people["candidate"], revision=revision, mode="human")
    token = mock.invite_token(session)
    mock.invite_accept(session_id=session.pk, token=token, user=people["interviewer"])
    session.refresh_from_db()
    return session


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client
