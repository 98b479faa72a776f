"""The practice flow: attempts, autosave, submissions, grading, feedback, access control."""

import copy
import re

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from practice import services as flow
from practice.models import Attempt, Grade, StepAnswer, Submission
from practice.scorecard import WAITING
from practice.services import submission_grade
from questions.models import QuestionRevision
from tests.conftest import at_once

ARCHITECTURE_ANSWER = (
    "Clients go through an API gateway that handles auth and rate limits, then a prefix-aware "
    "router in front of ten vLLM replicas of Qwen2.5-7B-AWQ. We turn on prefix caching so the "
    "shared system prompt is prefilled once per replica. We autoscale on the summed queue depth, "
    "vllm:num_requests_waiting, rather than on GPU utilisation."
)


class HtmxClient(Client):
    """The test client, with `htmx=True` sending the HX-Request header as htmx does."""

    def _htmx(self, kwargs):
        if kwargs.pop("htmx", False):
            kwargs["headers"] = {**(kwargs.get("headers") or {}), "HX-Request": "true"}
        return kwargs

    def get(self, path, *args, **kwargs):
        return super().get(path, *args, **self._htmx(kwargs))

    def post(self, path, *args, **kwargs):
        return super().post(path, *args, **self._htmx(kwargs))

    def generic(self, method, path, *args, **kwargs):
        return super().generic(method, path, *args, **self._htmx(kwargs))


@pytest.fixture
def candidate(db):
    return User.objects.create_user("cand", password="cand-Passphrase-1")


@pytest.fixture
def client_in(candidate):
    client = HtmxClient()
    client.force_login(candidate)
    return client


@pytest.fixture
def attempt(client_in, content_loaded):
    response = client_in.post(reverse("attempt_start", args=["chat-api-50qps"]))
    assert response.status_code == 302
    return Attempt.objects.get()


def step_url(attempt, step, action=""):
    base = f"/attempts/{attempt.pk}/steps/{step}/"
    return base + (f"{action}/" if action else "")


def estimate_graded(client_in, attempt, boxes: dict, on_commit) -> None:
    """The estimate step submitted with `boxes` and graded here (`on_commit`:
    django_capture_on_commit_callbacks, so that no worker runs)."""
    with on_commit(execute=False):
        client_in.post(
            step_url(attempt, "estimate", "submit"),
            {"base_version": 0, "text": "", "worksheet": "", **boxes},
            htmx=True,
        )
    submission_grade(submission_id=Submission.objects.get().pk)


def napkin_on_the_scorecard(client_in, attempt, boxes: dict, on_commit) -> str:
    """The scorecard's napkin-math section after `estimate_graded` and the attempt finished."""
    estimate_graded(client_in, attempt, boxes, on_commit)
    client_in.post(reverse("attempt_finish", args=[attempt.pk]))
    card = client_in.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
    return card.split('id="napkin-h"')[1].split("</section>")[0]


def test_starting_needs_an_account(client, content_loaded):
    response = client.post(reverse("attempt_start", args=["chat-api-50qps"]))
    assert response.status_code == 302
    assert response.url.startswith("/accounts/login/")
    assert not Attempt.objects.exists()


def test_start_pins_the_current_revision_and_opens_clarify(client_in, attempt):
    assert attempt.revision == attempt.revision.question.current_revision
    page = client_in.get(step_url(attempt, "clarify"))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="peak_qps"' in html and 'name="qps_kind"' in html
    assert "hx-headers=" in html


def test_autosave_saves_and_bumps_the_version(client_in, attempt):
    response = client_in.post(
        step_url(attempt, "architecture", "draft"),
        {"base_version": 0, "text": "first draft"},
        htmx=True,
    )
    assert response.status_code == 200
    assert 'value="1"' in response.content.decode()
    assert re.search(r"Draft saved at \d\d:\d\d:\d\d UTC\.", response.content.decode())
    answer = StepAnswer.objects.get(step_key="architecture")
    assert (answer.text, answer.version) == ("first draft", 1)
    # Reloading the page shows the draft.
    assert "first draft" in client_in.get(step_url(attempt, "architecture")).content.decode()


def test_a_stale_tab_cannot_overwrite_a_newer_draft(client_in, attempt):
    url = step_url(attempt, "architecture", "draft")
    client_in.post(url, {"base_version": 0, "text": "tab A"}, htmx=True)
    client_in.post(url, {"base_version": 1, "text": "tab A, more"}, htmx=True)
    stale = client_in.post(url, {"base_version": 1, "text": "tab B, older"}, htmx=True)
    assert stale.status_code == 409
    body = stale.content.decode()
    assert "changed in another tab" in body
    assert "tab A, more" in body  # the newer text is shown, not lost
    assert StepAnswer.objects.get(step_key="architecture").text == "tab A, more"


def test_a_retried_identical_autosave_is_not_a_conflict(client_in, attempt):
    url = step_url(attempt, "architecture", "draft")
    client_in.post(url, {"base_version": 0, "text": "same"}, htmx=True)
    again = client_in.post(url, {"base_version": 0, "text": "same"}, htmx=True)
    assert again.status_code == 200


def test_a_huge_answer_is_refused_with_a_message_and_the_draft_kept(client_in, attempt):
    url = step_url(attempt, "architecture", "draft")
    client_in.post(url, {"base_version": 0, "text": "my real draft"}, htmx=True)
    huge = client_in.post(url, {"base_version": 1, "text": "x" * 1_000_000}, htmx=True)
    assert huge.status_code == 422
    assert "the limit is 20,000" in huge.content.decode()
    assert StepAnswer.objects.get(step_key="architecture").text == "my real draft"
    submit = client_in.post(
        step_url(attempt, "architecture", "submit"),
        {"base_version": 1, "text": "x" * 1_000_000},
        htmx=True,
    )
    assert submit.status_code == 422
    assert not Submission.objects.exists()


def test_invalid_utf8_is_handled_without_an_error(client_in, attempt):
    body = b"base_version=0&text=caf%C3%A9+%FF%FE+ok"
    response = client_in.generic(
        "POST",
        step_url(attempt, "architecture", "draft"),
        body,
        content_type="application/x-www-form-urlencoded",
        htmx=True,
    )
    assert response.status_code == 200
    text = StepAnswer.objects.get(step_key="architecture").text
    assert text.startswith("café") and text.endswith("ok")


def test_a_malformed_form_gets_a_message_not_an_error(client_in, attempt):
    response = client_in.post(
        step_url(attempt, "architecture", "draft"), {"base_version": "abc", "text": "x"}, htmx=True
    )
    assert response.status_code == 422
    assert "reload the page" in response.content.decode()


def test_double_submit_makes_one_submission(client_in, attempt, django_capture_on_commit_callbacks):
    url = step_url(attempt, "architecture", "submit")
    with django_capture_on_commit_callbacks(execute=False):
        first = client_in.post(url, {"base_version": 0, "text": ARCHITECTURE_ANSWER}, htmx=True)
        second = client_in.post(url, {"base_version": 0, "text": ARCHITECTURE_ANSWER}, htmx=True)
    assert first.status_code == second.status_code == 200
    assert Submission.objects.count() == 1


def test_a_double_clicked_submit_makes_one_submission(
    client_in, attempt, django_capture_on_commit_callbacks
):
    """htmx queues the second click behind the first and sends it with the version the first
    one's answer carried (out of band): the same text, one submission, graded once."""
    url = step_url(attempt, "architecture", "submit")
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        first = client_in.post(url, {"base_version": 0, "text": ARCHITECTURE_ANSWER}, htmx=True)
        version = StepAnswer.objects.get(step_key="architecture").version
        second = client_in.post(
            url, {"base_version": version, "text": ARCHITECTURE_ANSWER}, htmx=True
        )
    assert first.status_code == second.status_code == 200
    assert Submission.objects.count() == 1
    assert len(enqueued) == 1
    assert '<h2 id="feedback-heading" class="h3">Feedback</h2>' in second.content.decode()


def test_a_submit_refused_for_its_size_keeps_the_earlier_feedback_in_view(client_in, attempt):
    """The refusal is told above the feedback on the submission before, which still counts
    (and whose self-check the candidate may be in the middle of)."""
    url = step_url(attempt, "architecture", "submit")
    client_in.post(url, {"base_version": 0, "text": ARCHITECTURE_ANSWER}, htmx=True)
    version = StepAnswer.objects.get(step_key="architecture").version
    response = client_in.post(url, {"base_version": version, "text": "x" * 100_001}, htmx=True)
    assert response.status_code == 422
    body = response.content.decode()
    assert "the limit is 20,000" in body
    assert '<h2 id="feedback-heading" class="h3">Feedback</h2>' in body


def test_empty_submission_is_refused(client_in, attempt):
    response = client_in.post(
        step_url(attempt, "bottlenecks", "submit"), {"base_version": 0, "text": "   "}, htmx=True
    )
    assert response.status_code == 422
    assert "nothing to submit" in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_concurrent_submits_of_one_draft_make_one_submission(content_loaded):
    user = User.objects.create_user("racer", password="racer-Passphrase-1")
    client = HtmxClient()
    client.force_login(user)
    client.post(reverse("attempt_start", args=["chat-api-50qps"]))
    attempt = Attempt.objects.get(user=user)
    url = step_url(attempt, "architecture", "submit")
    client.post(
        step_url(attempt, "architecture", "draft"),
        {"base_version": 0, "text": ARCHITECTURE_ANSWER},
        htmx=True,
    )

    def submit():
        c = HtmxClient()
        c.force_login(user)
        return c.post(url, {"base_version": 1, "text": ARCHITECTURE_ANSWER}, htmx=True)

    # at_once closes each thread's connection: one left open keeps PostgreSQL from dropping
    # the test database at the end of the run.
    statuses = [getattr(r, "status_code", r) for r in at_once(*[submit] * 4)]
    assert all(s in (200, 409) for s in statuses), statuses
    assert Submission.objects.filter(answer__attempt=attempt).count() == 1


def test_submit_saves_first_then_grades_in_the_background(
    client_in, attempt, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client_in.post(
            step_url(attempt, "architecture", "submit"),
            {"base_version": 0, "text": ARCHITECTURE_ANSWER},
            htmx=True,
        )
    assert len(callbacks) == 1  # the task is enqueued only after the answer is committed
    submission = Submission.objects.get()
    assert submission.text == ARCHITECTURE_ANSWER
    assert submission.grade_status == "queued"
    html = response.content.decode()
    assert "Queued for grading" in html and 'hx-trigger="every 1s"' in html

    submission_grade(submission_id=submission.pk)
    feedback = client_in.get(
        reverse("submission_feedback", args=[attempt.pk, submission.pk]), htmx=True
    ).content.decode()
    assert 'hx-trigger="every 1s"' not in feedback  # polling stops when done
    # No model: no score until the candidate rates each point; the matcher only points.
    assert "Not scored yet" in feedback and "Check your answer yourself" in feedback
    assert "may cover this" in feedback
    assert "<mark>" in feedback  # its pointers highlighted inside the candidate's own text
    assert "Reference answer" in feedback
    assert Grade.objects.filter(grader="rubric").exists()
    # Opened on its own, outside the step page that styles it, the panel leads to the step.
    direct = client_in.get(reverse("submission_feedback", args=[attempt.pk, submission.pk]))
    assert direct.status_code == 302
    assert direct["Location"] == step_url(attempt, "architecture") + "#feedback"
    assert "HX-Request" in direct["Vary"]
    step = client_in.get(direct["Location"]).content.decode()
    assert 'id="feedback"' in step and "Check your answer yourself" in step


def test_grading_twice_does_not_duplicate_grades(
    attempt, client_in, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(
            step_url(attempt, "architecture", "submit"),
            {"base_version": 0, "text": ARCHITECTURE_ANSWER},
            htmx=True,
        )
    submission = Submission.objects.get()
    submission_grade(submission_id=submission.pk)
    Submission.objects.filter(pk=submission.pk).update(grade_status="grading")
    submission_grade(submission_id=submission.pk)  # a crashed worker's task, run again
    assert Grade.objects.filter(submission=submission, grader="rubric").count() == 1


def test_try_again_keeps_every_version_and_the_best_counts(
    client_in, attempt, django_capture_on_commit_callbacks
):
    url = step_url(attempt, "architecture", "submit")
    with django_capture_on_commit_callbacks(execute=True):
        client_in.post(url, {"base_version": 0, "text": ARCHITECTURE_ANSWER}, htmx=True)
        client_in.post(
            url, {"base_version": 1, "text": "A weaker second try about cats."}, htmx=True
        )
    assert Submission.objects.count() == 2
    for s in Submission.objects.all():
        submission_grade(submission_id=s.pk)
    first, second = Submission.objects.order_by("number")
    _self_check(first, "partly")
    _self_check(second, "not")
    card = client_in.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
    assert "50%" in card and "Self-checked" in card


def test_clarify_card_is_compared_with_the_brief(
    client_in, attempt, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(
            step_url(attempt, "clarify", "submit"),
            {
                "base_version": 0,
                "text": "Shared system prompt across users; cost matters.",
                "model": "Qwen2.5-7B-Instruct",
                "peak_qps": "20",
                "qps_kind": "mean",
                "ttft_p99_ms": "300",
                "tpot_p99_ms": "50",
            },
            htmx=True,
        )
    submission = Submission.objects.get()
    submission_grade(submission_id=submission.pk)
    review = Grade.objects.get(grader="slo").slo_review
    assert "p99 TTFT" in review["pinned"] and "Model" in review["pinned"]
    assert any(d["label"] == "Peak load" for d in review["differs"])
    assert "Output length" in review["missed"]

    # The card's score counts only blended with the answer's: until the candidate rates the
    # answer, the scorecard says so beside the card's row.
    def card_row():
        page = client_in.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
        graders = page.split('id="graders-h"')[1].split("</table>")[0]
        return next(row for row in graders.split("<tr>") if "SLO card check" in row)

    assert escape(WAITING) in card_row()
    submission.refresh_from_db()
    _self_check(submission, "partly")
    assert escape(WAITING) not in card_row()


def test_clarify_numbers_become_worksheet_names(client_in, attempt):
    client_in.post(
        step_url(attempt, "clarify", "draft"),
        {"base_version": 0, "peak_qps": "50", "qps_kind": "peak", "text": ""},
        htmx=True,
    )
    page = client_in.get(step_url(attempt, "estimate")).content.decode()
    assert "<code>qps_peak</code>" in page and "50 QPS" in page


@pytest.mark.parametrize(
    ("expression", "verdict"),
    [
        ("W / (eta * bw)", "correct"),
        ("15.2 GB / (0.7 * 1008 GB/s) in ms", "correct"),
        ("15.2 GiB / (0.7 * 1008 GB/s)", None),  # GB vs GiB: a slip with a hint
        ("15.2 GB", "wrong_unit"),
    ],
)
def test_quantity_check_gives_the_checker_verdict(client_in, attempt, expression, verdict):
    tpot_id = next(
        q.id
        for q in attempt.revision.question_spec.step("estimate").quantities
        if "tpot" in q.id.lower()
    )
    response = client_in.post(
        reverse("attempt_check", args=[attempt.pk]),
        {"quantity": tpot_id, "expression": expression, "worksheet": ""},
        htmx=True,
    )
    assert response.status_code == 200
    html = response.content.decode()
    answer = StepAnswer.objects.get(step_key="estimate")
    stored = answer.fields["checks"][tpot_id]
    if verdict:
        assert stored["verdict"] == verdict
    else:
        assert stored["verdict"] in ("known_mistake", "close", "wrong")
        assert "GiB" in stored["hint"] or "1024" in stored["hint"]
    assert stored["answer"] == expression
    assert "verdict-" in html


def test_quantity_check_uses_worksheet_names(client_in, attempt):
    q = attempt.revision.question_spec.step("estimate").quantities[0]
    response = client_in.post(
        reverse("attempt_check", args=[attempt.pk]),
        {
            "quantity": q.id,
            "expression": "mine",
            "worksheet": f"mine = {q.formula}",
        },
        htmx=True,
    )
    assert response.status_code == 200
    assert (
        StepAnswer.objects.get(step_key="estimate").fields["checks"][q.id]["verdict"] == "correct"
    )


def test_worksheet_errors_show_inline_with_position(client_in, attempt):
    response = client_in.post(
        reverse("attempt_worksheet", args=[attempt.pk]),
        {"worksheet": "a = 15 GB + 3 ms"},
        htmx=True,
    )
    html = response.content.decode()
    assert "ws-error" in html
    # The message says the line once and the column once.
    assert "Line 1: Cannot add bytes and time (at column 11)." in html


def test_a_worksheet_error_quotes_a_long_unknown_name_shortened(client_in, attempt):
    response = client_in.post(
        reverse("attempt_worksheet", args=[attempt.pk]), {"worksheet": "x" * 400}, htmx=True
    )
    message = re.search(r'class="ws-message">([^<]+)<', response.content.decode())[1]
    assert message == f"Line 1: Unknown name &#x27;{'x' * 39}…&#x27; at column 1."


def test_worksheet_lines_follow_the_values_they_read(client_in, attempt):
    """An unchanged line whose input changed above it is shown with its new value."""
    url = reverse("attempt_worksheet", args=[attempt.pk])
    first = client_in.post(url, {"worksheet": "a = 2 GB\nb = a * 2"}, htmx=True)
    again = client_in.post(url, {"worksheet": "a = 3 GB\nb = a * 2"}, htmx=True)
    assert "<strong>4 GB</strong>" in first.content.decode()
    html = again.content.decode()
    assert "<strong>6 GB</strong>" in html and "<strong>4 GB</strong>" not in html
    assert html.count('<li class="ws-line') == 2


def test_worksheet_evaluation_is_rate_limited_per_user(
    client_in, attempt, settings, one_rate_window
):
    settings.NAPKIN_RATE_PER_MINUTE = 2
    url = reverse("attempt_worksheet", args=[attempt.pk])
    responses = [client_in.post(url, {"worksheet": "a = 2 GB"}, htmx=True) for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert "faster than 2 worksheet evaluations a minute" in responses[2].content.decode()


def test_worksheet_says_so_when_the_question_givens_do_not_evaluate(client_in, candidate, attempt):
    """An authoring slip in a question's givens is a clear message, on the endpoint and on the
    page, not a server error; the candidate's worksheet text stays on the page."""
    # Content checks would refuse this file, so publish the revision past them.
    published = attempt.revision
    spec = copy.deepcopy(published.spec)
    spec["steps"]["estimate"]["givens"].append({"name": "broken", "value": "1 GB + 1 s"})
    broken = QuestionRevision.objects.create(
        question=published.question,
        number=published.number + 1,
        content_hash="broken-givens",
        source_text="",
        title=published.title,
        summary=published.summary,
        difficulty=published.difficulty,
        spec=spec,
        rendered=published.rendered,
    )
    attempt = Attempt.objects.create(user=candidate, revision=broken)
    response = client_in.post(
        reverse("attempt_worksheet", args=[attempt.pk]), {"worksheet": "x = 1 GB"}, htmx=True
    )
    assert response.status_code == 422
    assert "givens do not evaluate" in response.content.decode()
    quantity = attempt.revision.question_spec.step("estimate").quantities[0].id
    check = client_in.post(
        reverse("attempt_check", args=[attempt.pk]),
        {"quantity": quantity, "expression": "1", "worksheet": "x = 1 GB"},
        htmx=True,
    )
    assert check.status_code == 422
    assert "givens do not evaluate" in check.content.decode()
    client_in.post(
        step_url(attempt, "estimate", "draft"),
        {"base_version": "0", "worksheet": "x = 1 GB", "text": ""},
    )
    page = client_in.get(step_url(attempt, "estimate"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "givens do not evaluate" in html and "x = 1 GB" in html


def test_follow_ups_open_one_at_a_time(client_in, attempt, django_capture_on_commit_callbacks):
    follow_ups = [fu.id for fu in attempt.revision.question_spec.step("tradeoffs").follow_ups]
    page = client_in.get(step_url(attempt, "tradeoffs")).content.decode()
    assert f"follow-ups/{follow_ups[0]}/" in page
    assert f"follow-ups/{follow_ups[1]}/" not in page
    url = f"/attempts/{attempt.pk}/steps/tradeoffs/follow-ups/{follow_ups[0]}/submit/"
    with django_capture_on_commit_callbacks(execute=False):
        response = client_in.post(
            url, {"base_version": 0, "text": "Replicas scale out."}, htmx=True
        )
    assert response.status_code == 200
    page = client_in.get(step_url(attempt, "tradeoffs")).content.decode()
    assert f"follow-ups/{follow_ups[1]}/" in page


def test_grading_is_rate_limited_with_a_message(
    client_in, attempt, settings, django_capture_on_commit_callbacks, one_rate_window
):
    settings.GRADING_RATE_PER_MINUTE = 2
    url = step_url(attempt, "bottlenecks", "submit")
    statuses = []
    with django_capture_on_commit_callbacks(execute=False):
        for version in range(3):
            statuses.append(
                client_in.post(
                    url, {"base_version": version, "text": f"answer {version}"}, htmx=True
                )
            )
    assert [r.status_code for r in statuses] == [200, 200, 429]
    assert "a minute" in statuses[-1].content.decode()
    # The refused submission's text is still the saved draft.
    assert StepAnswer.objects.get(step_key="bottlenecks").text == "answer 2"


def test_daily_quota_with_a_message(
    client_in, attempt, settings, django_capture_on_commit_callbacks
):
    settings.GRADING_DAILY_QUOTA = 1
    url = step_url(attempt, "bottlenecks", "submit")
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(url, {"base_version": 0, "text": "one"}, htmx=True)
        refused = client_in.post(url, {"base_version": 1, "text": "two"}, htmx=True)
    assert refused.status_code == 429
    assert "used today&#x27;s 1 gradings" in refused.content.decode()


def test_another_users_attempt_is_invisible_everywhere(
    attempt, client_in, db, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(
            step_url(attempt, "architecture", "submit"),
            {"base_version": 0, "text": ARCHITECTURE_ANSWER},
            htmx=True,
        )
    submission = Submission.objects.get()
    intruder = User.objects.create_user("eve", password="eve-Passphrase-1")
    other = HtmxClient()
    other.force_login(intruder)
    fu = attempt.revision.question_spec.step("tradeoffs").follow_ups[0].id
    gets = [
        f"/attempts/{attempt.pk}/",
        step_url(attempt, "architecture"),
        f"/attempts/{attempt.pk}/steps/tradeoffs/follow-ups/{fu}/",
        reverse("attempt_scorecard", args=[attempt.pk]),
        reverse("submission_feedback", args=[attempt.pk, submission.pk]),
    ]
    posts = [
        step_url(attempt, "architecture", "draft"),
        step_url(attempt, "architecture", "submit"),
        reverse("attempt_check", args=[attempt.pk]),
        reverse("attempt_worksheet", args=[attempt.pk]),
        reverse("attempt_finish", args=[attempt.pk]),
    ]
    for url in gets:
        assert other.get(url, htmx=True).status_code == 404, url
    for url in posts:
        assert (
            other.post(url, {"base_version": 1, "text": "hijack"}, htmx=True).status_code == 404
        ), url
    assert StepAnswer.objects.get(step_key="architecture").text == ARCHITECTURE_ANSWER
    assert "chat completion" not in other.get(reverse("history")).content.decode().lower()


def test_owned_by_finds_only_the_users_own_attempts_and_submissions(
    attempt, candidate, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        flow.step_submit(
            answer=flow.answer_open(attempt=attempt, step_key="architecture"),
            text=ARCHITECTURE_ANSWER,
            fields={},
            base_version=0,
        )
    intruder = User.objects.create_user("eve", password="eve-Passphrase-1")
    assert list(Attempt.objects.owned_by(candidate)) == [attempt]
    assert Submission.objects.owned_by(candidate).count() == 1
    for nobody in (intruder, AnonymousUser()):
        assert not Attempt.objects.owned_by(nobody).exists()
        assert not Submission.objects.owned_by(nobody).exists()


def test_an_attempt_is_finished_once_and_the_first_time_stands(client_in, attempt):
    # Something submitted, and the steps left unsubmitted confirmed: Finish finishes.
    answer = StepAnswer.objects.create(attempt=attempt, step_key="architecture", text="x")
    Submission.objects.create(answer=answer, number=1, text="x", draft_version=1)
    client_in.post(reverse("attempt_finish", args=[attempt.pk]), {"confirm": "yes"})
    attempt.refresh_from_db()
    first = attempt.finished_at
    assert attempt.status == Attempt.Status.FINISHED and first is not None
    assert not flow.attempt_finish(attempt_id=attempt.pk)  # a mock's end racing "Finish"
    client_in.post(reverse("attempt_finish", args=[attempt.pk]))
    attempt.refresh_from_db()
    assert attempt.finished_at == first


def test_scorecard_and_history_show_scores_and_missed_points(
    client_in, attempt, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(
            step_url(attempt, "architecture", "submit"),
            {"base_version": 0, "text": ARCHITECTURE_ANSWER},
            htmx=True,
        )
    submission_grade(submission_id=Submission.objects.get().pk)
    client_in.post(reverse("attempt_finish", args=[attempt.pk]))
    card = client_in.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
    for needle in (
        "Per step",
        "Strongest points",
        "Weakest points",
        "Who graded what",
        "Not scored yet — rate your answer",
        "min",
    ):
        assert needle in card, needle
    # The time is the active time, said as such: a mock's report times steps from their opening.
    assert '<th scope="col">Time spent</th>' in card
    assert "in view with an edit in the minute before" in card
    assert "offline rubric grader" not in card
    # Nothing is scored yet, so nothing can be called missed.
    weakest = card.split('id="weak-h"')[1].split("</section>")[0]
    assert "None yet." in weakest and "Nothing missed" not in weakest
    _self_check(Submission.objects.get(), "not")
    card = client_in.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
    weakest = card.split('id="weak-h"')[1].split("</section>")[0]
    assert "(miss)" in weakest and "None yet." not in weakest
    history = client_in.get(reverse("history")).content.decode()
    assert "Trends per step" in history and "Most-missed rubric points" in history


def test_page_queries_stay_constant_as_attempts_grow(
    client_in,
    candidate,
    content_loaded,
    django_assert_max_num_queries,
    django_capture_on_commit_callbacks,
):
    def make_attempt():
        client_in.post(reverse("attempt_start", args=["chat-api-50qps"]))
        attempt = Attempt.objects.filter(user=candidate).first()
        with django_capture_on_commit_callbacks(execute=False):
            for version in range(3):
                client_in.post(
                    step_url(attempt, "architecture", "submit"),
                    {"base_version": version, "text": f"{ARCHITECTURE_ANSWER} {version}"},
                    htmx=True,
                )
        for s in Submission.objects.filter(answer__attempt=attempt):
            submission_grade(submission_id=s.pk)
        return attempt

    for _ in range(12):
        attempt = make_attempt()
    cache.clear()
    with django_assert_max_num_queries(12):
        client_in.get(reverse("history"))
    with django_assert_max_num_queries(25):
        client_in.get(reverse("attempt_scorecard", args=[attempt.pk]))
    with django_assert_max_num_queries(25):
        client_in.get(step_url(attempt, "architecture"))


def test_a_model_down_for_longer_than_the_backoff_is_still_retried(
    client_in, attempt, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from practice import services as flow

    settings.GRADING_RETRY_BACKOFF_S = [1.0, 2.0]
    settings.GRADING_RETRY_TAIL = 3
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": "http://127.0.0.1:9/v1"}  # dead
    delays = []
    monkeypatch.setattr(flow, "grading_enqueue", lambda pk, delay_s=0: delays.append(delay_s))
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(
            step_url(attempt, "architecture", "submit"),
            {"base_version": 0, "text": ARCHITECTURE_ANSWER},
            htmx=True,
        )
    submission = Submission.objects.get()
    for _ in range(7):
        submission_grade(submission_id=submission.pk)
    assert delays == [1.0, 2.0, 2.0, 2.0, 2.0]  # backoff, then the longest interval, then stop
    submission.refresh_from_db()
    assert submission.grade_status == "offline"
    assert Grade.objects.filter(submission=submission).count() == 1  # the offline grade, once


def test_the_question_page_lists_only_my_attempts(client_in, attempt, db):
    html = client_in.get("/questions/chat-api-50qps/").content.decode()
    assert f'href="/attempts/{attempt.pk}/"' in html and "(resume)" in html
    other = Client()
    other.force_login(User.objects.create_user("nosy", password="nosy-Passphrase-1"))
    assert (
        f'href="/attempts/{attempt.pk}/"'
        not in other.get("/questions/chat-api-50qps/").content.decode()
    )


def _self_check(submission: Submission, rating: str) -> None:
    """The candidate rates every rubric point of the submission `rating`."""
    from practice.self_check import self_check_save
    from practice.services import step_spec

    answer = submission.answer
    spec = step_spec(answer.attempt.revision, answer.step_key, answer.follow_up_id)
    flagged = submission.grades.get(grader="rubric").misconceptions
    self_check_save(
        submission=submission,
        ratings={p.id: rating for p in spec.rubric},
        wrong_ideas={m["id"]: "dismissed" for m in flagged},
        base_version=0,
    )


def _graded(attempt, step_key, scores, follow_up_id=""):
    """Submissions of one part, self-checked by the candidate to these scores."""
    answer, _ = StepAnswer.objects.get_or_create(
        attempt=attempt, step_key=step_key, follow_up_id=follow_up_id
    )
    for number, score in enumerate(scores, start=1):
        submission = Submission.objects.create(
            answer=answer,
            number=number,
            text=f"answer {number}",
            draft_version=number,
            grade_status=Submission.GradeStatus.DONE,
        )
        Grade.objects.create(submission=submission, grader="self", score=score, points=[])


def test_scorecard_and_history_agree_after_retries_of_steps_and_follow_ups(client_in, attempt):
    fu = attempt.revision.question_spec.step("tradeoffs").follow_ups[0].id
    _graded(attempt, "architecture", [0.8, 0.6])  # a worse retry: the best counts
    _graded(attempt, "tradeoffs", [0.5, 1.0])  # a better retry of the main answer
    _graded(attempt, "tradeoffs", [0.2, 0.4], follow_up_id=fu)  # and of a follow-up

    card = client_in.get(reverse("attempt_scorecard", args=[attempt.pk])).context
    history = client_in.get(reverse("history")).context
    on_card = {row["key"]: row["score"] for row in card["rows"]}
    (in_history,) = history["rows"]
    assert in_history["steps"] == [on_card[key] for key in on_card]
    assert in_history["overall"] == card["overall"]
    # Each part counts its best submission; a step is the mean of its parts.
    assert on_card["architecture"] == 0.8
    assert on_card["tradeoffs"] == 0.7  # (1.0 + 0.4) / 2
    assert card["overall"] == 0.75


COMPLETE_WORKSHEET = "\n".join(
    [
        "tpot = W / (eta * bw) in ms",
        "kv = 2 * layers * kv_heads * head_dim * kv_bytes in KiB",
        "seqs = floor((vram * mem_util - W_awq - reserve) / (kv * ctx))",
        "r = T_out / out_len",
        "n = ceil(qps_peak / (rho * r))",
        "gpus = n * TP",
    ]
)
COMPLETE_BOXES = {
    "expr_tpot_floor": "tpot",
    "expr_kv_per_token": "kv",
    "expr_max_seqs": "seqs",
    "expr_r_inst": "r",
    "expr_n_inst": "n",
    "expr_n_gpu": "gpus",
}


def test_a_complete_worksheet_is_checked_without_check_pressed_or_notes(
    client_in, attempt, django_capture_on_commit_callbacks
):
    from practice.scoring import submission_score

    with django_capture_on_commit_callbacks(execute=False):
        response = client_in.post(
            step_url(attempt, "estimate", "submit"),
            {"base_version": 0, "text": "", "worksheet": COMPLETE_WORKSHEET, **COMPLETE_BOXES},
            htmx=True,
        )
    assert response.status_code == 200
    submission = Submission.objects.get()
    submission_grade(submission_id=submission.pk)
    grades = list(submission.grades.all())
    checker = next(g for g in grades if g.grader == "checker")
    assert [p["verdict"] for p in checker.points] == ["correct"] * 6
    rubric = next(g for g in grades if g.grader == "rubric")
    # The matcher may point at the worksheet lines the candidate typed, and only at those:
    # what the app worked out from them ("gives 21.54 ms", the quantities' labels) is context.
    quoted = [p["evidence"] for p in rubric.points if p["evidence"]]
    typed = COMPLETE_WORKSHEET.splitlines()
    assert all(any(q.strip() in line or line.strip() in q for line in typed) for q in quoted)
    assert not any("gives" in q or "Worksheet" in q for q in quoted), quoted
    # The checked numbers alone are no score: the candidate rates the rubric points first.
    assert submission_score("estimate", grades) is None


def test_a_quantity_typed_but_not_checked_is_checked_at_submit(
    client_in, attempt, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(
            step_url(attempt, "estimate", "submit"),
            {"base_version": 0, "text": "", "worksheet": "", "expr_r_inst": "T_out / out_len"},
            htmx=True,
        )
    submission = Submission.objects.get()
    assert submission.fields["answers"] == {"r_inst": "T_out / out_len"}
    submission_grade(submission_id=submission.pk)
    points = {p["id"]: p for p in Grade.objects.get(grader="checker").points}
    assert points["r_inst"]["verdict"] == "correct"
    assert points["tpot_floor"]["verdict"] == "unchecked"


def test_a_check_without_javascript_stores_the_verdict_and_returns_to_the_step(client_in, attempt):
    client_in.post(
        step_url(attempt, "estimate", "draft"),
        {"base_version": 0, "text": "", "worksheet": "r = T_out / out_len"},
        htmx=True,
    )
    response = client_in.post(
        reverse("attempt_check", args=[attempt.pk]), {"quantity": "r_inst", "expr_r_inst": "r"}
    )
    assert response.status_code == 302
    assert response["Location"].endswith("/steps/estimate/#check-r_inst")
    answer = StepAnswer.objects.get(step_key="estimate")
    assert answer.fields["checks"]["r_inst"]["verdict"] == "correct"  # read the saved worksheet
    assert not Submission.objects.exists()
    page = client_in.get(step_url(attempt, "estimate")).content.decode()
    assert "verdict-correct" in page


def test_the_givens_panel_lists_each_name_once_and_says_which_card_figure_is_not_used(
    client_in, attempt
):
    client_in.post(
        step_url(attempt, "clarify", "draft"),
        {
            "base_version": 0,
            "peak_qps": "60",
            "qps_kind": "peak",
            "output_tokens": "256",
            "e2e_p99_ms": "9000",
            "text": "",
        },
        htmx=True,
    )
    page = client_in.get(step_url(attempt, "estimate")).content.decode()
    panel = page[page.index('class="card givens-card"') : page.index("</aside>")]
    for name in ("qps_peak", "out_len", "e2e_p99"):
        assert panel.count(f"<dt><code>{name}</code></dt>") == 1, name
    assert "<dt><code>qps_peak</code></dt><dd><code>50 QPS</code>" in panel
    assert "e2e_p99</code></dt><dd><code>9000 ms</code>" in panel  # the card's own name
    # Each difference is an item of its own: several ran together in one paragraph.
    assert '<ul class="help card-differs"><li>Your SLO card has <code>qps_peak</code> = ' in panel
    assert "Your SLO card has <code>qps_peak</code> = <code>60 QPS</code>" in panel
    assert "out_len</code> = " not in panel  # the same figure as the brief: nothing to say
    # The worksheet computes with what the panel shows.
    lines = client_in.post(
        reverse("attempt_worksheet", args=[attempt.pk]),
        {"worksheet": "q = qps_peak\ne = e2e_p99"},
        htmx=True,
    ).content.decode()
    assert "<strong>50 req/s</strong>" in lines and "<strong>9 s</strong>" in lines


def test_worksheet_lines_show_how_the_engine_read_a_figure(client_in, attempt):
    lines = client_in.post(
        reverse("attempt_worksheet", args=[attempt.pk]), {"worksheet": "p = 7B"}, htmx=True
    ).content.decode()
    assert "7B reads as 7 bytes" in lines


def test_the_check_buttons_are_named_after_their_quantity(client_in, attempt):
    page = client_in.get(step_url(attempt, "estimate")).content.decode()
    assert 'Check<span class="visually-hidden"> Decode TPOT floor with BF16 weights</span>' in page
    assert 'Check<span class="visually-hidden"> GPUs in the fleet</span>' in page
    # The feedback is not a live region (read whole, it repeated the reference answer): its
    # status is said in a region of its own (tests/practice/test_a11y_announcements_browser.py).
    assert '<div id="submit-result">' in page
    assert '<p id="feedback-said" class="visually-hidden" role="status"></p>' in page


def test_a_submit_answers_with_the_progress_bar_out_of_band(
    client_in, attempt, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        html = client_in.post(
            step_url(attempt, "architecture", "submit"),
            {"base_version": 0, "text": ARCHITECTURE_ANSWER},
            htmx=True,
        ).content.decode()
    assert 'id="progress" aria-label="Steps of this attempt" hx-swap-oob="true"' in html
    assert "1 of 5 steps submitted" in html
    assert html.count("✓") == 1
    # Beside the button, the status says the step is submitted and where its feedback is
    # (on the load test's step it is far below, after the simulator), not "Draft saved".
    status = html.split('id="save-status"')[1].split("</div>")[0]
    assert re.search(r"Submitted at \d\d:\d\d:\d\d UTC\.", status)
    assert 'href="#feedback"' in status and "Draft saved" not in status


def test_attempts_are_numbered_per_user_and_question(client_in, candidate, content_loaded):
    other = User.objects.create_user("other", password="other-Passphrase-1")
    revision = QuestionRevision.objects.filter(question__slug="chat-api-50qps").latest("pk")
    for _ in range(3):  # someone else's attempts take the low ids
        Attempt.objects.create(user=other, revision=revision)
    for _ in range(2):  # each holds work, or Start would carry on with the blank one
        client_in.post(reverse("attempt_start", args=["chat-api-50qps"]))
        latest = Attempt.objects.filter(user=candidate).latest("pk")
        StepAnswer.objects.create(attempt=latest, step_key="clarify", text="Peak is 3x mean.")
    first, second = Attempt.objects.filter(user=candidate).order_by("pk")
    assert first.pk > 3
    assert "Attempt 1</a>" in client_in.get(step_url(first, "clarify")).content.decode()
    assert "Attempt 2</a>" in client_in.get(step_url(second, "clarify")).content.decode()
    card = client_in.get(reverse("attempt_scorecard", args=[second.pk])).content.decode()
    assert "Attempt 2 ·" in card
    history = client_in.get(reverse("history")).content.decode()
    assert ", attempt 1</a>" in history and ", attempt 2</a>" in history


def test_the_footer_links_the_public_grader_page(client, db):
    page = client.get("/").content.decode()
    assert f'href="{reverse("grader_status")}"' in page


def test_wrong_numbers_earn_nothing_from_the_quantity_labels(
    client_in, attempt, django_capture_on_commit_callbacks
):
    boxes = {name: "1" for name in COMPLETE_BOXES}
    estimate_graded(client_in, attempt, boxes, django_capture_on_commit_callbacks)
    rubric = Grade.objects.get(grader="rubric")
    assert all(p["verdict"] == "miss" for p in rubric.points), rubric.points


def test_a_poll_that_would_show_the_same_status_swaps_nothing(
    client_in, attempt, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        client_in.post(
            step_url(attempt, "architecture", "submit"),
            {"base_version": 0, "text": ARCHITECTURE_ANSWER},
            htmx=True,
        )
    submission = Submission.objects.get()
    url = reverse("submission_feedback", args=[attempt.pk, submission.pk]) + "?shown=queued"
    # The feedback sits in a live region: repeating "Queued" each second would be read out.
    assert client_in.get(url, htmx=True).status_code == 204
    submission_grade(submission_id=submission.pk)
    graded = client_in.get(url, htmx=True)
    assert graded.status_code == 200 and "Not scored yet" in graded.content.decode()


def test_a_count_checked_without_a_unit_reads_without_a_stray_space(client_in, attempt):
    """A fleet size has no unit: the result says "(you have 9)", not "(you have 9 )"."""
    n_inst = next(
        q.id for q in attempt.revision.question_spec.step("estimate").quantities if q.id == "n_inst"
    )
    response = client_in.post(
        reverse("attempt_check", args=[attempt.pk]),
        {"quantity": n_inst, "expression": "9", "worksheet": ""},
        htmx=True,
    )
    html = response.content.decode()
    assert "(you have 9)" in html
    assert " )" not in html


def test_the_step_pages_attempt_crumb_leads_to_this_attempts_scorecard(client_in, attempt):
    """The breadcrumb "Attempt 1" named this attempt and led to the whole history."""
    page = client_in.get(step_url(attempt, "clarify")).content.decode()
    crumbs = page.split('aria-label="Breadcrumb"', 1)[1].split("</ol>", 1)[0]
    scorecard = reverse("attempt_scorecard", args=[attempt.pk])
    assert f'href="{scorecard}"' in crumbs and "Attempt 1" in crumbs
    assert client_in.get(scorecard).status_code == 200  # an attempt just begun has one too


def test_a_step_left_untouched_says_under_a_tenth_of_a_minute_not_zero(client_in, attempt):
    """A step open under six seconds read "0.0 min", as if nothing had been measured."""
    card = client_in.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
    table = card.split('class="data-table scorecard-table"', 1)[1].split("</table>", 1)[0]
    assert "0.0 min" not in table
    assert "<td>under 0.1 min</td>" in table
