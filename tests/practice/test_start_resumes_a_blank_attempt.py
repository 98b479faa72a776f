"""Start practising resumes an open attempt with nothing written in it instead of adding an
empty one beside it; with work in the open attempt it starts afresh, as a candidate may mean
to; and the question page tells the candidate's attempts apart."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from mocks.models import MockSession
from practice import services as flow
from practice.models import Attempt, StepAnswer, Submission
from questions.models import Question

pytestmark = pytest.mark.django_db

SLUG = "chat-api-50qps"
START = reverse("attempt_start", args=[SLUG])


@pytest.fixture
def candidate(client, content_loaded):
    user = User.objects.create_user("starter", password="a-long-Passphrase-42")
    client.force_login(user)
    return user


def _clarify(attempt: Attempt) -> str:
    return f"/attempts/{attempt.pk}/steps/clarify/"


def test_pressing_start_again_resumes_the_blank_attempt(client, candidate):
    first = client.post(START)
    # The step page opens (and creates the empty draft row) before the second press.
    assert client.get(first.url).status_code == 200
    again = [client.post(START) for _ in range(3)]
    attempt = Attempt.objects.get()
    assert [r.url for r in again] == [_clarify(attempt)] * 3
    page = client.get(again[-1].url).text
    assert "nothing written in it yet" in page


def test_start_begins_afresh_once_the_open_attempt_holds_work(client, candidate):
    client.post(START)
    first = Attempt.objects.get()
    StepAnswer.objects.create(attempt=first, step_key="clarify", text="Peak is 3x mean.")
    response = client.post(START)
    second = Attempt.objects.exclude(pk=first.pk).get()
    assert response.url == _clarify(second)


def test_a_peak_or_mean_choice_alone_is_nothing_written(client, candidate):
    client.post(START)
    first = Attempt.objects.get()
    StepAnswer.objects.create(
        attempt=first, step_key="clarify", fields={"qps_kind": "peak", "slo_ttft_ms": " "}
    )
    client.post(START)
    assert Attempt.objects.count() == 1


def test_only_the_candidates_own_blank_open_practice_attempt_is_resumed(candidate):
    revision = Question.objects.get(slug=SLUG).current_revision
    finished = flow.attempt_start(user=candidate, revision=revision)
    flow.attempt_finish(attempt_id=finished.pk)
    submitted = flow.attempt_start(user=candidate, revision=revision)
    answer = StepAnswer.objects.create(attempt=submitted, step_key="clarify")
    Submission.objects.create(answer=answer, number=1, text="", draft_version=0)
    mock = flow.attempt_start(user=candidate, revision=revision)
    MockSession.objects.create(attempt=mock, mode=MockSession.Mode.APP, total_minutes=45)
    preview = flow.attempt_start(user=candidate, revision=revision, is_preview=True)
    other = User.objects.create_user("other", password="a-long-Passphrase-42")
    theirs = flow.attempt_start(user=other, revision=revision)
    attempt, created = flow.attempt_start_or_resume(user=candidate, revision=revision)
    assert created
    assert attempt.pk not in {finished.pk, submitted.pk, mock.pk, preview.pk, theirs.pk}
    again, created = flow.attempt_start_or_resume(user=candidate, revision=revision)
    assert (again.pk, created) == (attempt.pk, False)


def test_resuming_does_not_count_against_the_daily_cap(client, candidate, settings):
    settings.ATTEMPTS_PER_DAY = 1
    assert [client.post(START).status_code for _ in range(3)] == [302, 302, 302]
    assert Attempt.objects.count() == 1


def test_the_question_page_tells_attempts_apart(client, candidate):
    revision = Question.objects.get(slug=SLUG).current_revision
    done = flow.attempt_start(user=candidate, revision=revision)
    answer = StepAnswer.objects.create(attempt=done, step_key="clarify", text="x")
    Submission.objects.create(answer=answer, number=1, text="x", draft_version=0)
    # A follow-up answered on the step after it is not that step submitted.
    asked = StepAnswer.objects.create(
        attempt=done, step_key="estimate", follow_up_id="mock-1", text="y"
    )
    Submission.objects.create(answer=asked, number=1, text="y", draft_version=0)
    Attempt.objects.filter(pk=done.pk).update(started_at="2026-12-06T09:05:00Z")
    flow.attempt_start(user=candidate, revision=revision)
    page = client.get(reverse("question", args=[SLUG])).text
    assert "Attempt 1 · Dec 6, 09:05 · 1 of 5 steps submitted (resume)" in page
    assert "Attempt 2 · " in page and "0 of 5 steps submitted" in page


def test_a_load_test_saved_with_the_attempt_is_work_start_leaves(client, candidate):
    # The panel saves a run (and its written prediction) beside an empty bottlenecks draft:
    # the attempt holds something the candidate made, and Start begins a new one.
    first = Attempt.objects.get(pk=int(client.post(START).url.split("/")[2]))
    run = client.post(
        reverse("simulator:run", kwargs={"attempt_id": first.pk}),
        {"scenario": "baseline", "prediction": "p99 TTFT stays under 300 ms.", "replicas": "10",
         "qps": "50"},
    )  # fmt: skip
    assert run.status_code == 200
    client.post(START)
    assert Attempt.objects.filter(user=candidate).count() == 2
