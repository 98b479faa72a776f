"""Cached practice pages: keyed on the versions that practice.services's writes bump."""

import re

import pytest
from django.contrib.auth.models import User
from django.contrib.messages import add_message, constants
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.cache import caches
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django_htmx.middleware import HtmxMiddleware

from practice import page_cache
from practice import services as flow
from practice.models import Attempt, StepAnswer, Submission
from questions.models import Question

TOKEN = re.compile(r'"x-csrftoken": "([A-Za-z0-9]+)"')


@pytest.fixture
def candidate(db):
    return User.objects.create_user("cached", password="cached-Passphrase-1")


@pytest.fixture
def attempt(candidate, content_loaded):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    return flow.attempt_start(user=candidate, revision=revision)


@pytest.fixture
def client_in(candidate):
    client = Client()
    client.force_login(candidate)
    return client


def version(attempt: Attempt) -> int:
    return Attempt.objects.values_list("state_version", flat=True).get(pk=attempt.pk)


def without_tokens(html: str) -> str:
    html = TOKEN.sub('"x-csrftoken": "-"', html)
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)


def row_version(answer: StepAnswer) -> int:
    return StepAnswer.objects.values_list("row_version", flat=True).get(pk=answer.pk)


def test_every_write_through_the_flow_bumps_a_version_pages_are_keyed_on(attempt, candidate):
    other = flow.attempt_start(user=candidate, revision=attempt.revision)
    seen = [version(attempt)]

    def bumped() -> None:
        seen.append(version(attempt))
        assert seen[-1] > seen[-2], seen

    answer = flow.answer_open(attempt=attempt, step_key="architecture")
    bumped()
    # Edits of an answer bump the answer's own row_version and leave the attempt's (so other
    # steps' pages stay cached).
    flow.draft_save(answer=answer, text="A router.", fields={}, base_version=0)
    assert row_version(answer) == 1 and version(attempt) == seen[-1]
    estimate = flow.answer_open(attempt=attempt, step_key="estimate")
    bumped()
    flow.quantity_check_store(
        answer=estimate, quantity_id="tpot_floor", check={"answer": "1", "verdict": "close"}
    )
    assert row_version(estimate) == 1 and version(attempt) == seen[-1]
    outcome = flow.step_submit(
        answer=answer, text="A router, then replicas.", fields={}, base_version=1
    )
    bumped()
    assert row_version(answer) == 2
    flow.submission_grade(submission_id=outcome.submission.pk)
    bumped()
    Submission.objects.filter(pk=outcome.submission.pk).update(grade_status="grading")
    assert flow.grading_requeue_stale(older_than_s=-60) == 1
    bumped()
    assert version(other) == 0, "another attempt's writes moved this one"


def test_a_repeated_page_is_served_from_the_cache(
    attempt, client_in, django_assert_max_num_queries
):
    url = f"/attempts/{attempt.pk}/steps/architecture/"
    assert client_in.get(url).status_code == 200  # opens the step: a write, so a new state
    first = client_in.get(url)
    assert first.status_code == 200
    # Session, user, the attempt (its ownership and state) and the row versions of the
    # answers the page shows: nothing of the page's own.
    with django_assert_max_num_queries(4):
        again = client_in.get(url)
    assert again.status_code == 200
    assert without_tokens(again.content.decode()) == without_tokens(first.content.decode())


def test_a_cached_page_follows_every_kind_of_write(attempt, client_in):
    url = f"/attempts/{attempt.pk}/steps/architecture/"
    client_in.get(url)
    answer = StepAnswer.objects.get(attempt=attempt, step_key="architecture")

    def fresh_equals_cached() -> str:
        cached = client_in.get(url).content.decode()
        caches["pages"].clear()
        fresh = client_in.get(url).content.decode()
        assert without_tokens(cached) == without_tokens(fresh)
        return fresh

    # A draft saved through the page.
    saved = client_in.post(
        url + "draft/",
        {"text": "A gateway, then a prefix-aware router.", "base_version": 0, "seconds": 3},
    )
    assert saved.status_code == 200
    assert "A gateway, then a prefix-aware router." in fresh_equals_cached()
    # A draft saved in another tab, which this page never saw.
    flow.draft_save(answer=answer, text="Saved in another tab.", fields={}, base_version=1)
    assert "Saved in another tab." in fresh_equals_cached()
    # A submission, then its grade arriving from the worker.
    answer.refresh_from_db()
    outcome = flow.step_submit(
        answer=answer,
        text="We autoscale on queue depth, not GPU utilisation.",
        fields={},
        base_version=answer.version,
    )
    queued = fresh_equals_cached()
    assert "Queued" in queued or "queued" in queued
    flow.submission_grade(submission_id=outcome.submission.pk)
    graded = fresh_equals_cached()
    assert graded != queued
    assert "Reference answer" in graded or "reference" in graded.lower()


def test_a_draft_on_one_step_leaves_the_other_steps_pages_cached(
    attempt, client_in, django_assert_max_num_queries
):
    base = f"/attempts/{attempt.pk}/steps/"
    for step in ("architecture", "tradeoffs", "architecture"):  # open both, then cache one
        assert client_in.get(base + step + "/").status_code == 200
    for number in range(3):
        saved = client_in.post(
            base + "tradeoffs/draft/",
            {"text": f"Draft {number} of the trade-offs.", "base_version": number},
        )
        assert saved.status_code == 200
        with django_assert_max_num_queries(4):  # a hit: no rendering queries
            assert client_in.get(base + "architecture/").status_code == 200
    assert "Draft 2 of the trade-offs." in client_in.get(base + "tradeoffs/").content.decode()


def test_napkin_math_follows_the_slo_card_it_shows(attempt, client_in):
    base = f"/attempts/{attempt.pk}/steps/"
    client_in.get(base + "clarify/")
    client_in.get(base + "estimate/")  # opens the step (a new state); the next one is cached
    before = client_in.get(base + "estimate/").content.decode()
    assert "<code>ttft_p99</code>" not in before
    saved = client_in.post(base + "clarify/draft/", {"ttft_p99_ms": "750", "base_version": 0})
    assert saved.status_code == 200
    after = client_in.get(base + "estimate/").content.decode()
    assert "<code>ttft_p99</code></dt><dd><code>750 ms</code>" in after, (
        "the estimate page kept a copy from before the card changed"
    )
    caches["pages"].clear()
    assert without_tokens(client_in.get(base + "estimate/").content.decode()) == without_tokens(
        after
    )


def test_each_hit_gets_its_own_csrf_token_and_it_works(attempt, candidate):
    client = Client(enforce_csrf_checks=True)
    client.force_login(candidate)
    url = f"/attempts/{attempt.pk}/steps/architecture/"
    tokens = [TOKEN.search(client.get(url).content.decode()).group(1) for _ in range(3)]
    assert len(set(tokens)) == 3, "a cached page repeated a token"
    saved = client.post(
        url + "draft/",
        {"text": "Saved with a token from a cached page.", "base_version": 0},
        headers={"X-CSRFToken": tokens[-1]},
    )
    assert saved.status_code == 200


def test_someone_elses_cached_page_is_still_a_404(attempt, client_in, db):
    url = f"/attempts/{attempt.pk}/steps/architecture/"
    assert client_in.get(url).status_code == 200
    intruder = Client()
    intruder.force_login(User.objects.create_user("intruder", password="intruder-Pass-1"))
    assert intruder.get(url).status_code == 404


def test_a_response_carrying_a_message_is_never_cached(attempt):
    calls = []

    def build() -> HttpResponse:
        calls.append(1)
        return HttpResponse(f"page {len(calls)}")

    def request(with_message: bool):
        req = RequestFactory().get(f"/attempts/{attempt.pk}/steps/clarify/")
        SessionMiddleware(lambda r: None).process_request(req)
        MessageMiddleware(lambda r: None).process_request(req)
        HtmxMiddleware(lambda r: None)(req)
        if with_message:
            add_message(req, constants.INFO, "Welcome back.")
        return req

    assert page_cache.respond(request(True), attempt, build).content == b"page 1"
    assert page_cache.respond(request(True), attempt, build).content == b"page 2"
    # Without a message the page is cached, and the next request gets that copy.
    assert page_cache.respond(request(False), attempt, build).content == b"page 3"
    assert page_cache.respond(request(False), attempt, build).content == b"page 3"
    assert len(calls) == 3


def test_a_page_key_stays_short_and_plain_whatever_the_query_string(attempt):
    """A hostile or huge query string would make a key no cache backend but the local one takes
    (memcached refuses keys over 250 characters, or with control characters or spaces)."""
    queries = ["?q=%00%01%3Cscript%3E" * 40, "?next=" + "9" * 3000, "?a=b c&\u2028=1"]
    keys = set()
    for query in queries:
        req = RequestFactory().get(f"/attempts/{attempt.pk}/steps/clarify/{query}")
        HtmxMiddleware(lambda r: None)(req)
        key = page_cache.page_key(req, attempt)
        assert len(key) <= 250 and key.isprintable() and " " not in key, key
        keys.add(key)
    assert len(keys) == len(queries)  # other paths still get other pages


def test_a_stored_quantity_check_shows_on_the_cached_estimate_page(attempt, client_in):
    base = f"/attempts/{attempt.pk}/steps/"
    client_in.get(base + "estimate/")  # opens the step (a new state); the next one is cached
    before = client_in.get(base + "estimate/").content.decode()
    checked = client_in.post(
        f"/attempts/{attempt.pk}/check/",
        {"quantity": "tpot_floor", "expression": "1 ms", "worksheet": ""},
    )
    assert checked.status_code == 302  # without htmx, back to the step page
    after = client_in.get(base + "estimate/").content.decode()
    assert without_tokens(after) != without_tokens(before), "the page kept its copy"
    caches["pages"].clear()
    assert without_tokens(client_in.get(base + "estimate/").content.decode()) == without_tokens(
        after
    )
