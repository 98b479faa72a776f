"""Fixtures for the practice tests."""

import pytest
from django.contrib.auth.models import User

from tests.conftest import signed_in_context


def check_quantity(page, quantity_id: str, expression: str):
    """Type `expression` in a quantity's box, press its Check and return the new verdict. The
    previous verdict stays in the page until htmx swaps the answer in, which comes after the
    response: it is marked first, so the wait is for the verdict that replaces it."""
    row = page.locator(".quantity-row", has=page.locator(f"#q-{quantity_id}"))
    row.locator(f"#q-{quantity_id}").fill(expression)
    page.eval_on_selector_all(
        f"#check-{quantity_id} .verdict", "els => els.forEach(e => e.dataset.stale = '1')"
    )
    row.get_by_role("button", name="Check").click()
    verdict = page.locator(f"#check-{quantity_id} .verdict:not([data-stale])")
    verdict.wait_for()
    return verdict


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


@pytest.fixture
def candidate(content_loaded):
    """A signed-up candidate with the question bank loaded; modules that want another one
    define their own."""
    return User.objects.create_user("candidate", password="a-long-Passphrase-42")
