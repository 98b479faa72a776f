"""Fixtures shared by the simulator's page tests."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice import services as flow
from questions.models import Question


@pytest.fixture
def start(bank_loaded, client):
    """(client signed in as a new candidate, a function that starts their attempt at any
    question of the bank by its slug)."""
    user = User.objects.create_user("fleet", password="a-long-Passphrase-42")
    client.force_login(user)

    def _start(slug: str):
        revision = Question.objects.get(slug=slug).current_revision
        return flow.attempt_start(user=user, revision=revision)

    return client, _start
