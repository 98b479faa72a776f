"""Fixtures for the mock-interview tests: the people in a session, and a signed-in client."""

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


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client
