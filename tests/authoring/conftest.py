"""Fixtures for the authoring tests: an instructor and a candidate, signed in."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.instructors import instructor_grant

INSTRUCTOR_PASSWORD = "an-Instructor-passphrase-7"


@pytest.fixture
def instructor(db):
    user = User.objects.create_user("ines", password=INSTRUCTOR_PASSWORD)
    instructor_grant(user)
    return user


@pytest.fixture
def instructor_client(instructor):
    client = Client()
    client.force_login(instructor)
    return client


@pytest.fixture
def candidate(db):
    return User.objects.create_user("cato", password="a-Candidate-passphrase-7")


@pytest.fixture
def candidate_client(candidate):
    client = Client()
    client.force_login(candidate)
    return client
