"""Self-checks in the instructors' pages: a self-check the keyword matcher strongly
disagrees with waits in the review queue (over- or under-rated) until an instructor reviews
it; the calibration page shows, per step, how self-checks agree with instructors' reviews."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from questions.models import Question
from review import services as review
from review.calibration_sets import self_check_agreement

from .conftest import SLUG, make_submission

ARCH = [
    "arch-gateway",
    "arch-replicas",
    "arch-engine-config",
    "arch-prefix-caching",
    "arch-prefix-router",
    "arch-autoscale-queue",
    "arch-drain-cold-start",
    "arch-observability",
]


def queued(question):
    return {e.submission.pk: e.reasons for e in review.review_queue(question=question)}


def test_a_self_check_far_from_the_matcher_waits_for_review_until_reviewed(
    content_loaded, candidate, instructor
):
    question = Question.objects.get(slug=SLUG)
    over = make_submission(user=candidate, grades={"self": (0.9, {}), "rubric": (0.2, {})})
    under = make_submission(user=candidate, grades={"self": (0.1, {}), "rubric": (0.7, {})})
    close = make_submission(user=candidate, grades={"self": (0.6, {}), "rubric": (0.3, {})})
    edge = make_submission(user=candidate, grades={"self": (0.9, {}), "rubric": (0.5, {})})
    matcher_only = make_submission(user=candidate, grades={"rubric": (0.0, {})})

    waiting = queued(question)
    # Blind: the reason names the kind of flag, never the scores or which way they lean.
    assert waiting[over.pk] == ["the candidate's self-check and the matcher disagree"]
    assert waiting[under.pk] == ["the candidate's self-check and the matcher disagree"]
    # A gap of no more than the graders' own threshold (0.4) is agreement.
    assert close.pk not in waiting and edge.pk not in waiting
    assert matcher_only.pk not in waiting  # nothing to disagree with yet
    assert review.awaits_blind_label(over) and not review.awaits_blind_label(close)

    # The queue page says why, and labelling is blind: the grades' audit waits for the label.
    client = Client()
    client.force_login(instructor)
    page = client.get(reverse("review:queue", args=[SLUG])).content.decode()
    assert page.count("the candidate&#x27;s self-check and the matcher disagree") == 2
    for figure in ("0.9", "0.2", "0.1", "0.7", "over-rated", "under-rated", "matcher 0"):
        assert figure not in page
    label_page = client.get(reverse("review:submission", args=[over.pk])).content.decode()
    assert "self-check (0.9)" not in label_page and "over-rated" not in label_page
    self_grade = over.grades.get(grader="self")
    audit = client.get(reverse("review:grade", args=[self_grade.pk]))
    assert audit.status_code == 302

    review.review_store(submission=over, reviewer=instructor, labels=dict.fromkeys(ARCH, "partial"))
    assert over.pk not in queued(question) and under.pk in queued(question)
    assert client.get(reverse("review:grade", args=[self_grade.pk])).status_code == 200
    # Once labelled, the label page gives the figures the queue kept back.
    labelled = client.get(reverse("review:submission", args=[over.pk])).content.decode()
    assert "self-check (0.9) and the matcher (0.2) disagree" in labelled
    assert "may have over-rated themselves" in labelled


def test_self_checks_are_measured_against_instructors_per_step(content_loaded, candidate):
    question = Question.objects.get(slug=SLUG)
    # (self-check verdicts, instructor verdicts) on the architecture step, by hand.
    answers = [
        ({"arch-gateway": "hit", "arch-replicas": "hit"}, {"arch-gateway": "hit"}),
        ({"arch-gateway": "hit", "arch-replicas": "partial"}, {"arch-gateway": "miss"}),
        ({"arch-gateway": "miss", "arch-replicas": "miss"}, {"arch-gateway": "miss"}),
    ]
    for own, theirs in answers:
        labels = dict.fromkeys(ARCH, "miss") | theirs
        make_submission(user=candidate, grades={"self": (0.5, own), "instructor": (0.5, labels)})
    # Neither counts: one without a review, one a preview.
    make_submission(user=candidate, grades={"self": (1.0, {"arch-gateway": "hit"})})
    make_submission(
        user=candidate,
        is_preview=True,
        grades={"self": (1.0, {}), "instructor": (0.0, dict.fromkeys(ARCH, "hit"))},
    )

    figures = self_check_agreement(question=question, step_key="architecture")
    assert figures.n == 3
    gateway = next(p for p in figures.points if p.id == "arch-gateway")
    human, own = ["hit", "miss", "miss"], ["hit", "hit", "miss"]
    assert gateway.n == 3 and gateway.agreement == pytest.approx(2 / 3, abs=1e-4)
    expected = cohen_kappa_score(human, own, labels=["hit", "partial", "miss"])
    assert gateway.kappa == pytest.approx(expected, abs=1e-4)
    # Rows the instructor's verdict, columns the self-check's (hit, partial, miss).
    assert gateway.confusion == [[1, 0, 0], [0, 0, 0], [1, 0, 1]]
    # A point the candidate left unrated counts as their miss.
    replicas = next(p for p in figures.points if p.id == "arch-replicas")
    assert replicas.confusion == [[0, 0, 0], [0, 0, 0], [1, 1, 1]]
    assert self_check_agreement(question=question, step_key="bottlenecks").n == 0


def test_the_calibration_page_shows_the_self_check_figures(
    content_loaded, client, candidate, instructor
):
    make_submission(
        user=candidate,
        grades={
            "self": (1.0, dict.fromkeys(ARCH, "hit")),
            "instructor": (0.5, dict.fromkeys(ARCH, "hit") | {"arch-gateway": "miss"}),
        },
    )
    client.force_login(instructor)
    page = client.get(reverse("review:calibration_step", args=[SLUG, "architecture"]))
    html = page.content.decode()
    assert "self-checks against your reviews" in html
    section = html.split('id="run-self"')[1]
    # Architecture: one answer with both, 7 of 8 points agreed.
    assert 'class="self-n">1</td>' in section and "88%" in section
    assert "No answer of this step has both" not in section
    # The per-point table: the instructor's verdicts against the self-check's, one row a point.
    points = section.split('self-check-points"')[1].split("</table>\n")[0]
    assert "columns: the self-check's" in points and "the grader's" not in points
    assert points.count('<table class="confusion">') == len(ARCH)
    other = client.get(reverse("review:calibration_step", args=[SLUG, "bottlenecks"]))
    assert "No answer of this step has both" in other.content.decode()
