"""The drills tests' people: an instructor, and a candidate with the shipped content loaded."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from accounts.instructors import instructor_grant

PASSWORD = "a-long-Passphrase-42"


@pytest.fixture
def instructor(db):
    user = User.objects.create_user("teacher", password=PASSWORD)
    instructor_grant(user)
    return user


@pytest.fixture
def candidate(content_loaded):
    return User.objects.create_user("learner", password=PASSWORD)
