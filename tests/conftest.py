"""Shared fixtures: loaded content, a live server, and a real headless Chromium page."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from hypothesis import settings as hypothesis_settings

# No per-example deadline: hypothesis' default of 200 ms is a timing assertion, and these
# machines are shared and noisy. Work bounds are asserted by counting, in the tests.
hypothesis_settings.register_profile("studio", deadline=None)
hypothesis_settings.load_profile("studio")

# Playwright's sync API runs an event loop in the test thread; the ORM calls made by tests
# and fixtures there are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "live_server"}


def pytest_addoption(parser):
    parser.addoption(
        "--database-tests-only",
        action="store_true",
        help="run only the tests that reach the database (CI's second run, on PostgreSQL: the "
        "others would repeat the first run exactly)",
    )


def reaches_database(item) -> bool:
    """Whether a test can touch the database: a db fixture or marker (pytest-django blocks the
    database for any other test), or the `processes` marker of a module that starts servers or
    commands, which reach DATABASE_URL's database without any fixture."""
    return (
        item.get_closest_marker("django_db") is not None
        or bool(DATABASE_FIXTURES & set(item.fixturenames))
        or item.get_closest_marker("processes") is not None
    )


def checks_one_database(item) -> bool:
    """Whether a test's result cannot depend on the database: marked `one_database`, or a page
    driven in Chromium. A browser test checks what a page shows and does; what differs by
    database (constraints, lengths, ordering, locking, transactions) is checked by the view,
    service and process tests, which run on both."""
    return item.get_closest_marker("one_database") is not None or (
        "browser" in item.fixturenames and item.get_closest_marker("processes") is None
    )


def pytest_collection_modifyitems(config, items):
    """With --database-tests-only, leave out tests that cannot touch the database and those
    that check one database only."""
    if not config.getoption("--database-tests-only"):
        return
    keep, drop = [], []
    for item in items:
        (keep if reaches_database(item) and not checks_one_database(item) else drop).append(item)
    config.hook.pytest_deselected(items=drop)
    items[:] = keep


ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


# Where an `alone` test's lock file is, stashed on the test by `_alone_when_marked`.
ALONE_LOCK = pytest.StashKey[Path]()


@pytest.fixture(autouse=True)
def _alone_when_marked(request, tmp_path_factory):
    """A test marked `alone` runs while no other test does: every other test holds a shared
    lock on one file for the xdist workers of this run, for its set-up, call and teardown; an
    `alone` test takes an exclusive one for its call only (`pytest_runtest_call` below), so it
    waits for the other worker's test to finish and holds its next one back while it measures.
    Its set-up (a server to migrate, load and start) runs beside the other worker's tests."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    # Each worker's base temp is <run's temp>/popen-gwN: the parent is the run's, shared.
    path = tmp_path_factory.getbasetemp().parent / "alone.lock"
    if request.node.get_closest_marker("alone") is not None:
        request.node.stash[ALONE_LOCK] = path
        yield
        return
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    path = item.stash.get(ALONE_LOCK, None)
    if path is None:
        return (yield)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return (yield)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# The threads socketserver starts for a live server's requests (Python names a thread after
# its target).
SERVER_REQUEST_THREAD = "(process_request_thread)"


@pytest.fixture(autouse=True, scope="session")
def _test_client_sees_its_own_templates():
    """Django's test client records every template rendered while its request runs, in any
    thread: a live server rendering a page for a browser test's last poll at that moment
    would add that page's context (a log-in form, say) to another test's response. Only the
    renders outside a live server's request threads are the client's."""
    from django.test import client as test_client

    store = test_client.store_rendered_templates

    def store_unless_served(store_dict, signal, sender, template, context, **kwargs):
        if not threading.current_thread().name.endswith(SERVER_REQUEST_THREAD):
            store(store_dict, signal, sender, template, context, **kwargs)

    test_client.store_rendered_templates = store_unless_served
    yield
    test_client.store_rendered_templates = store


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Every cache empty per test: rate-limit counters, health answers, cached pages and the
    in-process copy of the concept notes never leak from one test into the next (a test's
    rows are rolled back without the commit hooks that clear them in production)."""
    from django.core.cache import caches

    from questions.selectors import concepts_cache_clear

    for cache in caches.all():
        cache.clear()
    concepts_cache_clear()
    yield
    for cache in caches.all():
        cache.clear()
    concepts_cache_clear()


@pytest.fixture
def one_rate_window(monkeypatch):
    """Rate limits count per clock window (`rate_limits._count`): a test that makes the
    requests the limit is meant to refuse pins the limiter's clock, so its requests fall in
    one window and the last is refused whenever the test runs."""
    import rate_limits

    now = time.time()
    monkeypatch.setattr(rate_limits, "clock", lambda: now)


@pytest.fixture(scope="session")
def shipped_content():
    """The shipped content/ read and validated once per test process: each test that needs
    it in its database stores this one parse (`content_store`), which the bank's size would
    otherwise make the suite pay for in every such test. Tests that change content files
    read their own copies."""
    from questionbank import read_tree

    tree = read_tree(Path(settings.CONTENT_DIR))
    assert not tree.problems, "\n".join(map(str, tree.problems))
    return tree


# The questions most tests practise on. Storing the whole bank costs three times as much a test
# (0.18 s on SQLite, 0.42 s on PostgreSQL, against 0.06 s and 0.12 s for these three), and most
# tests open one question: only the tests that list, filter or walk the bank ask for all of it
# (`bank_loaded`, `live_server_bank_url`).
CORE_SLUGS = ("chat-api-50qps", "multi-tenant-lora", "long-context-rag")


@pytest.fixture(scope="session")
def core_content(shipped_content):
    """The shipped parse with every concept note and the CORE_SLUGS questions alone."""
    from dataclasses import replace

    questions = [cf for cf in shipped_content.questions if cf.meta["slug"] in CORE_SLUGS]
    assert len(questions) == len(CORE_SLUGS)
    return replace(shipped_content, questions=questions)


def _store(tree):
    from questions.services import content_store

    report = content_store(tree)
    assert not report.problems, "\n".join(map(str, report.problems))
    return report


@pytest.fixture
def content_loaded(db, core_content):
    """The concept notes and the three core questions (CORE_SLUGS) in the test database."""
    return _store(core_content)


@pytest.fixture
def bank_loaded(db, shipped_content):
    """The whole shipped content/ in the test database: every question of the bank."""
    return _store(shipped_content)


@pytest.fixture
def live_server_url(live_server, transactional_db, core_content):
    """A real HTTP server on loopback serving the app, with the concept notes and the three
    core questions loaded."""
    _store(core_content)
    return live_server.url


@pytest.fixture
def live_server_bank_url(live_server, transactional_db, shipped_content):
    """A real HTTP server on loopback serving the app with the whole shipped bank loaded."""
    _store(shipped_content)
    return live_server.url


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright. Missing Chromium fails: browser tests never skip."""
    from playwright.sync_api import expect, sync_playwright

    # Assertions wait as long as page actions do (watched_page's 15 s), not Playwright's 5 s:
    # a loaded machine answers a poll or a save late, and a passing assertion returns at once.
    expect.set_options(timeout=15_000)
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if not executable:
        pytest.fail("Chromium is not installed: apt-get install -y chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


# htmx logs a request it aborted on purpose as two console errors. The worksheet and the
# diagram preview use hx-sync="this:replace": a keystroke's request replaces one still in
# flight, whose answer is already stale. On a slow host the worksheet's first calculation
# (on load) is often still running when the candidate types. A request that fails still
# shows: htmx:sendError, htmx:timeout or htmx:responseError is logged with it.
REPLACED_REQUEST_LOGS = ("htmx:sendAbort", "htmx:afterRequest")


def _collect_errors(page, errors: list[str]) -> None:
    """Append the page's script errors and console errors (CSP violations, failed requests)
    to `errors`, less htmx's log of a request it replaced with a newer one."""
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def console(msg):
        if msg.type == "error" and not msg.text.startswith(REPLACED_REQUEST_LOGS):
            errors.append(msg.text)

    page.on("console", console)


def _new_page(browser, color_scheme: str):
    context = browser.new_context(
        color_scheme=color_scheme, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    _collect_errors(page, errors)
    page.js_errors = errors  # tests assert this stays empty (CSP violations land here too)
    return context, page


@pytest.fixture
def page(browser):
    """A fresh light-mode page; `page.js_errors` collects script errors and CSP violations."""
    context, page = _new_page(browser, "light")
    yield page
    context.close()


@pytest.fixture
def dark_page(browser):
    context, page = _new_page(browser, "dark")
    yield page
    context.close()


def signed_in_context(browser, base: str, user, **options):
    """A browser context signed in as `user`, desktop-sized unless `options` say otherwise.
    Each gets its own test Client: signing a second user into one client would end the first
    one's session."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    context = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **options})
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base}]
    )
    return context


def watched_page(context, errors: list[str]):
    """A new page of `context` whose script errors and console errors (CSP violations, failed
    requests) are appended to `errors`."""
    page = context.new_page()
    page.set_default_timeout(15_000)
    _collect_errors(page, errors)
    return page


@contextmanager
def timers_held(page):
    """The page's timers held while the block runs: a pause the page waits out before acting
    (an autosave's, a filter's) cannot run out between two of the test's actions, however
    slowly a loaded machine runs them. The page's clock jumps a second ahead as it pauses, far
    short of any countdown's end."""
    page.clock.install()
    page.clock.pause_at(time.time() + 1)
    try:
        yield
    finally:
        page.clock.resume()


def at_once(*calls) -> list:
    """Run each of `calls` in a thread of its own, all released together (a barrier), as
    requests arriving at the same moment would be; each thread closes its own database
    connection. Returns what each call returned, or the exception it raised, in the order
    given: a test of a race says which outcomes it allows."""
    from django.db import connection

    barrier = threading.Barrier(len(calls))
    outcomes: list = [None] * len(calls)

    def run(i: int, call) -> None:
        try:
            barrier.wait()
            outcomes[i] = call()
        except Exception as exc:  # what the call ended with is the outcome the test reads
            outcomes[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def save_screenshot(page, name: str) -> Path:
    """Save a full-page PNG under tests/artifacts/ (kept as a CI artifact)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    # caret="initial": hiding the caret (the default) leaves style="" on the focused field,
    # which htmx then copies on its next swap, and the page's CSP rightly refuses it.
    page.screenshot(path=str(path), full_page=True, caret="initial")
    return path


def scrolls_with_a_hint(box) -> None:
    """`box` is wider inside than it shows, shades its edges as site.css's .scroll-x does
    (covers that ride with the content over shades that stay on the box), and, focused, two
    ArrowRight presses scroll it; it is scrolled back to its start after."""
    assert box.get_attribute("tabindex") == "0"
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")  # so the hint applies
    layers = box.evaluate("el => getComputedStyle(el).backgroundAttachment")
    assert "local" in layers and "scroll" in layers, layers
    box.focus()
    box.page.keyboard.press("ArrowRight")
    box.page.keyboard.press("ArrowRight")
    # Polled here: the page's CSP forbids the string page.wait_for_function would evaluate.
    for _ in range(50):
        if box.evaluate("el => el.scrollLeft") > 0:
            break
        box.page.wait_for_timeout(100)
    else:
        raise AssertionError("the box did not scroll")
    box.page.wait_for_timeout(500)  # a smooth scroll ends before the box goes back
    box.evaluate("el => el.scrollTo({left: 0, behavior: 'instant'})")
