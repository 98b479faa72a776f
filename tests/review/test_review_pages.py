"""The instructor's pages render what they promise: a grade's audit trail, the calibration
figures with their provenance and staleness, and the item statistics."""

from __future__ import annotations

import re

from django.urls import reverse

from grading.calibration import LabelledAnswer
from practice.models import Grade
from questions.models import Question
from review.calibration_sets import labels_import
from review.models import CalibrationRun

from .conftest import make_submission

SLUG = "chat-api-50qps"


def test_the_audit_page_shows_model_prompt_raw_reply_and_quotes(
    content_loaded, client, candidate, instructor
):
    submission = make_submission(user=candidate, text="We front it with an API gateway.")
    grade = Grade.objects.create(
        submission=submission,
        grader="llm",
        model="Qwen/Qwen2.5-7B-Instruct",
        prompt_version="llm-v1-0123456789ab",
        score=0.1,
        raw_response='{"points": [{"id": "arch-gateway", "evidence": "an API gateway"}]}',
        points=[
            {
                "id": "arch-gateway",
                "verdict": "partial",
                "evidence": "an API gateway",
                "comment": "say what it does",
                "quote": "an API gateway",
                "quote_found": True,
            }
        ],
    )
    client.force_login(instructor)
    page = client.get(reverse("review:grade", args=[grade.pk])).content.decode()
    assert "Qwen/Qwen2.5-7B-Instruct" in page and "llm-v1-0123456789ab" in page
    assert "{&quot;points&quot;: [{&quot;id&quot;: &quot;arch-gateway&quot;" in page  # escaped
    assert "<q>an API gateway</q>" in page and 'verdict-correct">yes' in page


def test_the_calibration_page_measures_the_offline_grader_and_marks_stale_runs(
    content_loaded, client, instructor, settings
):
    question = Question.objects.get(slug=SLUG)
    labels_import(
        question=question,
        entries=[
            LabelledAnswer(
                SLUG,
                "architecture",
                "An API gateway does auth and rate limits.",
                {"arch-gateway": "hit"},
            ),
            LabelledAnswer(
                SLUG, "architecture", "Pasta is best off the heat.", {"arch-gateway": "miss"}
            ),
        ],
    )
    CalibrationRun.objects.create(
        question=question,
        step_key="architecture",
        grader="llm",
        model="old/model",
        prompt_version="llm-v1-old",
        n=2,
        kappa=1.0,
        agreement=1.0,
    )
    client.force_login(instructor)
    url = reverse("review:calibration_step", args=[SLUG, "architecture"])
    page = client.get(url).content.decode()
    run = CalibrationRun.objects.get(question=question, step_key="architecture", grader="rubric")
    assert run.n == 2 and re.match(r"rubric-v\d+-", run.prompt_version)
    assert run.prompt_version in page
    assert "too few labels to judge (2 of 20 needed)" in page  # n < 20 is warned about
    assert "Stale: measured with model old/model" in page
    assert client.get(reverse("review:calibration", args=[SLUG])).status_code == 302
    assert (
        client.get(reverse("review:calibration_step", args=[SLUG, "estimate"])).status_code == 404
    )


def test_the_item_statistics_page_renders(content_loaded, client, candidate, instructor):
    make_submission(user=candidate, grades={"self": (1.0, {"arch-gateway": "hit"})})
    client.force_login(instructor)
    page = client.get(reverse("review:items", args=[SLUG])).content.decode()
    assert "1 candidate" in page and "100%" in page
    assert "Self-checked: 1" in page
    assert "Decode TPOT floor" in page  # the napkin quantities are listed
    index = client.get(reverse("review:index")).content.decode()
    assert reverse("review:queue", args=[SLUG]) in index


def test_a_changed_prompt_marks_the_model_figures_stale(content_loaded, client, instructor):
    from review.calibration_sets import current_version

    question = Question.objects.get(slug=SLUG)
    model, prompt_version = current_version(question=question, step_key="bottlenecks", grader="llm")
    run = CalibrationRun.objects.create(
        question=question,
        step_key="bottlenecks",
        grader="llm",
        model=model,
        prompt_version=prompt_version,
        n=20,
        kappa=0.7,
        agreement=0.9,
    )
    client.force_login(instructor)
    url = reverse("review:calibration_step", args=[SLUG, "bottlenecks"])
    assert "Stale" not in client.get(url).content.decode()
    CalibrationRun.objects.filter(pk=run.pk).update(prompt_version="llm-v1-000000000000")
    assert "Stale: the prompt or the rubric changed" in client.get(url).content.decode()


def test_the_model_prompt_version_follows_the_brief_the_prompt_carries(content_loaded):
    """The live prompt carries the question's brief, so an edited brief is a new prompt
    version (and the model's calibration figures go stale), as an edited rubric is."""
    from dataclasses import replace

    from grading.llm import prompt_version_for
    from review.calibration_sets import grading_context

    revision = Question.objects.get(slug=SLUG).current_revision
    step = revision.question_spec.step("architecture")
    context = grading_context(revision, "architecture")
    edited = {**context, "brief": {**context["brief"], "qps_peak": 60}}
    assert prompt_version_for(step, context) != prompt_version_for(step, edited)
    assert prompt_version_for(step, context) == prompt_version_for(step, dict(context))
    reworded = replace(step, reference=step.reference + " Also a canary.")
    assert prompt_version_for(reworded, context) != prompt_version_for(step, context)


def test_the_offline_version_follows_the_misconceptions_it_caps_by(content_loaded):
    from dataclasses import replace

    from grading.offline import rubric_version_for

    step = Question.objects.get(slug=SLUG).current_revision.question_spec.step("architecture")
    first = step.misconceptions[0]
    narrowed = replace(first, all_groups=first.all_groups[:1])
    edited = replace(step, misconceptions=(narrowed, *step.misconceptions[1:]))
    assert rubric_version_for(edited) != rubric_version_for(step)
    assert re.match(r"rubric-v\d+-", rubric_version_for(step))


def test_the_calibration_page_says_which_step_it_shows(content_loaded, client, instructor):
    """The four steps' figures look alike: the heading names the step the figures are of."""
    client.force_login(instructor)
    for step, title in [("architecture", "Architecture"), ("tradeoffs", "Trade-offs")]:
        page = client.get(reverse("review:calibration_step", args=[SLUG, step])).content.decode()
        heading = re.search(r"<h1[^>]*>(.*?)</h1>", page, re.S).group(1)
        assert title in heading, heading


def test_a_question_never_published_has_no_review_pages(content_loaded, client, instructor):
    """A preview of a new question's draft stores the question without a published revision:
    its queue, calibration and statistics are not there (no title, nothing to measure)."""
    from authoring.services import draft_new, preview_start

    draft = draft_new(kind="question", slug="brand-new-question", user=instructor)
    preview_start(user=instructor, slug="brand-new-question", text=draft.text)
    client.force_login(instructor)
    for name in ("queue", "calibration", "items"):
        assert client.get(reverse(f"review:{name}", args=[draft.slug])).status_code == 404, name
    load = client.post(reverse("review:calibration_load", args=[draft.slug]))
    assert load.status_code == 404


def test_direction_controls_in_an_answer_are_shown_to_the_reviewer_not_obeyed(
    content_loaded, client, instructor, candidate
):
    """U+202E reverses the text after it on the page while the graders read the characters in
    order: the reviewer sees the control written out, the answer's words in their order."""
    from .conftest import make_submission

    hidden = "Add replicas.\u202e.sgnihtyreve sehcac ti"
    submission = make_submission(user=candidate, text=hidden)
    client.force_login(instructor)
    page = client.get(reverse("review:submission", args=[submission.pk])).content.decode()
    assert "\u202e" not in page
    assert "Add replicas.[U+202E].sgnihtyreve sehcac ti" in page


def test_every_column_of_the_review_queue_has_a_header(content_loaded, client, instructor):
    # The link column's header was empty: a screen reader said nothing for it (axe-core's
    # empty-table-header).
    client.force_login(instructor)
    page = client.get(reverse("review:queue", args=[SLUG])).content.decode()
    head = page.split("<thead>")[1].split("</thead>")[0]
    headers = re.findall(r'<th scope="col">(.*?)</th>', head)
    assert headers and all(re.sub(r"<[^>]+>", "", h).strip() for h in headers), headers


def test_direction_controls_in_a_dispute_and_a_quote_are_shown_not_obeyed(
    content_loaded, client, instructor, candidate
):
    """The candidate's dispute reason and a grader's quote of the answer are the candidate's
    characters too: U+202E in them would reorder the queue's line and the quote's cell."""
    from review.models import GradeDispute

    from .conftest import make_submission

    disputed = make_submission(user=candidate, text="An answer.")
    GradeDispute.objects.create(
        submission=disputed, user=candidate, reason="Point 2 is there.\u202eenod ma I"
    )
    quoted = make_submission(
        user=candidate,
        step_key="clarify",
        text="Add replicas.\u202e.sgnihtyreve sehcac ti",
        extra_grades={
            "llm": {
                "score": 1.0,
                "model": "test-model",
                "points": [
                    {
                        "id": "p1",
                        "verdict": "met",
                        "evidence": "replicas.\u202e.sgnihtyreve",
                        "comment": "",
                    }
                ],
            }
        },
    )
    client.force_login(instructor)
    slug = disputed.answer.attempt.revision.question.slug
    pages = {
        "queue": client.get(reverse("review:queue", args=[slug])),
        "submission": client.get(reverse("review:submission", args=[disputed.pk])),
        "grade": client.get(reverse("review:grade", args=[quoted.grades.get().pk])),
    }
    for name, response in pages.items():
        assert response.status_code == 200, name
        assert "\u202e" not in response.content.decode(), name
    assert "Point 2 is there.[U+202E]enod ma I" in pages["queue"].content.decode()
    assert "replicas.[U+202E].sgnihtyreve" in pages["grade"].content.decode()
