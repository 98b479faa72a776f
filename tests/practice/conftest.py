"""Fixtures for the practice tests."""

import pytest
from django.contrib.auth.models import User

from tests.conftest import signed_in_context

BROWSER_USERNAME = "saver"
BROWSER_PASSWORD = "a-long-Passphrase-42"


@pytest.fixture
def open_step(browser, live_server_url):
    """Opens a signed-in candidate's step of a fresh chat-api-50qps attempt in a browser
    context of its own: open_step(step, username) -> (page, attempt). The candidate's password
    is BROWSER_PASSWORD; every context opened is closed after the test."""
    from practice import services as flow
    from questions.models import Question

    contexts = []

    def open_(step: str = "architecture", username: str = BROWSER_USERNAME):
        user = User.objects.create_user(username, password=BROWSER_PASSWORD)
        revision = Question.objects.get(slug="chat-api-50qps").current_revision
        attempt = flow.attempt_start(user=user, revision=revision)
        context = signed_in_context(browser, live_server_url, user)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/{step}/")
        return page, attempt

    yield open_
    for context in contexts:
        context.close()


@pytest.fixture
def step_page(open_step):
    """A signed-in candidate's architecture step, open in a fresh browser context:
    (page, attempt). The candidate is BROWSER_USERNAME / BROWSER_PASSWORD."""
    return open_step("architecture")
