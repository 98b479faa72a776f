"""The review queue end to end without a browser: what flags a submission, the candidate's
dispute and its daily limit, blind labelling, the instructor's verdict winning, and the audit
trail stored with every grade."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.template.loader import render_to_string
from django.urls import reverse

from accounts.instructors import instructor_grant
from grading import PROMPT_VERSION
from grading.fake_server import (
    FakeChatServer,
    ScriptedReply,
    error_reply,
    grade_content,
    response_ids,
)
from practice import services as flow
from practice.feedback import feedback_context
from practice.models import Grade, Submission
from practice.scoring import primary_grade, submission_score
from questions.models import Question
from review.models import CalibrationLabel, GradeDispute
from review.services import review_queue

from .conftest import make_submission

ANSWER = (
    "Clients go through an API gateway that handles auth and rate limits, then a router in "
    "front of ten vLLM replicas. We autoscale on the summed queue depth, "
    "vllm:num_requests_waiting, rather than on GPU utilisation."
)
REAL_QUOTE = "an API gateway that handles auth and rate limits"
MADE_UP_QUOTE = "the router sends each prefix to the replica that cached it"


@pytest.fixture
def model_server(settings):
    with FakeChatServer() as server:
        settings.GRADER = {
            **settings.GRADER,
            "GRADER_BASE_URL": server.base_url,
            "GRADER_MAX_RETRIES": "0",
            "GRADER_TIMEOUT_S": "2",
        }
        yield server


def submit(user: User, text: str = ANSWER, step_key: str = "architecture") -> Submission:
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    answer = flow.answer_open(attempt=attempt, step_key=step_key)
    return flow.step_submit(
        answer=answer, text=text, fields={}, base_version=answer.version
    ).submission


def quoting_model(request: dict) -> ScriptedReply:
    """Hits arch-gateway with a real quote and arch-prefix-router with an invented one."""
    verdicts = []
    for point_id in response_ids(request):
        if point_id == "arch-gateway":
            verdicts.append({"id": point_id, "evidence": REAL_QUOTE, "verdict": "hit"})
        elif point_id == "arch-prefix-router":
            verdicts.append({"id": point_id, "evidence": MADE_UP_QUOTE, "verdict": "hit"})
        else:
            verdicts.append({"id": point_id, "evidence": "", "verdict": "miss"})
    for v in verdicts:
        v["comment"] = "noted"
    return ScriptedReply(content=grade_content(verdicts))


def test_every_grade_keeps_its_audit_trail(content_loaded, model_server, candidate):
    model_server.responder = quoting_model
    submission = submit(candidate)
    flow.submission_grade(submission_id=submission.pk)

    llm = Grade.objects.get(submission=submission, grader="llm")
    assert llm.model and llm.prompt_version.startswith(f"{PROMPT_VERSION}-")
    assert llm.raw_response == quoting_model(model_server.requests[-1]).content
    points = {p["id"]: p for p in llm.points}
    assert points["arch-gateway"]["quote"] == REAL_QUOTE
    assert points["arch-gateway"]["quote_found"] is True
    # The invented quote was refused (a miss), and the audit shows what the model claimed.
    assert points["arch-prefix-router"]["verdict"] == "miss"
    assert points["arch-prefix-router"]["quote"] == MADE_UP_QUOTE
    assert points["arch-prefix-router"]["quote_found"] is False
    assert points["arch-observability"]["quote_found"] is None

    rubric = Grade.objects.get(submission=submission, grader="rubric")
    assert re.match(r"rubric-v\d+-", rubric.prompt_version) and rubric.raw_response == ""
    assert all(p["quote_found"] is True for p in rubric.points if p["evidence"])


def test_an_unusable_model_reply_puts_the_submission_in_the_queue(
    content_loaded, model_server, candidate
):
    model_server.responder = lambda request: ScriptedReply(content='{"verdicts": "all good"}')
    submission = flow.submission_grade(submission_id=submit(candidate).pk)
    assert submission.grade_status == Submission.GradeStatus.OFFLINE
    assert submission.review_reason.startswith("the model's reply could not be used")
    rubric = Grade.objects.get(submission=submission, grader="rubric")
    assert rubric.raw_response == '{"verdicts": "all good"}'
    [entry] = review_queue(question=Question.objects.get(slug="chat-api-50qps"))
    assert entry.submission == submission
    assert entry.reasons == ["the model's reply could not be used"]

    # The retry finds the model down: the flag and the unusable reply both stay.
    model_server.responder = lambda request: error_reply(503)
    submission = flow.submission_grade(submission_id=submission.pk)
    assert submission.grade_status == Submission.GradeStatus.OFFLINE
    assert submission.review_reason.startswith("the model's reply could not be used")
    rubric = Grade.objects.get(submission=submission, grader="rubric")
    assert rubric.raw_response == '{"verdicts": "all good"}'
    assert len(review_queue(question=Question.objects.get(slug="chat-api-50qps"))) == 1


def test_a_model_whose_every_quote_is_invented_is_queued_for_that_reason(
    content_loaded, model_server, candidate
):
    # Both graders score 0 here: the queue must not say they disagree by more than 0.4.
    def inventing_model(request: dict) -> ScriptedReply:
        verdicts = [
            {"id": i, "evidence": MADE_UP_QUOTE, "verdict": "hit", "comment": "noted"}
            for i in response_ids(request)
        ]
        return ScriptedReply(content=grade_content(verdicts))

    model_server.responder = inventing_model
    submission = flow.submission_grade(
        submission_id=submit(candidate, text="It should be fast and stay up.").pk
    )
    assert "none of its quotes is in the answer" in submission.review_reason
    [entry] = review_queue(question=Question.objects.get(slug="chat-api-50qps"))
    assert entry.reasons == ["none of the model's quotes is in the answer"]


def test_a_model_server_that_is_down_flags_nothing(content_loaded, settings, candidate):
    settings.GRADER = {**settings.GRADER, "GRADER_BASE_URL": "http://127.0.0.1:9/v1"}
    submission = flow.submission_grade(submission_id=submit(candidate).pk)
    assert submission.grade_status == Submission.GradeStatus.OFFLINE
    assert submission.review_reason == ""


def dispute(client, submission, reason):
    return client.post(reverse("review:dispute", args=[submission.pk]), {"reason": reason})


def test_a_dispute_reaches_the_queue(content_loaded, client, candidate, instructor):
    submission = make_submission(user=candidate, grades={"rubric": (0.2, {"arch-gateway": "miss"})})
    client.force_login(candidate)
    response = dispute(client, submission, "My second sentence describes the gateway clearly.")
    assert response.status_code == 302
    assert response.url.endswith("/steps/architecture/#feedback")

    [entry] = review_queue(question=Question.objects.get(slug="chat-api-50qps"))
    assert entry.submission == submission and entry.reasons == ["disputed by the candidate"]
    client.force_login(instructor)
    page = client.get(reverse("review:queue", args=["chat-api-50qps"])).content.decode()
    assert "My second sentence describes the gateway clearly." in page
    assert reverse("review:submission", args=[submission.pk]) in page

    # The candidate's feedback panel says the dispute was sent, and offers no second one.
    context = feedback_context(
        attempt=submission.answer.attempt, answer=submission.answer, submission=submission
    )
    [notice] = context["feedback_fragments"]
    assert notice.context["dispute"].reason.startswith("My second sentence")
    assert notice.context["can_dispute"] is False


def test_disputes_are_limited_per_day(content_loaded, client, candidate, settings):
    settings.GRADE_DISPUTES_PER_DAY = 2
    client.force_login(candidate)
    subs = [
        make_submission(user=candidate, grades={"rubric": (0.2, {"arch-gateway": "miss"})})
        for _ in range(3)
    ]
    assert dispute(client, subs[0], "The gateway point is in my first line.").status_code == 302
    assert dispute(client, subs[1], "The gateway point is in my first line.").status_code == 302
    refused = dispute(client, subs[2], "A third reason that must not be lost.")
    assert refused.status_code == 429
    page = refused.content.decode()
    assert "2 grade disputes" in page
    assert "A third reason that must not be lost." in page  # what they wrote comes back
    assert GradeDispute.objects.count() == 2
    assert len(review_queue(question=Question.objects.get(slug="chat-api-50qps"))) == 2


def notices(submission):
    context = feedback_context(
        attempt=submission.answer.attempt, answer=submission.answer, submission=submission
    )
    return [f for f in context["feedback_fragments"] if f.template.startswith("review/")]


def test_past_the_daily_limit_no_dispute_form_is_offered(
    content_loaded, client, candidate, settings
):
    settings.GRADE_DISPUTES_PER_DAY = 2
    client.force_login(candidate)
    subs = [
        make_submission(user=candidate, grades={"llm": (0.2, {"arch-gateway": "miss"})})
        for _ in range(3)
    ]
    [before] = notices(subs[2])
    assert before.context["can_dispute"] and not before.context["limit_reached"]
    for sub in subs[:2]:
        assert dispute(client, sub, "The gateway point is in my first line.").status_code == 302

    # The third grade's panel says the day's disputes are used, with no form to send.
    [after] = notices(subs[2])
    assert after.context["can_dispute"] is False and after.context["limit_reached"]
    step = client.get(reverse("attempt_step", args=[subs[2].answer.attempt.pk, "architecture"]))
    html = step.content.decode()
    assert "You have used today's 2 grade disputes" in html
    assert reverse("review:dispute", args=[subs[2].pk]) not in html

    # A form sent anyway (a tab opened earlier) is refused with what was typed, and no form
    # or button that would only be refused again.
    refused = dispute(client, subs[2], "A third reason that must not be lost.")
    assert refused.status_code == 429
    page = refused.content.decode()
    assert "A third reason that must not be lost." in page
    assert "<form" not in page.split("<main")[1] and "Dispute this grade" not in page
    # The disputes stored today count even when the cache forgot them (a restart): the panel
    # hid the form, and the limit holds.
    cache.clear()
    assert dispute(client, subs[2], "A third reason, after a restart.").status_code == 429
    assert GradeDispute.objects.count() == 2
    # Another refusal (too short) keeps the form: sending it again can succeed.
    other = make_submission(user=User.objects.create_user("other"), grades={"llm": (0.2, {})})
    client.force_login(other.answer.attempt.user)
    short = dispute(client, other, "unfair")
    assert short.status_code == 422 and "Dispute this grade</button>" in short.content.decode()


def test_a_self_checked_score_asks_for_an_instructors_grade_rather_than_disputing(
    content_loaded, client, candidate
):
    # Scored by their own ratings, a candidate has no grader's verdict to dispute; the request
    # asks an instructor to grade the answer (their verdict comes first), worded as such.
    own = make_submission(
        user=candidate, grades={"rubric": (0.2, {}), "self": (0.9, {"arch-gateway": "hit"})}
    )
    graded = make_submission(user=candidate, grades={"llm": (0.3, {"arch-gateway": "miss"})})
    [asked] = notices(own)
    assert asked.context["can_dispute"] and asked.context["own_check"]
    [offered] = notices(graded)
    assert offered.context["can_dispute"] and not offered.context["own_check"]
    client.force_login(candidate)
    step = client.get(reverse("attempt_step", args=[own.answer.attempt.pk, "architecture"]))
    page = unescape(step.content.decode())
    assert "Ask an instructor to grade this answer" in page and "Dispute this grade" not in page
    short = unescape(dispute(client, own, "unfair").content.decode())  # refused, form kept
    assert "Your request for an instructor's grade was not sent" in short
    assert "What should the instructor look at?" in short and "Dispute this grade" not in short
    sent = dispute(client, own, "My self-check was too harsh on the gateway.")
    assert sent.status_code == 302
    told = unescape(client.get(sent["Location"]).content.decode())
    assert "Your request was sent: an instructor will grade this answer" in told
    assert GradeDispute.objects.filter(submission=own).exists()
    [told] = notices(own)
    html = render_to_string(told.template, {"fragment": told, "submission": own})
    assert "You asked an instructor to grade this answer" in unescape(html)


def test_a_bad_dispute_is_refused_with_the_text_kept(content_loaded, client, candidate):
    submission = make_submission(user=candidate, grades={"rubric": (0.2, {})})
    client.force_login(candidate)
    response = dispute(client, submission, "unfair")
    assert response.status_code == 422
    assert "Say in a sentence why" in response.content.decode()
    assert "unfair" in response.content.decode()
    assert not GradeDispute.objects.exists()


def test_nobody_disputes_someone_elses_grade(content_loaded, client, candidate):
    submission = make_submission(user=candidate, grades={"rubric": (0.2, {})})
    client.force_login(User.objects.create_user("other"))
    assert dispute(client, submission, "This is not my answer at all.").status_code == 404
    assert not GradeDispute.objects.exists()


def test_review_pages_are_404_for_candidates(content_loaded, client, candidate):
    submission = make_submission(user=candidate, grades={"rubric": (0.2, {})})
    grade = submission.grades.get()
    client.force_login(candidate)
    for url in [
        reverse("review:index"),
        reverse("review:queue", args=["chat-api-50qps"]),
        reverse("review:submission", args=[submission.pk]),
        reverse("review:grade", args=[grade.pk]),
        reverse("review:calibration_step", args=["chat-api-50qps", "architecture"]),
        reverse("review:items", args=["chat-api-50qps"]),
    ]:
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("review:submission", args=[submission.pk])).status_code == 404


ALL_MISS = {
    "arch-gateway": "miss",
    "arch-replicas": "miss",
    "arch-engine-config": "miss",
    "arch-prefix-caching": "miss",
    "arch-prefix-router": "miss",
    "arch-autoscale-queue": "miss",
    "arch-drain-cold-start": "miss",
    "arch-observability": "miss",
}


def test_a_quote_shows_under_the_grader_who_quoted_it_not_the_instructor(
    content_loaded, client, candidate, instructor
):
    """The instructor's grade keeps the model's quote for a point they credited alike (it
    highlights the candidate's answer), and the compared verdicts showed it in the
    instructor's column too, as if they had cited it."""
    quoted = {"id": "arch-gateway", "verdict": "hit", "evidence": REAL_QUOTE,
              "quote": REAL_QUOTE, "quote_found": True, "comment": ""}  # fmt: skip
    submission = make_submission(
        user=candidate,
        text=ANSWER,
        review_reason="the model scored 90% and the offline rubric grader 10%: a gap",
        extra_grades={
            "llm": {"score": 0.9, "model": "test-model", "points": [quoted]},
        },
    )
    url = reverse("review:submission", args=[submission.pk])
    client.force_login(instructor)
    labels = {**ALL_MISS, "arch-gateway": "hit"}
    client.post(url, {f"point-{k}": v for k, v in labels.items()})
    stored = submission.grades.get(grader="instructor").points
    assert next(p for p in stored if p["id"] == "arch-gateway")["evidence"] == REAL_QUOTE
    page = client.get(url).content.decode()
    header = page.split('class="data-table graders-compared')[1].split("</thead>")[0]
    columns = re.findall(r'<th scope="col"[^>]*>(?:<a [^>]*>)?([^<]*)', header)[1:]
    row = page.split('class="data-table graders-compared')[1].split("</tr>")[1]
    cells = row.split("<td ")[1:]
    assert columns == ["Instructor: teacher", "Model grader"]
    assert REAL_QUOTE not in cells[0]
    assert f"<q>{REAL_QUOTE}</q>" in cells[1]


def test_saving_a_review_says_what_it_did_once(content_loaded, client, candidate, instructor):
    """The page said it twice: in the message after saving and under the table."""
    submission = make_submission(
        user=candidate,
        text=ANSWER,
        review_reason="the model scored 90% and the offline rubric grader 10%: a gap",
        grades={"llm": (0.9, ALL_MISS)},
    )
    url = reverse("review:submission", args=[submission.pk])
    client.force_login(instructor)
    response = client.post(url, {f"point-{k}": v for k, v in ALL_MISS.items()}, follow=True)
    text = " ".join(re.sub(r"<[^>]+>", " ", unescape(response.content.decode())).split())
    assert "Your verdicts are saved." in text
    assert text.lower().count("the candidate's grade") == 1, text


def test_a_stale_tabs_blind_labels_do_not_replace_a_review_saved_meanwhile(
    content_loaded, client, candidate, instructor
):
    """Two tabs (or two instructors) open the blind form; the second to save is refused, with
    its verdicts repeated, rather than silently replacing the first review. The same labels
    sent twice (a double click) are one review."""
    submission = make_submission(
        user=candidate, text=ANSWER, review_reason="a gap", grades={"rubric": (0.1, ALL_MISS)}
    )
    url = reverse("review:submission", args=[submission.pk])
    client.force_login(instructor)
    first = {f"point-{k}": v for k, v in {**ALL_MISS, "arch-gateway": "hit"}.items()}
    assert client.post(url, {**first, "comment": "Good gateway."}).status_code == 302
    assert client.post(url, {**first, "comment": "Good gateway."}).status_code == 302
    other = User.objects.create_user("second-teacher", password="a-long-Passphrase-42")
    instructor_grant(other)
    client.force_login(other)
    stale = client.post(url, {f"point-{k}": v for k, v in ALL_MISS.items()}, follow=True)
    page = stale.content.decode()
    assert "Not saved: teacher saved a review" in page
    assert "Your verdicts were: “An API gateway in front" in unescape(page)
    grade = submission.grades.get(grader="instructor")
    assert grade.reviewer == instructor and grade.feedback == "Good gateway."
    assert {p["id"]: p["verdict"] for p in grade.points}["arch-gateway"] == "hit"


def test_labelling_is_blind_and_the_instructor_verdict_wins(
    content_loaded, client, candidate, instructor
):
    llm_points = {**ALL_MISS, "arch-gateway": "hit", "arch-autoscale-queue": "hit"}
    submission = make_submission(
        user=candidate,
        text=ANSWER,
        review_reason="the model scored 90% and the offline rubric grader 10%: a gap",
        grades={"llm": (0.9, llm_points), "rubric": (0.1, ALL_MISS)},
    )
    url = reverse("review:submission", args=[submission.pk])
    client.force_login(instructor)
    blind = client.get(url).content.decode()
    assert ANSWER in blind and 'name="point-arch-gateway"' in blind
    assert "90%" not in blind and "Model grader" not in blind and "test-model" not in blind
    assert "checked" not in blind and "point-hit" not in blind and "/review/grades/" not in blind
    # The audit page of either grade would unblind it: it sends the instructor to label first.
    for grade in submission.grades.all():
        audit = client.get(reverse("review:grade", args=[grade.pk]))
        assert audit.status_code == 302 and audit["Location"] == url

    # Missing verdicts are refused, and the ones given are kept on the form.
    partial = client.post(url, {"point-arch-gateway": "hit"})
    assert partial.status_code == 422
    assert "7 missing" in partial.content.decode()
    assert 'value="hit" checked' in partial.content.decode()
    # A verdict no form offers (a hand-made request) is named, not counted as missing.
    odd = client.post(
        url, {f"point-{k}": "HIT" if k == "arch-gateway" else v for k, v in ALL_MISS.items()}
    )
    assert odd.status_code == 422
    assert "A verdict is hit, partial or miss, not 'HIT'." in unescape(odd.content.decode())

    labels = {**ALL_MISS, "arch-gateway": "hit", "arch-autoscale-queue": "partial"}
    response = client.post(url, {f"point-{k}": v for k, v in labels.items()})
    assert response.status_code == 302
    compared = client.get(url).content.decode()
    assert "Model grader" in compared and "Matcher, advisory" in compared
    assert "Instructor" in compared
    llm = submission.grades.get(grader="llm")
    assert client.get(reverse("review:grade", args=[llm.pk])).status_code == 200

    grades = list(submission.grades.all())
    assert primary_grade(grades).grader == "instructor"
    # Weights: gateway 1 (hit) + autoscale-queue 2 (partial, 1) = 2 of 11.
    assert submission_score("architecture", grades) == round(2 / 11, 3)
    assert review_queue(question=Question.objects.get(slug="chat-api-50qps")) == []
    label = CalibrationLabel.objects.get()
    assert label.labels == labels and label.source == "review" and label.answer == ANSWER

    context = feedback_context(
        attempt=submission.answer.attempt, answer=submission.answer, submission=submission
    )
    assert context["reviewed_by_instructor"] and context["feedback_fragments"] == []
    assert context["score"] == round(2 / 11, 3)


def test_a_review_keeps_the_wrong_ideas_unless_the_instructor_credits_the_point(
    content_loaded, candidate, instructor
):
    from review.services import review_store

    found = [{"id": "a1-autoscale-gpu-util", "evidence": "We autoscale on GPU utilisation."}]
    submission = make_submission(
        user=candidate,
        text="We autoscale on GPU utilisation.",
        review_reason="disagree",
        grades={"llm": (0.0, ALL_MISS)},
    )
    submission.grades.filter(grader="llm").update(misconceptions=found)
    grade = review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    assert grade.misconceptions == found  # shown in the feedback as before the review
    credited = {**ALL_MISS, "arch-autoscale-queue": "hit"}
    grade = review_store(submission=submission, reviewer=instructor, labels=credited)
    assert grade.misconceptions == []


def test_an_instructors_review_reads_into_the_candidates_concept_cards_at_once(
    content_loaded, candidate, instructor, django_capture_on_commit_callbacks
):
    # Only the grading worker synced the cards: a review's verdicts reached the candidate's
    # plan at their next graded step or drill set.
    from drills.models import Card
    from review.services import review_store

    submission = make_submission(
        user=candidate, text="A gateway.", grades={"rubric": (0.0, ALL_MISS)}
    )
    step = submission.answer.attempt.revision.question_spec.step("architecture")
    concepts = {slug for p in step.rubric for slug in p.concepts}
    assert concepts
    with django_capture_on_commit_callbacks(execute=True):
        review_store(submission=submission, reviewer=instructor, labels=ALL_MISS)
    keys = set(Card.objects.filter(user=candidate).values_list("key", flat=True))
    assert {f"concept:{slug}" for slug in concepts} & keys
