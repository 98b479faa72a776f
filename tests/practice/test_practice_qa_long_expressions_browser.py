"""A napkin-math box holds up to 500 characters, and a candidate can fill it with one long
word (a pasted name, a run of digits). Submitted, the scorecard's "Napkin math" list showed it
on one line: the page scrolled sideways by thousands of pixels, on a desktop as on a phone."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice import services as flow
from tests.conftest import signed_in_context, watched_page

pytestmark = pytest.mark.browser

LONG = "n_inst_" + "9" * 493  # one word, as long as the box takes


def test_a_long_napkin_expression_does_not_push_the_scorecard_sideways(browser, live_server_url):
    from questions.models import Question

    user = User.objects.create_user("long-expr", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key="estimate")
    outcome = flow.step_submit(
        answer=answer,
        text="",
        fields={"worksheet": "", "answers": {"n_inst": LONG, "n_gpu": LONG}},
        base_version=0,
    )
    flow.submission_grade(submission_id=outcome.submission.pk)  # no model: the checker's
    errors: list[str] = []
    for width in (360, 1280):
        context = signed_in_context(
            browser, live_server_url, user, viewport={"width": width, "height": 800}
        )
        page = watched_page(context, errors)
        try:
            for path in (
                f"/attempts/{attempt.pk}/scorecard/",
                f"/attempts/{attempt.pk}/steps/estimate/",
            ):
                page.goto(live_server_url + path)
                page.wait_for_selector("html[data-ready]", state="attached")
                assert LONG in page.content()
                wide = page.evaluate("document.documentElement.scrollWidth")
                assert wide <= width, f"{path} at {width} px is {wide} px wide"
        finally:
            context.close()
    assert not errors
