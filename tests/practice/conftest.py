"""Fixtures for the practice tests."""

import pytest
from django.contrib.auth.models import User

from tests.conftest import signed_in_context

BROWSER_USERNAME = "saver"
BROWSER_PASSWORD = "a-long-Passphrase-42"


@pytest.fixture
def step_page(browser, live_server_url):
    """A signed-in candidate's architecture step, open in a fresh browser context:
    (page, attempt). The candidate is BROWSER_USERNAME / BROWSER_PASSWORD."""
    from practice import services as flow
    from questions.models import Question

    user = User.objects.create_user(BROWSER_USERNAME, password=BROWSER_PASSWORD)
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    context = signed_in_context(browser, live_server_url, user)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server_url}/attempts/{attempt.pk}/steps/architecture/")
    yield page, attempt
    context.close()
