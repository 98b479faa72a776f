"""Fixtures for the authoring tests: an instructor and a candidate, signed in; and a
candidate's problem report on a shipped question."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.instructors import instructor_grant
from authoring.models import ProblemReport
from questions.models import Question

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


def problem_report(*, slug: str, step_key: str, message: str, **answer: str) -> ProblemReport:
    """A report on the question's current revision; `answer` is the shared answer_text and
    answer_diagram, when there is one."""
    revision = Question.objects.get(slug=slug).current_revision
    return ProblemReport.objects.create(
        question=revision.question,
        revision=revision,
        step_key=step_key,
        message=message,
        **answer,
    )


SCENARIO = (
    "Support agents ask for a summary of a ticket thread, about 40 a minute at peak; a slow "
    "summary keeps a customer waiting on the line."
)
CONSTRAINT = "Summaries never leave the region the ticket was filed in."


def written(text: str) -> str:
    """The new-question template's text with its placeholder lines written, as an instructor
    publishes it (publishing refuses the placeholders)."""
    for placeholder, line in (
        (
            "Write the scenario here: who calls the endpoint, how often, and what a good "
            "answer protects.",
            SCENARIO,
        ),
        ("- Replace this line with what the business cares about.", f"- {CONSTRAINT}"),
    ):
        assert placeholder in text
        text = text.replace(placeholder, line, 1)
    return text


# The one-time token a refused Publish's or upload's redirect carries (authoring.views).
REFUSAL_TOKEN = re.compile(r"\?refusal=[A-Za-z0-9_-]{16,}$")


def refused_to(url: str) -> str:
    """The address a refused Publish or upload redirected to, less the token that names its
    refusal (which must be there)."""
    assert REFUSAL_TOKEN.search(url), url
    return REFUSAL_TOKEN.sub("", url)


def refused_chain(response) -> list:
    """A followed response's redirect chain, each refusal's token taken off (`refused_to`)."""
    return [(refused_to(url), status) for url, status in response.redirect_chain]
