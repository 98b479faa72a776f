"""Every page fits a 360 px phone and passes axe-core, in light and dark, desktop and phone.

axe-core comes from npm (package.json) and is injected by the test into a context that
bypasses the page's CSP; the site itself never serves it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from accounts.instructors import instructor_grant

# Layout and accessibility are HTML and CSS: one database's run checks them.
pytestmark = [pytest.mark.browser, pytest.mark.one_database]
ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 900}

ANSWERS = {
    "clarify": "Peak 50 QPS, p99 TTFT 300 ms, p99 TPOT 50 ms, 512 tokens in and 256 out.",
    "estimate": "Weights 15.2 GB in BF16; KV 56 KiB per token; ten instances at rho 0.8.",
    "architecture": (
        "An API gateway with auth and rate limits, a prefix-aware router, ten vLLM replicas "
        "with --enable-prefix-caching, autoscaling on queue depth."
    ),
    "bottlenecks": (
        "The queue grows past the knee and TTFT breaks; a dead replica pushes the rest past "
        "the knee, so keep spare headroom; cold starts take tens of seconds."
    ),
    "tradeoffs": "AWQ frees VRAM for KV at a small quality cost that we evaluate first.",
}


@pytest.fixture
def graded_attempt(live_server_url):
    """A candidate with one attempt whose five steps are submitted and graded offline."""
    from interview import flow
    from interview.models import Question

    user = User.objects.create_user("layout", password="a-long-Passphrase-42")
    instructor_grant(user)  # the authoring pages are checked too
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    for step, text in ANSWERS.items():
        answer = flow.answer_open(attempt=attempt, step_key=step)
        fields = {"worksheet": "W = 15.2 GB"} if step == "estimate" else {}
        outcome = flow.step_submit(answer=answer, text=text, fields=fields, base_version=0)
        flow.submission_grade(submission_id=outcome.submission.pk)
    return user, attempt


def _signed_in_context(browser, client_cookie, viewport, scheme, base):
    context = browser.new_context(color_scheme=scheme, viewport=viewport, bypass_csp=True)
    context.add_cookies([{"name": "sessionid", "value": client_cookie, "url": base}])
    return context


def _pages(attempt) -> list[str]:
    a = attempt.pk
    steps = [f"/attempts/{a}/steps/{s}/" for s in ANSWERS]
    return [
        "/",
        "/questions/chat-api-50qps/",
        "/questions/chat-api-50qps/steps/estimate/",
        "/concepts/",
        "/concepts/tpot-floor/",
        "/planner/",
        "/grader/",
        "/accounts/login/",
        "/accounts/signup/",
        *steps,
        f"/attempts/{a}/scorecard/",
        "/history/",
        f"/problems/attempts/{a}/steps/architecture/",
        "/author/",
        "/author/questions/chat-api-50qps/",
        "/author/questions/chat-api-50qps/revisions/1/",
        "/author/concepts/tpot-floor/",
    ]


def _axe_serious(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document)")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_fits_a_phone_and_passes_axe(
    browser, live_server_url, graded_attempt, client, scheme
):
    user, attempt = graded_attempt
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    problems: list[str] = []
    for viewport in (PHONE, DESKTOP):
        context = _signed_in_context(browser, cookie, viewport, scheme, live_server_url)
        page = context.new_page()
        page.set_default_timeout(15_000)
        for path in _pages(attempt):
            response = page.goto(live_server_url + path)
            assert response is not None and response.ok, f"{path}: {response and response.status}"
            page.wait_for_load_state("networkidle")
            if viewport is PHONE:
                width = page.evaluate("document.documentElement.scrollWidth")
                if width > PHONE["width"]:
                    problems.append(f"{path} scrolls sideways at 360 px: {width} px wide")
            problems += [f"{path} [{viewport['width']} px]: {v}" for v in _axe_serious(page)]
        context.close()
    assert problems == [], "\n".join(problems)
