"""Every page fits a 360 px phone and passes axe-core: on a phone in light and dark, on a desktop
in light.

axe-core comes from npm (package.json) and is injected by the test into a context that
bypasses the page's CSP; the site itself never serves it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from accounts.instructors import instructor_grant

# Layout and accessibility are HTML and CSS: one database's run checks them.
# One worker walks the site, so the module's site and browser contexts are built once, not once
# per worker.
pytestmark = [pytest.mark.browser, pytest.mark.one_database, pytest.mark.xdist_group(__name__)]
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

# Wide enough that on a phone the picture must scroll inside its own box.
DIAGRAM = """flowchart LR
    client[Clients] --> gw[API gateway: auth, rate limits] --> router[Router: prefix-aware]
    router -->|least-loaded| vllm[vLLM replicas x10]
    autoscaler[Autoscaler: queue depth] -.-> vllm
"""

# One test per page, viewport and colour scheme, over one site built once for the module: the
# pages only read it, so the tests stay independent of each other's order.
PAGES = [
    "/",
    "/questions/chat-api-50qps/",
    "/questions/chat-api-50qps/steps/estimate/",
    "/concepts/",
    "/concepts/tpot-floor/",
    "/planner/",
    "/grader/",
    "/accounts/login/",
    "/accounts/signup/",
    *[f"/attempts/{{attempt}}/steps/{s}/" for s in ANSWERS],
    "/attempts/{attempt}/scorecard/",
    "/history/",
    "/problems/attempts/{attempt}/steps/architecture/",
    "/author/",
    "/author/questions/chat-api-50qps/",
    "/author/questions/chat-api-50qps/revisions/1/",
    "/author/concepts/tpot-floor/",
    # The load-test panel of a prefill-only question, with a run saved (the panel loads by htmx).
    "/attempts/{pooled}/steps/bottlenecks/",
    "/drills/instructor/candidates/{candidate}/",
]
VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}
# The viewports and colour schemes walked. The dark scheme changes colours only, which axe
# checks alike at either width, so the desktop walks in light alone.
LOOKS = [("phone", "light"), ("phone", "dark"), ("desktop", "light")]

# Table cells of a dozen characters or more drawn under 48 px wide: a letter or two a line.
SQUEEZED = """() => Array.from(document.querySelectorAll('th, td'))
    .map(c => [c.innerText.trim(), c.getBoundingClientRect().width])
    .filter(([text, width]) => text.length >= 12 && width > 0 && width < 48)
    .map(([text, width]) => `${Math.round(width)} px: ${text.slice(0, 40)}`)"""

# A definition squeezed beside its term (not under it): a load test's verdict ran two or three
# words a line.
SQUEEZED_DEFINITIONS = """() => Array.from(document.querySelectorAll('dt + dd'))
    .filter(d => Math.abs(d.getBoundingClientRect().top
                          - d.previousElementSibling.getBoundingClientRect().top) < 4)
    .map(d => [d.innerText.trim(), d.getBoundingClientRect().width])
    .filter(([text, width]) => text.length >= 40 && width > 0 && width < 150)
    .map(([text, width]) => `${Math.round(width)} px: ${text.slice(0, 40)}`)"""

# A bordered fieldset draws its top border through the middle of its legend: through the text
# itself once the legend wraps onto a second line (a long rubric point on a phone).
CROSSED_LEGENDS = """() => Array.from(document.querySelectorAll('fieldset > legend'))
    .filter(l => {
        const fs = getComputedStyle(l.parentElement), style = getComputedStyle(l);
        if (fs.borderTopStyle === 'none' || parseFloat(fs.borderTopWidth) === 0) return false;
        if (style.float !== 'none' || l.offsetParent === null) return false;
        const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
        return l.getBoundingClientRect().height > 1.5 * line;
    })
    .map(l => l.innerText.trim().slice(0, 40))"""

# A breadcrumb trail that wraps must not start a line with its "/" separator.
LEADING_SEPARATORS = """() => Array.from(document.querySelectorAll('.breadcrumbs li'))
    .filter((li, i, all) => i > 0
        && li.getBoundingClientRect().top > all[i - 1].getBoundingClientRect().top + 4
        && getComputedStyle(li, '::before').content.includes('/'))
    .map(li => li.innerText.trim().slice(0, 40))"""

# A control drawn past the right edge of the page's content column (outside a box that
# scrolls): the bank's filter button ran 12 px past it at 1280 px.
OVERRUNNING_CONTROLS = """() => Array.from(document.querySelectorAll(
        'button, input, select, textarea, a.button'))
    .filter(el => {
        if (el.offsetParent === null || el.closest('[hidden]')) return false;
        for (let up = el.parentElement; up; up = up.parentElement) {
            if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(up).overflowX))
                return false;
        }
        const column = el.closest('.wrap');
        if (!column) return false;
        const style = getComputedStyle(column);
        const right = column.getBoundingClientRect().right - parseFloat(style.paddingRight);
        return el.getBoundingClientRect().right > right + 1;
    })
    .map(el => (el.innerText || el.name || el.id || el.tagName).trim().slice(0, 40))"""


@pytest.fixture(scope="module")
def site(django_db_setup, django_db_blocker):
    """A live server of its own, with the shipped content and a candidate (an instructor too,
    so the authoring pages are walked) with one attempt whose five steps are submitted and
    graded offline, one at the prefill-only embedding question with a load test run on its
    bottlenecks step, and a candidate to assign work to; committed once for the module's
    read-only walk and flushed after it. Yields (base URL, the ids the paths name, session
    cookie). Not pytest-django's `live_server`, which
    makes every test that uses it transactional: its database is emptied after each test."""
    from django.core.management import call_command
    from django.test import Client
    from pytest_django.live_server_helper import LiveServer

    from practice import services as flow
    from questions.models import Question
    from questions.services import content_load

    with django_db_blocker.unblock():
        # The rows are committed and flushed afterwards: only ever in a test database.
        assert is_test_database(), "the walk needs the test database (see the db test below)"
        report = content_load(root=ROOT / "content")
        assert not report.problems, report.problems
        user = User.objects.create_user("layout", password="a-long-Passphrase-42")
        instructor_grant(user)
        revision = Question.objects.get(slug="chat-api-50qps").current_revision
        attempt = flow.attempt_start(user=user, revision=revision)
        for step, text in ANSWERS.items():
            answer = flow.answer_open(attempt=attempt, step_key=step)
            fields = {"worksheet": "W = 15.2 GB"} if step == "estimate" else {}
            if step == "architecture":  # its diagram is laid out on the step, scorecard, History
                fields = {"diagram": DIAGRAM}
            outcome = flow.step_submit(answer=answer, text=text, fields=fields, base_version=0)
            flow.submission_grade(submission_id=outcome.submission.pk)
        client = Client()
        client.force_login(user)
        pooled = flow.attempt_start(
            user=user,
            revision=Question.objects.get(slug="embedding-rerank-service").current_revision,
        )
        run = client.post(
            reverse("simulator:run", kwargs={"attempt_id": pooled.pk}),
            {
                "scenario": "baseline",
                "replicas": "15",
                "prediction": "Fifteen replicas hold p99 under 500 ms.",
            },
        )
        assert b'class="sim-result"' in run.content, run.content.decode()[:2000]
        candidate = User.objects.create_user("walked-candidate")
        ids = {"attempt": attempt.pk, "pooled": pooled.pk, "candidate": candidate.pk}
        server = LiveServer("localhost")
        server._live_server_modified_settings.enable()  # its ALLOWED_HOSTS
        try:
            yield server.url, ids, client.cookies["sessionid"].value
        finally:
            server._live_server_modified_settings.disable()
            server.stop()
            call_command("flush", interactive=False, verbosity=0)


def is_test_database() -> bool:
    from django.db import connection

    return connection.settings_dict["NAME"] == connection.creation._get_test_db_name()


def test_the_walk_visits_shipped_content_in_a_test_database(bank_loaded):
    """Also makes pytest-django set up the test database when this module runs alone: the walk
    itself asks for no `db` fixture (see `site`)."""
    from questions.models import Concept, Question

    assert is_test_database()
    walked = {p.split("/")[2] for p in PAGES if p.startswith(("/questions/", "/concepts/"))}
    shipped = set(Question.objects.values_list("slug", flat=True))
    shipped |= set(Concept.objects.values_list("slug", flat=True))
    assert walked - {""} <= shipped


@pytest.fixture(scope="module")
def contexts(browser, site):
    """A signed-in browser context per viewport and colour scheme, shared by the walk."""
    base, _, cookie = site
    made = {}
    for name, scheme in LOOKS:
        context = browser.new_context(
            color_scheme=scheme, viewport=VIEWPORTS[name], bypass_csp=True
        )
        context.add_cookies([{"name": "sessionid", "value": cookie, "url": base}])
        made[(name, scheme)] = context
    yield made
    for context in made.values():
        context.close()


@pytest.fixture
def site_db(django_db_blocker):
    """The live server's requests reach the module's committed rows."""
    with django_db_blocker.unblock():
        yield


def _axe_serious(page) -> list[str]:
    """axe-core's serious and critical violations on the page. `resultTypes` keeps full detail
    for the violations only (the passes are cut to one node each): a quarter less time a page,
    the same violations."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize(("viewport", "scheme"), LOOKS, ids=["-".join(look) for look in LOOKS])
@pytest.mark.parametrize("path", PAGES)
def test_the_page_fits_a_phone_and_passes_axe(site, contexts, site_db, path, viewport, scheme):
    base, ids, _ = site
    path = path.format(**ids)
    page = contexts[(viewport, scheme)].new_page()
    page.set_default_timeout(15_000)
    try:
        response = page.goto(base + path)
        assert response is not None and response.ok, f"{path}: {response and response.status}"
        page.wait_for_selector("html[data-ready]", state="attached")
        problems = []
        if viewport == "phone":
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > PHONE["width"]:
                problems.append(f"{path} scrolls sideways at 360 px: {width} px wide")
            problems += [f"{path}: a table cell squeezed to {c}" for c in page.evaluate(SQUEEZED)]
            squeezed = page.evaluate(SQUEEZED_DEFINITIONS)
            problems += [f"{path}: a definition squeezed to {d}" for d in squeezed]
            crossed = page.evaluate(CROSSED_LEGENDS)
            problems += [f"{path}: a border runs through the legend {t!r}" for t in crossed]
            leading = page.evaluate(LEADING_SEPARATORS)
            problems += [f"{path}: a breadcrumb line starts with '/' at {t!r}" for t in leading]
        overrun = page.evaluate(OVERRUNNING_CONTROLS)
        problems += [f"{path} [{viewport}]: {c!r} runs past the column" for c in overrun]
        problems += [f"{path} [{viewport}]: {v}" for v in _axe_serious(page)]
    finally:
        page.close()
    assert problems == [], "\n".join(problems)


def test_a_refused_assignment_passes_axe(site, contexts, site_db):
    """The refusal an instructor sees when the question they chose went away meanwhile (its
    message was a list with role="alert": no longer a list, its item orphaned)."""
    base, ids, _ = site
    page = contexts[("phone", "light")].new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{base}/drills/instructor/candidates/{ids['candidate']}/")
        page.wait_for_selector("html[data-ready]", state="attached")
        page.locator("#assign-what option").first.evaluate("o => { o.value = 'question:gone'; }")
        page.fill("#assign-note", "By Friday, please.")
        with page.expect_navigation():
            page.get_by_role("button", name="Assign").click()
        page.wait_for_selector("html[data-ready]", state="attached")
        assert page.get_by_role("alert").inner_text() == "No published question “gone”."
        assert page.locator("#assign-note").input_value() == "By Friday, please."
        assert _axe_serious(page) == []
    finally:
        page.close()
