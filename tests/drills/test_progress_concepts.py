"""Per-concept progress scores a concept by the rubric points that link it: a point the
candidate missed counts against its own concepts, not against every concept of the step."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User

from drills import selectors
from practice.models import Attempt, Grade, StepAnswer, Submission
from tests.drills.factories import graded_submission, revision_of

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
THIS_WEEK = NOW - timedelta(days=1)
CREDIT = {"hit": 1.0, "partial": 0.5, "miss": 0.0}  # written out here, apart from the code

# The architecture step of chat-api-50qps: every point a hit but these.
ARCHITECTURE_MISSES = {
    "arch-engine-config": "miss",  # links quantization and vram-gate, nothing else
    "arch-drain-cold-start": "miss",  # one of the two points on autoscaling-queue-depth
    "arch-observability": "partial",  # the one point on observability
}


@pytest.fixture
def candidate(content_loaded):
    return User.objects.create_user("concept-candidate", password="a-long-Passphrase-42")


def _part(slug: str, step_key: str, follow_up: str = ""):
    step = next(s for s in revision_of(slug).question_spec.steps if s.key == step_key)
    return next(f for f in step.follow_ups if f.id == follow_up) if follow_up else step


def _points(part, verdicts: dict[str, str]) -> list[dict]:
    """A grade's stored points: each of the part's rubric points, a hit unless `verdicts` says."""
    return [
        {"id": p.id, "verdict": verdicts.get(p.id, "hit"), "evidence": "", "comment": ""}
        for p in part.rubric
    ]


def _weighted(part, verdicts: dict[str, str], concept: str | None = None) -> float:
    """The weighted credit of the part's points (those linking `concept` when given)."""
    points = [p for p in part.rubric if concept is None or concept in p.concepts]
    total = sum(p.weight for p in points)
    return round(sum(p.weight * CREDIT[verdicts.get(p.id, "hit")] for p in points) / total, 3)


def _concepts(user) -> dict[str, selectors.Row]:
    return {r.key: r for r in selectors.progress(user=user, now=NOW).concepts}


def _self_checked_architecture(user) -> float:
    """The self-checked architecture submission of the walk; returns its step score."""
    part = _part("chat-api-50qps", "architecture")
    score = _weighted(part, ARCHITECTURE_MISSES)
    graded_submission(
        user=user,
        at=THIS_WEEK,
        step="architecture",
        grades={"self": score},
        points=_points(part, ARCHITECTURE_MISSES),
    )
    return score


def test_a_missed_point_scores_its_concepts_and_not_the_rest_of_the_step(candidate):
    """Every concept of the step showed the step's score, the missed point's too."""
    score = _self_checked_architecture(candidate)
    data = selectors.progress(user=candidate, now=NOW)
    step = next(r for r in data.steps if r.key == "architecture")
    assert step.overall.mean == score  # the step keeps its score
    concepts = {r.key: r for r in data.concepts}
    means = {slug: concepts[slug].overall.mean for slug in concepts}
    assert means["vram-gate"] == 0.0  # linked only through the missed point
    # The step links quantization itself too, but its one point on it is the missed one.
    assert means["quantization"] == 0.0
    assert means["observability"] == 0.5
    assert means["prefix-caching"] == 1.0
    assert means["serving-frameworks"] == 1.0
    part = _part("chat-api-50qps", "architecture")
    assert means["autoscaling-queue-depth"] == _weighted(
        part, ARCHITECTURE_MISSES, "autoscaling-queue-depth"
    )
    assert 0 < means["autoscaling-queue-depth"] < 1  # the points' weights, not a plain mean
    # Still one self-checked verdict in each concept's row.
    assert {(r.overall.count, r.overall.self_checked) for r in concepts.values()} == {(1, 1)}


def test_the_weakest_concepts_are_the_ones_whose_points_were_missed(candidate, client, monkeypatch):
    monkeypatch.setattr(selectors, "clock", lambda: NOW)
    _self_checked_architecture(candidate)
    weakest = selectors.progress(user=candidate, now=NOW).weakest
    assert {w.slug for w in weakest[:2]} == {"quantization", "vram-gate"}
    assert [w.mean for w in weakest] == [0.0, 0.0, 0.5]
    assert weakest[2].slug == "observability"
    client.force_login(candidate)
    html = client.get("/drills/progress/").content.decode()
    listed = html.split('data-testid="weakest"')[1].split("</section>")[0]
    assert '<a href="/concepts/vram-gate/">' in listed
    assert "0% over 1 verdict" in listed
    assert "/concepts/prefix-caching/" not in listed


def test_a_concept_only_the_part_links_keeps_the_parts_score(candidate):
    """fu-low-hit-rate links fleet-sizing itself; none of its rubric points does."""
    part = _part("long-context-rag", "tradeoffs", "fu-low-hit-rate")
    assert "fleet-sizing" in part.concepts
    assert not any("fleet-sizing" in p.concepts for p in part.rubric)
    missed = {"fulow-measure": "miss"}  # links observability and prefix-caching
    score = _weighted(part, missed)
    attempt = Attempt.objects.create(user=candidate, revision=revision_of("long-context-rag"))
    answer = StepAnswer.objects.create(
        attempt=attempt, step_key="tradeoffs", follow_up_id="fu-low-hit-rate"
    )
    submission = Submission.objects.create(
        answer=answer, number=1, text="an answer", draft_version=1
    )
    Submission.objects.filter(pk=submission.pk).update(submitted_at=THIS_WEEK)
    Grade.objects.create(
        submission=submission, grader="llm", score=score, points=_points(part, missed)
    )
    means = {slug: row.overall.mean for slug, row in _concepts(candidate).items()}
    assert 0 < score < 1
    assert means["fleet-sizing"] == score
    assert means["observability"] == 0.0  # fulow-measure alone links it
    assert means["prefix-caching"] == _weighted(part, missed, "prefix-caching")


def test_the_points_come_from_the_primary_grade(candidate):
    """The instructor's review is the verdict that counts, not the model's beside it."""
    part = _part("chat-api-50qps", "architecture")
    submission = graded_submission(
        user=candidate, at=THIS_WEEK, step="architecture", grades={"llm": 1.0}
    )
    Grade.objects.filter(submission=submission).update(points=_points(part, {}))
    missed = {"arch-engine-config": "miss"}
    Grade.objects.create(
        submission=submission,
        grader="instructor",
        score=_weighted(part, missed),
        points=_points(part, missed),
    )
    means = {slug: row.overall.mean for slug, row in _concepts(candidate).items()}
    assert means["vram-gate"] == 0.0
    assert means["prefix-caching"] == 1.0


def test_a_grade_without_point_verdicts_scores_every_concept_as_the_step(candidate):
    graded_submission(user=candidate, at=THIS_WEEK, step="architecture", grades={"llm": 0.3})
    concepts = _concepts(candidate)
    assert set(concepts) >= {"vram-gate", "quantization", "prefix-caching"}
    assert {r.overall.mean for r in concepts.values()} == {0.3}


def test_the_candidates_list_reads_concepts_by_their_points(candidate, client):
    """The instructor's list (progress_many) shows the same per-concept figures."""
    _self_checked_architecture(candidate)
    many = selectors.progress_many(users=[candidate], now=NOW)[candidate.pk]
    own = selectors.progress(user=candidate, now=NOW)
    pairs = {(r.key, r.overall.mean) for r in many.concepts}
    assert pairs == {(r.key, r.overall.mean) for r in own.concepts}
    assert ("vram-gate", 0.0) in pairs
