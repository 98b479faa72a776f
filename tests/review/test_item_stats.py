"""Item statistics of a seeded cohort: hit rates, discrimination and flags per rubric point,
wrong answers and hints per napkin quantity, each figure worked out by hand below."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice.models import Submission
from questions.models import Question
from review.item_stats import question_item_stats

from .conftest import make_submission

# The architecture step of chat-api-50qps has 8 points, all of weight 1 (content file).
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


def verdicts(gateway: str, router: str, hits_among_rest: int) -> dict[str, str]:
    """arch-gateway and arch-prefix-router as given; arch-replicas always hit (everyone);
    of the other five, in rubric order, the first `hits_among_rest` hit and the rest missed."""
    rest = ARCH[2:4] + ARCH[5:]
    out = {"arch-gateway": gateway, "arch-replicas": "hit", "arch-prefix-router": router}
    for i, point in enumerate(rest):
        out[point] = "hit" if i < hits_among_rest else "miss"
    return out


# Four candidates. arch-observability is hit by nobody (hits_among_rest <= 4, it is 5th).
COHORT = [
    verdicts("hit", "hit", 4),
    verdicts("hit", "partial", 2),
    verdicts("miss", "miss", 1),
    verdicts("partial", "miss", 0),
]


@pytest.fixture
def cohort(content_loaded):
    for i, points in enumerate(COHORT):
        user = User.objects.create_user(f"c{i}")
        first = make_submission(user=user, grades={"self": (0.5, points)})
    # A weaker retry by the last candidate does not count: a part counts its best submission.
    make_submission(
        user=user,
        attempt=first.answer.attempt,
        grades={"self": (0.1, dict.fromkeys(ARCH, "hit"))},
    )
    question = Question.objects.get(slug="chat-api-50qps")
    # An instructor's preview never counts, however it scored.
    preview_user = User.objects.create_user("previewer")
    make_submission(
        user=preview_user, is_preview=True, grades={"self": (1.0, verdicts("miss", "miss", 5))}
    )
    # A candidate whose model grade was overruled by an instructor: the instructor's counts.
    user = User.objects.create_user("reviewed")
    make_submission(
        user=user,
        grades={
            "llm": (1.0, dict.fromkeys(ARCH, "hit")),
            "instructor": (0.25, verdicts("miss", "miss", 0)),
        },
    )
    return question


def arch_stats(question):
    stats = question_item_stats(question=question)
    step = next(s for s in stats["steps"] if s["key"] == "architecture")
    return step, {p.id: p for p in step["points"]}


def test_hit_rates_count_each_candidate_once_and_skip_previews(cohort):
    step, points = arch_stats(cohort)
    # Five candidates: the four of COHORT and the reviewed one (the preview left out).
    assert step["n"] == 5
    # arch-gateway: hit, hit, miss, partial, miss (instructor) -> 2/5 hits, 1/5 partial.
    assert points["arch-gateway"].hit_rate == 0.4
    assert points["arch-gateway"].partial_rate == 0.2
    # arch-replicas: hit by all five (the instructor's verdicts keep it: verdicts() sets it).
    assert points["arch-replicas"].hit_rate == 1.0
    assert "more than 95%" in points["arch-replicas"].flag
    # arch-observability: nobody (the model said hit for the reviewed one; the instructor won).
    assert points["arch-observability"].hit_rate == 0.0
    assert "fewer than 5%" in points["arch-observability"].flag
    assert points["arch-prefix-router"].flag == ""


def test_discrimination_is_the_correlation_with_the_rest_of_the_step(cohort):
    _, points = arch_stats(cohort)
    # Weights (content file): gateway 1, replicas 1, engine-config 1, prefix-caching 2,
    # prefix-router 2, autoscale-queue 2, drain-cold-start 1, observability 1.
    # arch-gateway credit per candidate: 1, 1, 0, 0.5, 0.
    # Rest of the step (the other 7 points, weight 10): replicas hit by all (1), router
    # 2 x (1, 0.5, 0, 0, 0), and of engine(1), caching(2), autoscale(2), drain(1), obs(1)
    # the first 4 / 2 / 1 / 0 / 0:
    #   1+2+1+2+2+1 = 9, 1+1+1+2 = 5, 1+0+1 = 2, 1, 1   (tenths)
    # x = 1, 1, 0, .5, 0 (mean .5); y = 9, 5, 2, 1, 1 (mean 3.6).
    # dx = .5, .5, -.5, 0, -.5; dy = 5.4, 1.4, -1.6, -2.6, -2.6
    # sum dx*dy = 2.7 + .7 + .8 + 0 + 1.3 = 5.5
    # sum dx^2 = 1.0; sum dy^2 = 29.16 + 1.96 + 2.56 + 6.76 + 6.76 = 47.2
    # r = 5.5 / sqrt(1.0 * 47.2) = 0.80056
    assert points["arch-gateway"].discrimination == pytest.approx(0.80056, abs=1e-4)
    # Everyone hit arch-replicas: no spread, so no correlation to speak of.
    assert points["arch-replicas"].discrimination is None


def test_napkin_quantities_show_common_wrong_answers_and_fired_hints(cohort):
    hint = "The weights are 15.2 GB (powers of 1000), not 15.2 GiB."
    rows = [
        ("correct", "15.2 GB / (0.7 * 1008 GB/s) in ms", ""),
        ("known_mistake", "16.3 GiB / (0.7*1008 GB/s)", hint),
        ("known_mistake", "16.3  GiB / (0.7*1008 GB/s)", hint),
        ("wrong", "5 ms", ""),
        ("unchecked", "", ""),
    ]
    for i, (verdict, answer, why) in enumerate(rows):
        make_submission(
            user=User.objects.create_user(f"napkin{i}"),
            step_key="estimate",
            grades={"self": (0.5, {})},
            extra_grades={
                "checker": {
                    "score": 0.0,
                    "points": [
                        {"id": "tpot_floor", "verdict": verdict, "answer": answer, "hint": why}
                    ],
                }
            },
        )
    stats = question_item_stats(question=cohort)
    estimate = next(s for s in stats["steps"] if s["key"] == "estimate")
    tpot = next(q for q in estimate["quantities"] if q.id == "tpot_floor")
    assert tpot.n == 5
    assert tpot.correct_rate == 0.2
    # Whitespace runs are collapsed, so the two GiB answers are one wrong answer, twice.
    assert tpot.wrong_answers == [("16.3 GiB / (0.7*1008 GB/s)", 2), ("5 ms", 1)]
    assert tpot.hints == [("known_mistake", hint, 2)]


def test_the_matcher_alone_never_counts_and_each_step_says_who_graded(cohort):
    """An answer only the keyword matcher read (no self-check yet) is no data point: its
    verdicts, however good, stay out of the hit rates, and it is counted as waiting."""
    matcher_only = User.objects.create_user("offline-only")
    make_submission(user=matcher_only, grades={"rubric": (1.0, dict.fromkeys(ARCH, "hit"))})
    step, points = arch_stats(cohort)
    assert step["n"] == 5  # the cohort, not the matcher's all-hit answer
    assert points["arch-observability"].hit_rate == 0.0
    assert step["awaiting_self_check"] == 1
    # The four of COHORT were self-checked, the reviewed one was an instructor's.
    assert step["graded_by"] == [("Instructor-reviewed", 1), ("Self-checked", 4)]

    # Once the candidate self-checks it, their ratings count, labelled as theirs.
    make_submission(
        user=matcher_only,
        attempt=Submission.objects.get(answer__attempt__user=matcher_only).answer.attempt,
        grades={"rubric": (1.0, dict.fromkeys(ARCH, "hit")), "self": (0.1, {})},
    )
    step, points = arch_stats(cohort)
    assert step["n"] == 6 and step["awaiting_self_check"] == 0
    assert step["graded_by"] == [("Instructor-reviewed", 1), ("Self-checked", 5)]
    assert points["arch-observability"].hit_rate == 0.0  # the self-check said nothing was hit


def test_a_point_is_not_flagged_before_five_candidates_answered_it():
    # One candidate hits a point or misses it: 100% or 0%, which says nothing about the point.
    from questionbank import load_question_spec
    from review.item_stats import FLAG_FROM, point_statistics

    rubric = load_question_spec("chat-api-50qps").step("architecture").rubric
    one = point_statistics(rubric, [verdicts("hit", "miss", 0)])
    assert FLAG_FROM == 5 and all(p.flag == "" for p in one)
    five = point_statistics(rubric, [verdicts("hit", "miss", 0)] * 5)
    assert "more than 95%" in {p.id: p for p in five}["arch-replicas"].flag


def test_a_candidate_with_several_attempts_is_one_candidate_with_their_best(content_loaded):
    """Two attempts by one candidate are one row: their best answer across both, so counts,
    hit rates and the five-candidate flag threshold are per candidate, not per attempt."""
    question = Question.objects.get(slug="chat-api-50qps")
    for i in range(3):
        user = User.objects.create_user(f"twice{i}")
        # A first attempt missing everything, then a better second attempt.
        make_submission(user=user, grades={"self": (0.0, dict.fromkeys(ARCH, "miss"))})
        make_submission(user=user, grades={"self": (0.9, verdicts("hit", "hit", 4))})
    step, points = arch_stats(question)
    assert step["n"] == 3  # three candidates, six attempts
    assert step["graded_by"] == [("Self-checked", 3)]
    # Each candidate's best attempt hit the gateway: 3 of 3, not 3 of 6.
    assert points["arch-gateway"].hit_rate == 1.0 and points["arch-gateway"].n == 3
    # Three candidates are fewer than five: no flag, however many attempts they made.
    assert all(p.flag == "" for p in points.values())
    # The best is chosen across attempts: a later, weaker attempt does not replace it.
    late = User.objects.get(username="twice0")
    make_submission(user=late, grades={"self": (0.05, dict.fromkeys(ARCH, "miss"))})
    step, points = arch_stats(question)
    assert step["n"] == 3 and points["arch-gateway"].hit_rate == 1.0
