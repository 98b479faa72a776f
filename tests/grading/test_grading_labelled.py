"""Rank agreement of the offline rubric grader with hand labels (labelled_answers.yaml).

The set holds 54 answers to the architecture, bottlenecks and tradeoffs steps of the three
shipped questions, each labelled 0-4 by hand before it was graded. Agreement is Spearman's rho
between labels and offline scores, computed here (average ranks for ties).

Thresholds, stated:
- all answers, paraphrases included: rho >= 0.70. Paraphrases that share no keyword with the
  rubric are good answers the offline grader cannot see (that is what the model grader is
  for), so they pull the figure down on purpose. Measured when written: 0.79.
- paraphrases left out: rho >= 0.90. Measured when written: 0.96.

History, for honesty: the first run gave 0.70 overall. The grader's rules were then revised
once, each change general rather than aimed at one answer (every word of a phrase matches at
a word start, as content/README.md says; negation reaches over light words and one modifier;
a clause after "but" is not a buzzword item; the keyword-salad threshold was lowered). The
six "holdout" answers were written after that revision and never tuned against.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from grading import grade

from .conftest import read_yaml

LABELLED = Path(__file__).resolve().parent / "labelled_answers.yaml"
RHO_ALL = 0.70
RHO_WITHOUT_PARAPHRASES = 0.90


def average_ranks(values: list[float]) -> list[float]:
    """Ranks 1..n, ties sharing the average of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation: Pearson's r of the average ranks."""
    rx, ry = average_ranks(xs), average_ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return cov / (vx * vy) ** 0.5


def test_spearman_is_computed_correctly():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # With ties, worked by hand: ranks [1, 2.5, 2.5, 4] and [1, 3, 2, 4] give
    # 4.5 / sqrt(4.5 * 5) = 0.94868.
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(0.9486833, abs=1e-6)


# One worker runs the module, so its module-scoped fixture (the labelled set graded) is built
# once, not once per worker.
pytestmark = pytest.mark.xdist_group(__name__)


@pytest.fixture(scope="module")
def graded(shipped_question):
    entries = read_yaml(LABELLED.read_text(encoding="utf-8"))["answers"]
    rows = []
    for entry in entries:
        step = shipped_question(entry["question"])["steps"][entry["step"]]
        result = grade(step, entry["answer"] or "", mode="rubric")
        rows.append({**entry, "score": result.score})
    return rows


def test_the_set_is_big_and_varied_enough(graded):
    assert len(graded) >= 40
    assert {(r["question"], r["step"]) for r in graded} == {
        (q, s)
        for q in ("chat-api-50qps", "multi-tenant-lora", "long-context-rag")
        for s in ("architecture", "bottlenecks", "tradeoffs")
    }
    kinds = {r["kind"] for r in graded}
    assert {"paraphrase", "buzzwords", "off-topic", "empty", "negated", "strong"} <= kinds
    assert len({r["id"] for r in graded}) == len(graded)


def test_rank_agreement_with_the_labels(graded):
    rho = spearman([r["label"] for r in graded], [r["score"] for r in graded])
    print(f"\nSpearman rho, all {len(graded)} answers: {rho:.3f}")
    assert rho >= RHO_ALL


def test_rank_agreement_without_the_keyword_free_paraphrases(graded):
    rows = [r for r in graded if r["kind"] != "paraphrase"]
    rho = spearman([r["label"] for r in rows], [r["score"] for r in rows])
    print(f"\nSpearman rho, {len(rows)} answers without paraphrases: {rho:.3f}")
    assert rho >= RHO_WITHOUT_PARAPHRASES


def test_worthless_answers_score_at_most_a_tenth(graded):
    worthless = {r["id"]: r["score"] for r in graded if r["label"] == 0}
    assert worthless and all(score <= 0.1 for score in worthless.values()), worthless


def test_strong_answers_score_at_least_seven_tenths(graded):
    strong = {r["id"]: r["score"] for r in graded if r["label"] == 4}
    assert strong and all(score >= 0.7 for score in strong.values()), strong


def test_within_each_step_a_strong_answer_outscores_every_weak_one(graded):
    by_step = defaultdict(list)
    for r in graded:
        by_step[(r["question"], r["step"])].append(r)
    for key, rows in by_step.items():
        strong = min(r["score"] for r in rows if r["label"] == 4)
        weak = max(r["score"] for r in rows if r["label"] <= 1)
        assert strong > weak, key
