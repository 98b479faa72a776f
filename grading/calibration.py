"""How far a grader agrees with an instructor, per rubric point: the figures of calibration.

    point_agreement(point_id, pairs) -> PointAgreement    # pairs: (instructor, grader) verdicts
    step_agreement(point_ids, answers) -> StepAgreement   # answers: (labels, grader verdicts)
    read_labels(text) -> (list[LabelledAnswer], list[LabelProblem])   # JSON Lines

Cohen's kappa comes from scikit-learn's `cohen_kappa_score` (chance-corrected agreement; see
https://scikit-learn.org/stable/modules/generated/sklearn.metrics.cohen_kappa_score.html),
never from a formula of ours. Kappa is undefined when both raters used one and the same
verdict for every answer (expected agreement is 1, so 0/0): scikit-learn then answers nan,
and here that is None with a warning, never a crash and never a number that looks measured.
Django-free: the command, the page and the tests call it.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from grading.types import VERDICTS

# Below these a figure is shown with a warning: kappa 0.6 is a common bar to ship a grader,
# and fewer than 20 labelled answers make any kappa a wide guess.
KAPPA_BAR = 0.6
MIN_LABELLED = 20
MAX_LABEL_LINE_CHARS = 50_000


@dataclass
class PointAgreement:
    """One rubric point: n answers, the share where grader and instructor agree, kappa, and
    the confusion matrix (rows the instructor's verdict, columns the grader's, in VERDICTS
    order: hit, partial, miss)."""

    id: str
    n: int
    kappa: float | None
    agreement: float | None
    confusion: list[list[int]]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Every field but the warnings: the figures `calibrate --json` prints per point."""
        return {k: v for k, v in asdict(self).items() if k != "warnings"}


@dataclass
class StepAgreement:
    """A step: n labelled answers, kappa and agreement over every (answer, point) verdict
    pooled, and the same per point."""

    n: int
    kappa: float | None
    agreement: float | None
    points: list[PointAgreement]
    warnings: list[str] = field(default_factory=list)


def _kappa(human: Sequence[str], grader: Sequence[str]) -> float | None:
    from sklearn.metrics import cohen_kappa_score

    if not human:
        return None
    with warnings.catch_warnings():
        # The single-label case warns and answers nan; it is reported as None below.
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(human, grader, labels=list(VERDICTS))
    value = float(value)
    return None if math.isnan(value) else round(value, 4)


def _confusion(human: Sequence[str], grader: Sequence[str]) -> list[list[int]]:
    index = {v: i for i, v in enumerate(VERDICTS)}
    matrix = [[0] * len(VERDICTS) for _ in VERDICTS]
    for h, g in zip(human, grader, strict=True):
        matrix[index[h]][index[g]] += 1
    return matrix


def _undefined_warning(what: str, human: Sequence[str]) -> str:
    verdict = human[0] if human else "-"
    return (
        f"{what}: kappa is undefined because the instructor and the grader gave every answer "
        f"the same verdict ({verdict!r}); label answers that differ on it to measure it"
    )


def point_agreement(point_id: str, pairs: Iterable[tuple[str, str]]) -> PointAgreement:
    """Agreement on one rubric point from (instructor verdict, grader verdict) pairs."""
    pairs = list(pairs)
    human = [h for h, _ in pairs]
    grader = [g for _, g in pairs]
    kappa = _kappa(human, grader)
    agreement = round(sum(h == g for h, g in pairs) / len(pairs), 4) if pairs else None
    notes = []
    if pairs and kappa is None:
        notes.append(_undefined_warning(point_id, human))
    return PointAgreement(point_id, len(pairs), kappa, agreement, _confusion(human, grader), notes)


def step_agreement(
    point_ids: Sequence[str],
    answers: Iterable[tuple[Mapping[str, str], Mapping[str, str]]],
) -> StepAgreement:
    """Agreement over labelled answers of one step: each is (instructor labels, grader
    verdicts), both {point id: verdict}. A point the instructor did not label on an answer is
    left out of that answer's pairs; a point the grader gave no verdict counts as its miss."""
    answers = list(answers)
    per_point: dict[str, list[tuple[str, str]]] = {pid: [] for pid in point_ids}
    for labels, verdicts in answers:
        for pid in point_ids:
            if pid in labels:
                per_point[pid].append((labels[pid], verdicts.get(pid, "miss")))
    points = [point_agreement(pid, per_point[pid]) for pid in point_ids]
    pooled = [pair for pid in point_ids for pair in per_point[pid]]
    overall = point_agreement("overall", pooled)
    undefined = [p.id for p in points if p.n and p.kappa is None]
    notes = list(overall.warnings)
    if undefined:
        notes.append(
            f"kappa is undefined for {', '.join(undefined)}: the instructor and the grader gave "
            "every answer the same verdict on each; label answers that differ on them to "
            "measure it"
        )
    if len(answers) < MIN_LABELLED:
        notes.append(
            f"only {len(answers)} labelled answer{'' if len(answers) == 1 else 's'} "
            f"(fewer than {MIN_LABELLED}): "
            "treat these figures as a rough guide"
        )
    if overall.kappa is not None and overall.kappa < KAPPA_BAR:
        notes.append(f"kappa {overall.kappa:.2f} is below the {KAPPA_BAR} bar to trust a grader")
    return StepAgreement(len(answers), overall.kappa, overall.agreement, points, notes)


# --- labels files ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledAnswer:
    """One line of a labels file: an answer to a step and the instructor's verdict per point."""

    question: str
    step: str
    answer: str
    labels: dict[str, str]
    line: int = 0

    def to_json(self) -> str:
        data = {
            "question": self.question,
            "step": self.step,
            "answer": self.answer,
            "labels": self.labels,
        }
        return json.dumps(data, ensure_ascii=False)


@dataclass(frozen=True)
class LabelProblem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def read_labels(text: str) -> tuple[list[LabelledAnswer], list[LabelProblem]]:
    """Parse a labels file (JSON Lines, one labelled answer a line; blank lines skipped).

    Each line is {"question": SLUG, "step": KEY, "answer": TEXT, "labels": {POINT_ID:
    "hit"|"partial"|"miss"}}. Returns the good lines and a problem (with its line number) for
    each bad one; whether the ids exist in the question is for the caller to check.
    """
    found, problems = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if len(raw) > MAX_LABEL_LINE_CHARS:
            problems.append(LabelProblem(number, f"longer than {MAX_LABEL_LINE_CHARS} chars"))
            continue
        try:
            data = json.loads(raw)
        except ValueError as exc:
            problems.append(LabelProblem(number, f"not JSON ({exc.msg})"))
            continue
        if not isinstance(data, dict):
            problems.append(LabelProblem(number, "not a JSON object"))
            continue
        missing = [k for k in ("question", "step", "answer", "labels") if k not in data]
        if missing:
            problems.append(LabelProblem(number, f"missing {', '.join(missing)}"))
            continue
        question, step, answer, labels = (
            data["question"],
            data["step"],
            data["answer"],
            data["labels"],
        )
        if not all(isinstance(v, str) for v in (question, step, answer)):
            problems.append(LabelProblem(number, "question, step and answer must be strings"))
            continue
        if not answer.strip():
            problems.append(LabelProblem(number, "the answer is empty"))
            continue
        if not isinstance(labels, dict) or not labels:
            problems.append(LabelProblem(number, "labels must be a non-empty object"))
            continue
        bad = [f"{k}={v!r}" for k, v in labels.items() if v not in VERDICTS]
        if bad:
            problems.append(
                LabelProblem(number, f"verdicts must be hit, partial or miss: {', '.join(bad)}")
            )
            continue
        found.append(LabelledAnswer(question, step, answer, dict(labels), number))
    return found, problems
