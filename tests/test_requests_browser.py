"""One handler (static/js/requests.js) tells every failed request of the practice step, the
drill set, the question editor, the mock interviewer's page and the load-test panel, in the
box where that request's answer would go: a server error, a lost connection (the request
aborted) and an expired session, whose sign-in link is reached from the keyboard; and
practice keeps the browser's copy of the text when the log-in page answers its save. Two
failures told in one box keep the one that matters more: a Submit's over its autosave's, a
retry's "still signed out" over an autosave's "expired"."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.cache import cache
from playwright.sync_api import expect

from tests.conftest import signed_in_context

pytestmark = pytest.mark.browser
PASSWORD = "a-long-Passphrase-42"


@dataclass
class Box:
    """A page open in the browser, one of its requests and the box that tells its failure."""

    page: object
    user: User
    send: object  # sends the request, as a person would
    route: object  # the request's address, for page.route
    box: str  # where its failure is told
    failed: str  # the first words of that message
    field: str  # where the person typed, from which Tab reaches the sign-in link


def _practice(browser, base, step: str = "architecture") -> Box:
    from practice import services as flow
    from questions.models import Question

    user = User.objects.create_user("requests-practice", password=PASSWORD)
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    page = signed_in_context(browser, base, user).new_page()
    page.goto(f"{base}/attempts/{attempt.pk}/steps/{step}/")

    def send(text):
        page.locator("#answer-text").fill(text)
        page.locator("#answer-text").dispatch_event("input")

    return Box(
        page,
        user,
        send,
        "**/steps/architecture/draft/",
        "#save-status",
        "Not saved.",
        "#answer-text",
    )


def _drills(browser, base) -> Box:
    from drills import services

    user = User.objects.create_user("requests-drills", password=PASSWORD)
    drill_set = services.drill_set_start(user=user, kind="n_inst")
    page = signed_in_context(browser, base, user).new_page()
    page.goto(f"{base}/drills/sets/{drill_set.pk}/")

    def send(text):
        page.locator("#answer-1").fill("3")
        page.locator("#drill-1").get_by_role("button", name="Check").click()

    return Box(
        page, user, send, "**/drills/1/answer/", "#drill-1 form", "Not checked.", "#answer-1"
    )


def _authoring(browser, base) -> Box:
    from accounts.instructors import instructor_grant
    from authoring import services

    user = User.objects.create_user("requests-author", password=PASSWORD)
    instructor_grant(user)
    services.question_new(slug="requests-told", user=user)
    page = signed_in_context(browser, base, user).new_page()
    page.goto(f"{base}/author/questions/requests-told/")
    template = page.input_value("#source")

    def send(text):
        page.fill("#source", template + "\n" + text)

    return Box(page, user, send, re.compile(r".*/save/$"), "#save-status", "Not saved.", "#source")


def _mock_interviewer(browser, base) -> Box:
    from mocks import services as mock
    from questions.models import Question

    candidate = User.objects.create_user("requests-candidate", password=PASSWORD)
    user = User.objects.create_user("requests-interviewer", password=PASSWORD)
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=candidate, revision=revision, mode="human")
    mock.invite_accept(session_id=session.pk, token=mock.invite_token(session), user=user)
    page = signed_in_context(browser, base, user).new_page()
    page.goto(f"{base}/mock/{session.pk}/interview/")

    def send(text):
        page.locator("#nudge-text").fill(text)
        page.get_by_role("button", name="Send the nudge").click()

    return Box(page, user, send, "**/interview/nudge/", "#nudge-status", "Not sent.", "#nudge-text")


def _simulator(browser, base) -> Box:
    box = _practice(browser, base, step="bottlenecks")
    page = box.page
    page.locator("#sim-form").wait_for()

    def send(text):
        page.locator("#sim-replicas").fill("3")  # blank without a design of the candidate's
        page.locator("#sim-form [name=prediction]").fill("It holds at the peak.")
        page.locator("#sim-form button[name=scenario]").first.click()

    return Box(page, box.user, send, "**/run/", "#sim-form", "Not run.", "#sim-replicas")


PAGES = {
    "practice": _practice,
    "drills": _drills,
    "authoring": _authoring,
    "mock-interviewer": _mock_interviewer,
    "simulator": _simulator,
}


@pytest.fixture
def open_box(browser, live_server_url):
    """open_box(page name, **options) -> Box, ready (html[data-ready]); closed after the test."""
    opened = []

    def open_(name: str, **options) -> Box:
        box = PAGES[name](browser, live_server_url, **options)
        opened.append(box)
        box.page.set_default_timeout(15_000)
        box.page.locator("html[data-ready]").wait_for(state="attached")
        return box

    yield open_
    for box in opened:
        box.page.context.close()


@pytest.fixture(params=PAGES)
def box(request, open_box):
    return open_box(request.param)


@pytest.mark.parametrize(
    "answer, told",
    [
        (lambda route: route.fulfill(status=500, body="boom"), "The server had an error (500)."),
        (lambda route: route.abort(), "Connection lost."),
    ],
    ids=["server-error", "connection-lost"],
)
def test_a_failed_request_is_told_in_its_own_box(box, answer, told):
    box.page.route(box.route, answer)
    box.send("Typed while the request fails.")
    expect(box.page.locator(box.box)).to_contain_text(f"{box.failed} {told}")


def _tab_to(page, field: str, name: str) -> None:
    """From `field`, Tab until the link `name` has the focus (a bounded count of presses)."""
    page.locator(field).focus()
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == name:
            return
    pytest.fail(f"Tab never reached {name!r}")


def _sign_in(page, user) -> None:
    page.get_by_label("Username").fill(user.get_username())
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()


def _expire_the_session() -> None:
    Session.objects.all().delete()
    cache.clear()


def test_an_expired_session_is_told_with_a_sign_in_link_the_keyboard_reaches(box):
    page = box.page
    _expire_the_session()
    box.send("Typed after the session ended.")
    told = page.locator(box.box)
    expect(told).to_contain_text(f"{box.failed} Your session has expired.")
    assert told.locator("input[name=username]").count() == 0  # the log-in page not swapped in
    link = told.get_by_role("link", name=re.compile("^Sign in again"))
    _tab_to(page, box.field, link.inner_text())


def _autosaved(page, send) -> None:
    """send(), then wait until the autosave its typing sets off has had its answer (and
    requests.js has told any failure); not one that a blur set off before."""
    page.evaluate(
        """() => {
          window.autosaveAnswered = false;
          document.body.addEventListener("htmx:afterRequest", (event) => {
            const cause = event.detail.requestConfig.triggeringEvent;
            const typed = Boolean(cause) && cause.type === "input";
            if (event.detail.elt.id === "autosave" && typed) window.autosaveAnswered = true;
          });
        }"""
    )
    send()
    page.wait_for_function("() => window.autosaveAnswered")


def test_a_practice_answer_survives_an_expired_session_and_saves_after_sign_in(open_box):
    from practice.models import Submission

    box = open_box("practice")
    page = box.page
    status = page.locator("#save-status")
    _expire_the_session()
    box.send("Typed after the session ended.")
    expect(status).to_contain_text("Not saved. Your session has expired.")
    # The log-in page answered the save with a 200: the browser's copy is kept all the same.
    copies = page.evaluate("Object.values(localStorage).join(' ')")
    assert "Typed after the session ended." in copies
    # Pressed before signing in, the button says so; an autosave failing after that (the
    # blur of the button sets one off) says less and leaves that message in place.
    page.get_by_role("button", name="Save now").click()
    expect(status).to_contain_text("You are still signed out.")
    _autosaved(page, lambda: box.send("Typed after the session ended, and more."))
    expect(status).to_contain_text("Not saved. You are still signed out.")
    with page.context.expect_page() as new_tab:
        page.get_by_role("link", name="Sign in again in a new tab").click()
    _sign_in(new_tab.value, box.user)
    page.bring_to_front()
    page.get_by_role("button", name="Save now").click()
    expect(status).to_contain_text("Draft saved")
    assert not Submission.objects.exists()  # "Save now" saves the draft, and only that


def test_a_submit_after_an_expired_session_is_submitted_again_after_sign_in(open_box):
    """The Submit's failure is told beside it in its own words, over the failure of the
    autosave that the blur of the Submit button sets off, and its button submits."""
    from practice.models import Submission

    box = open_box("practice")
    page = box.page
    status = page.locator("#save-status")
    page.locator("#answer-text").fill("Typed after the session ended.")
    _expire_the_session()
    page.locator("#submit-button").click()
    expect(status).to_contain_text("Not submitted. Your session has expired.")
    expect(status.get_by_role("button", name="Save now")).to_have_count(0)
    with page.context.expect_page() as new_tab:
        status.get_by_role("link", name="Sign in again in a new tab").click()
    _sign_in(new_tab.value, box.user)
    page.bring_to_front()
    status.get_by_role("button", name="Submit again").click()
    expect(page.locator("#feedback")).to_be_visible()
    assert Submission.objects.get().text == "Typed after the session ended."


def test_a_drill_after_an_expired_session_returns_to_its_set_after_sign_in(open_box):
    box = open_box("drills")
    page = box.page
    set_url = page.url
    _expire_the_session()
    box.send("3")
    page.locator("#drill-1").get_by_role("link", name="Sign in again").press("Enter")
    _sign_in(page, box.user)
    page.wait_for_url(set_url)
    page.locator("#answer-1").fill("3")
    page.locator("#drill-1").get_by_role("button", name="Check").click()
    expect(page.locator("#drill-1 [data-testid=verdict]")).to_be_visible()


def test_a_check_after_an_expired_session_is_checked_again_after_sign_in(open_box):
    """A quantity's Check names the quantity by its button: "Check again" sends it again by
    that button, in the page that kept the expression."""
    box = open_box("practice", step="estimate")
    page = box.page
    _expire_the_session()
    page.locator("#q-tpot_floor").fill("15.2 GB / (0.7 * 1008 GB/s) in ms")
    page.locator("#q-tpot_floor").press("Enter")
    result = page.locator("#check-tpot_floor")
    expect(result.get_by_role("alert")).to_contain_text("Not checked. Your session has expired.")
    with page.context.expect_page() as new_tab:
        result.get_by_role("link", name="Sign in again in a new tab").click()
    _sign_in(new_tab.value, box.user)
    page.bring_to_front()
    result.get_by_role("button", name="Check again").click()
    expect(result).to_contain_text("Correct")


def test_the_editor_tells_an_expired_session_and_saves_after_sign_in(open_box):
    """Signed out, the editor's autosave is sent to the log-in page: the handler asks the
    server whether the session is still there and says so, with the text kept."""
    from authoring import services

    box = open_box("authoring")
    page = box.page
    _expire_the_session()
    box.send("Typed after the session ended.")
    expect(page.locator("#save-status")).to_contain_text("Not saved. Your session has expired.")
    expect(page.locator("#live-preview")).to_contain_text("Not checked. Your session has expired.")
    with page.context.expect_page() as new_tab:
        page.locator("#save-status").get_by_role("link", name="Sign in again in a new tab").click()
    _sign_in(new_tab.value, box.user)
    page.bring_to_front()
    page.get_by_role("button", name="Save now").click()
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    assert services.question_draft("requests-told").text.endswith("Typed after the session ended.")
