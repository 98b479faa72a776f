"""Calibration sets and runs: instructor labels in and out, and each grader measured on them.

    labels_import(question=..., entries=...)            # from a labels file (JSON Lines)
    labels_export(question=..., step_key=None)          # back to LabelledAnswer lines
    calibration_measure(question=..., step_key=..., grader="rubric" | "llm")  # re-grade, store
    calibration_view(question=..., step_key=...)         # what the calibration page shows
    self_check_agreement(question=..., step_key=...)     # self-checks against reviews

A run is stored with the grader's model and prompt version (`CalibrationRun`); when the
current ones differ (GRADER_MODEL changed, the prompt or the rubric edited) the run is stale
until it is measured again. The offline grader costs milliseconds an answer, so the page
re-measures it whenever its run is stale or the labels changed; the model's run is re-measured
by `manage.py calibrate --grader llm`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Exists, Max, OuterRef

from grading import GraderConfig, GradeResult, each_inflight, grade
from grading.calibration import (
    KAPPA_BAR,
    MIN_LABELLED,
    LabelledAnswer,
    StepAgreement,
    read_labels,
    step_agreement,
)
from grading.offline import rubric_version_for
from grading.types import VERDICTS
from practice.models import Grade, Submission
from questions.models import Question, QuestionRevision
from questions.selectors import STEP_TITLES
from review.models import CalibrationLabel, CalibrationRun
from review.services import CALIBRATED_STEPS, answer_hash, point_name

GRADERS = ("rubric", "llm")
DISAGREEMENTS_KEPT = 50


class CalibrationError(Exception):
    """A calibration asked for something that cannot be measured; the message says why."""


def _revision(question: Question) -> QuestionRevision:
    revision = question.current_revision
    if revision is None:
        raise CalibrationError(f"question {question.slug} has no published revision")
    return revision


def _step(revision: QuestionRevision, step_key: str):
    if step_key not in CALIBRATED_STEPS:
        raise CalibrationError(
            f"step {step_key!r} has no calibration set (free-text steps: "
            f"{', '.join(CALIBRATED_STEPS)})"
        )
    return revision.question_spec.step(step_key)


def grading_context(revision: QuestionRevision, step_key: str) -> dict[str, Any]:
    """The context the grading task gives the model for a step (practice.services)."""
    return {
        "slug": revision.question_spec.slug,
        "title": revision.title,
        "brief": revision.question_spec.brief.as_dict(),
        "step_key": step_key,
    }


# --- labels in and out ----------------------------------------------------------------------------


def labels_check(*, question: Question, entries: Iterable[LabelledAnswer]) -> list[str]:
    """Problems with labelled answers against the question's current rubric, one line each."""
    revision = _revision(question)
    problems = []
    for entry in entries:
        where = f"line {entry.line}" if entry.line else "an entry"
        if entry.question != question.slug:
            problems.append(f"{where}: question {entry.question!r} is not {question.slug!r}")
            continue
        try:
            step = _step(revision, entry.step)
        except (CalibrationError, LookupError) as exc:
            problems.append(f"{where}: {exc}")
            continue
        known = {p.id for p in step.rubric}
        unknown = sorted(set(entry.labels) - known)
        if unknown:
            problems.append(
                f"{where}: step {entry.step} has no rubric point {', '.join(unknown)} "
                f"(points: {', '.join(sorted(known))})"
            )
    return problems


def labels_import(*, question: Question, entries: Iterable[LabelledAnswer]) -> tuple[int, int]:
    """Store labelled answers in the question's calibration set: (created, updated). The same
    answer text labelled again replaces its labels. Check them first with `labels_check`."""
    created = updated = 0
    for entry in entries:
        _, made = CalibrationLabel.objects.update_or_create(
            question=question,
            step_key=entry.step,
            follow_up_id="",
            answer_hash=answer_hash(entry.answer),
            defaults={"answer": entry.answer, "labels": dict(entry.labels)},
        )
        created += made
        updated += not made
    return created, updated


def shipped_labels(*, question: Question) -> list[LabelledAnswer]:
    """The labelled set shipped for the question (content/calibration/<slug>.jsonl), or none.
    CalibrationError when the file has a bad line or does not fit the current rubric."""
    path = Path(settings.CONTENT_DIR) / "calibration" / f"{question.slug}.jsonl"
    if not path.is_file():
        return []
    entries, problems = read_labels(path.read_text(encoding="utf-8"))
    bad = [f"line {p.line}: {p.message}" for p in problems] + labels_check(
        question=question, entries=entries
    )
    if bad:
        raise CalibrationError(f"{path.name} does not load: " + "; ".join(bad[:3]))
    return entries


def shipped_labels_missing(*, question: Question, step_key: str) -> int:
    """How many of the shipped labelled answers of a step are not in its calibration set."""
    stored = set(
        CalibrationLabel.objects.filter(
            question=question, step_key=step_key, follow_up_id=""
        ).values_list("answer_hash", flat=True)
    )
    try:
        shipped = shipped_labels(question=question)
    except CalibrationError:
        return 0  # the page says nothing it cannot load; `calibrate --labels` names the line
    return sum(e.step == step_key and answer_hash(e.answer) not in stored for e in shipped)


def labels_export(*, question: Question, step_key: str | None = None) -> list[LabelledAnswer]:
    """The question's calibration set (main steps), as lines of a labels file: the labels of
    the current rubric's points only. An answer reviewed on an older revision keeps labels of
    points removed or renamed since, which nothing can measure and `labels_check` refuses;
    an answer left with none is left out."""
    rows = CalibrationLabel.objects.filter(question=question, follow_up_id="")
    if step_key:
        rows = rows.filter(step_key=step_key)
    spec = _revision(question).question_spec
    known = {key: {p.id for p in spec.step(key).rubric} for key in CALIBRATED_STEPS}
    order = {k: i for i, k in enumerate(CALIBRATED_STEPS)}
    entries = []
    for row in rows:
        labels = {pid: v for pid, v in row.labels.items() if pid in known.get(row.step_key, ())}
        if labels:
            entries.append(LabelledAnswer(question.slug, row.step_key, row.answer, labels))
    return sorted(entries, key=lambda e: order.get(e.step, 99))


# --- measuring ------------------------------------------------------------------------------------


@dataclass
class Measured:
    """A grader measured on a step's labels: the figures and the answers it disagreed on."""

    question: str
    step: str
    grader: str
    model: str
    prompt_version: str
    agreement: StepAgreement
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    fallbacks: int = 0
    # Each graded answer's (instructor labels, grader verdicts): what the figures count.
    pairs: list[tuple[dict[str, str], dict[str, str]]] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        notes = list(self.agreement.warnings)
        if self.fallbacks:
            notes.append(
                f"the model could not grade {self.fallbacks} answer(s); they were left out"
            )
        return notes

    def to_json(self) -> dict[str, Any]:
        """The `calibrate --json` contract."""
        return {
            "question": self.question,
            "step": self.step,
            "grader": self.grader,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "n": self.agreement.n,
            "kappa": self.agreement.kappa,
            "agreement": self.agreement.agreement,
            "points": [p.to_dict() for p in self.agreement.points],
        }


def current_version(*, question: Question, step_key: str, grader: str) -> tuple[str, str]:
    """(model, prompt version) the grader would grade this step with now."""
    revision = _revision(question)
    step = _step(revision, step_key)
    if grader == "rubric":
        return "", rubric_version_for(step)
    from grading.llm import prompt_version_for

    config = GraderConfig.from_settings(settings.GRADER)
    return config.model, prompt_version_for(step, grading_context(revision, step_key))


def _grade_one(step, text: str, grader: str, context: dict, config) -> GradeResult:
    if grader == "rubric":
        return grade(step, text, mode="rubric")
    return grade(step, text, mode="llm", context=context, config=config, cache=cache)


def calibration_measure(
    *,
    question: Question,
    step_key: str,
    grader: str,
    entries: list[LabelledAnswer] | None = None,
    store: bool = True,
) -> Measured:
    """Re-grade a step's labelled answers (the stored set, or `entries`) with the current
    grader and measure its agreement with the labels; the run is stored unless `store` is
    False. An answer the model could not grade (offline fallback) is left out and counted."""
    if grader not in GRADERS:
        raise CalibrationError(f"unknown grader {grader!r} (rubric or llm)")
    revision = _revision(question)
    step = _step(revision, step_key)
    if entries is None:
        entries = labels_export(question=question, step_key=step_key)
    entries = [e for e in entries if e.step == step_key]
    model, prompt_version = current_version(question=question, step_key=step_key, grader=grader)
    config = GraderConfig.from_settings(settings.GRADER) if grader == "llm" else None
    if grader == "llm" and not config.configured:
        raise CalibrationError("no model configured: set GRADER_BASE_URL to calibrate the model")
    context = grading_context(revision, step_key)
    point_ids = [p.id for p in step.rubric]
    says = {p.id: p.says for p in step.rubric}
    pairs, disagreements, fallbacks = [], [], 0
    # The model grades several answers at once; the offline grader is plain CPU work.
    graded = each_inflight(
        lambda entry: _grade_one(step, entry.answer, grader, context, config),
        entries,
        config.max_inflight if grader == "llm" else 1,
    )
    for entry, result in zip(entries, graded, strict=True):
        if result.grader != grader:
            fallbacks += 1
            continue
        verdicts = {v.id: v for v in result.points}
        pairs.append((entry.labels, {pid: v.verdict for pid, v in verdicts.items()}))
        for pid in point_ids:
            human = entry.labels.get(pid)
            got = verdicts.get(pid)
            if human is None or got is None or got.verdict == human:
                continue
            if len(disagreements) < DISAGREEMENTS_KEPT:
                disagreements.append(
                    {
                        "point": pid,
                        "says": says[pid],
                        "instructor": human,
                        "grader": got.verdict,
                        "quote": got.evidence,
                        "comment": got.comment,
                        "answer": entry.answer[:600],
                    }
                )
    if entries and fallbacks == len(entries):
        # Nothing was measured: stored, the empty run would replace the step's figures.
        raise CalibrationError(
            f"the {grader} grader graded none of the {len(entries)} labelled answers (each fell "
            "back to the offline grader): is the model server up? Nothing was stored."
        )
    measured = Measured(
        question=question.slug,
        step=step_key,
        grader=grader,
        model=model,
        prompt_version=prompt_version,
        agreement=step_agreement(point_ids, pairs),
        disagreements=disagreements,
        fallbacks=fallbacks,
        pairs=pairs,
    )
    if store:
        CalibrationRun.objects.update_or_create(
            question=question,
            step_key=step_key,
            grader=grader,
            defaults={
                "model": model,
                "prompt_version": prompt_version,
                "n": measured.agreement.n,
                "kappa": measured.agreement.kappa,
                "agreement": measured.agreement.agreement,
                "points": [
                    {**p.to_dict(), "warnings": p.warnings} for p in measured.agreement.points
                ],
                "disagreements": disagreements,
                "warnings": measured.warnings,
            },
        )
    return measured


# --- self-checks against instructors ----------------------------------------------------------


def _verdicts(grade: Grade) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in grade.points if p.get("id") and p.get("verdict")}


def self_check_agreement(*, question: Question, step_key: str) -> StepAgreement:
    """How candidates' self-checks of a step agree with instructors' reviews, per rubric point
    of the current revision: over every non-preview main answer with both a "self" grade and
    an instructor's, the instructor's verdict is the truth (rows of the confusion matrix) and
    the self-check's the rater's (hit: covered, partial: partly, miss: not). n is the number
    of such answers; kappa and agreement as for a grader (`grading.calibration`)."""
    step = _step(_revision(question), step_key)

    def graded_by(grader: str) -> Exists:
        return Exists(Grade.objects.filter(submission=OuterRef("pk"), grader=grader))

    both = (
        Submission.objects.filter(
            answer__attempt__revision__question=question,
            answer__attempt__is_preview=False,
            answer__step_key=step_key,
            answer__follow_up_id="",
        )
        .filter(graded_by("self"), graded_by("instructor"))
        .prefetch_related("grades")
        .order_by("pk")
    )
    pairs = []
    for submission in both:
        grades = {g.grader: g for g in submission.grades.all()}
        pairs.append((_verdicts(grades["instructor"]), _verdicts(grades["self"])))
    return step_agreement([p.id for p in step.rubric], pairs)


def self_check_view(*, question: Question, step_key: str) -> dict[str, Any]:
    """The calibration page's self-check section: per calibrated step its count of answers
    with both a self-check and a review, agreement and kappa; the open step's per point."""
    by_step = {
        key: self_check_agreement(question=question, step_key=key) for key in CALIBRATED_STEPS
    }
    says = {p.id: p.says for p in _step(_revision(question), step_key).rubric}
    current = by_step[step_key]
    steps = [
        {"key": key, "title": STEP_TITLES[key], "current": key == step_key, "figures": figures}
        for key, figures in by_step.items()
    ]
    points = [
        {
            **p.to_dict(),
            "says": says.get(p.id, p.id),
            **_kappa_marks(p.kappa, p.n),
            "matrix": list(zip(VERDICTS, p.confusion, strict=False)),
        }
        for p in current.points
    ]
    return {
        "steps": steps,
        "current": current,
        "points": points,
        "warnings": page_warnings(current.warnings, current.n, says),
    }


# --- the figures' notes, as the page words them ------------------------------------------------


def too_few_labels(n: int) -> str:
    """Why a kappa over `n` labelled answers is not held against the bar: below
    MIN_LABELLED (the count under which grading.calibration calls the figures a rough
    guide) one answer more or less moves it across the bar."""
    return f"too few labels to judge ({n} of {MIN_LABELLED} needed)"


def _kappa_marks(kappa: float | None, n: int) -> dict[str, Any]:
    """A kappa's marks on the page: `low` (red, "below 0.6") only over enough labels to
    judge; `too_few`, the note that replaces it over fewer."""
    too_few = n < MIN_LABELLED
    return {
        "low": not too_few and kappa is not None and kappa < KAPPA_BAR,
        "too_few": too_few_labels(n) if too_few and kappa is not None else "",
    }


# The notes of grading.calibration.step_agreement the page words its own way.
_UNDEFINED_FOR = re.compile(r"kappa is undefined for (?P<ids>[^:]+)(?P<rest>:.*)", re.DOTALL)
_ROUGH_GUIDE = re.compile(r"only \d+ labelled answers? \(fewer than \d+\)")
_BELOW_BAR = re.compile(r"kappa -?[\d.]+ is below the [\d.]+ bar")


def page_warnings(warnings: Iterable[str], n: int, says: dict[str, str]) -> list[str]:
    """A run's notes as the page shows them (stored runs keep the wording they were measured
    with): the points kappa is undefined for named by their text, as the tables name them,
    not by id; and over fewer than MIN_LABELLED answers one note that there are too few to
    judge, in place of the rough-guide note and of holding kappa against the bar."""
    notes = []
    few = n < MIN_LABELLED
    for note in warnings:
        if few and (_ROUGH_GUIDE.match(note) or _BELOW_BAR.match(note)):
            continue
        undefined = _UNDEFINED_FOR.fullmatch(note)
        if undefined:
            ids = [i.strip() for i in undefined["ids"].split(",")]
            named = "; ".join(point_name(says.get(i, i)) for i in ids)
            note = f"kappa is undefined for {named}{undefined['rest']}"
        notes.append(note)
    if few:
        notes.append(
            f"{too_few_labels(n)}: kappa is not held against the {KAPPA_BAR} bar yet; treat "
            "these figures as a rough guide"
        )
    return notes


# --- the page -------------------------------------------------------------------------------------


@dataclass
class RunView:
    grader: str
    run: CalibrationRun | None
    stale: bool
    stale_why: str
    current_model: str
    current_prompt_version: str
    points: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _point_rows(run: CalibrationRun | None, says: dict[str, str]) -> list[dict[str, Any]]:
    """A run's points as the page shows them: wording, figures, a low-kappa mark, and the
    confusion matrix with its row labels (the instructor's verdict)."""
    rows = []
    for point in run.points if run else []:
        rows.append(
            {
                **point,
                "says": says.get(point["id"], point["id"]),
                **_kappa_marks(point.get("kappa"), point.get("n") or 0),
                "matrix": list(zip(VERDICTS, point.get("confusion") or [], strict=False)),
            }
        )
    return rows


def _stale_why(run: CalibrationRun, model: str, prompt_version: str, labels_at) -> str:
    if run.model != model:
        return f"measured with model {run.model or '-'}, the grader now uses {model}"
    if run.prompt_version != prompt_version:
        return "the prompt or the rubric changed since it was measured"
    if labels_at is not None and labels_at > run.created_at:
        return "labels were added or changed since it was measured"
    return ""


def calibration_view(*, question: Question, step_key: str) -> dict[str, Any]:
    """The calibration page of a step: labels count, each grader's latest figures (the offline
    grader's re-measured here when stale), and whether each is stale and why."""
    step = _step(_revision(question), step_key)
    labels = CalibrationLabel.objects.filter(question=question, step_key=step_key, follow_up_id="")
    labels_at = labels.aggregate(at=Max("updated_at"))["at"]
    views = []
    for grader in GRADERS:
        model, prompt_version = current_version(question=question, step_key=step_key, grader=grader)
        run = CalibrationRun.objects.filter(
            question=question, step_key=step_key, grader=grader
        ).first()
        why = _stale_why(run, model, prompt_version, labels_at) if run else "never measured"
        if grader == "rubric" and why and labels_at is not None:
            calibration_measure(question=question, step_key=step_key, grader="rubric")
            run = CalibrationRun.objects.get(question=question, step_key=step_key, grader=grader)
            why = ""
        says = {p.id: p.says for p in step.rubric}
        views.append(
            RunView(
                grader,
                run,
                bool(why),
                why,
                model,
                prompt_version,
                _point_rows(run, says),
                page_warnings(run.warnings, run.n, says) if run else [],
            )
        )
    return {
        "step": step,
        "shipped_missing": shipped_labels_missing(question=question, step_key=step_key),
        "labels_count": labels.count(),
        "labels_from_reviews": labels.filter(source=CalibrationLabel.Source.REVIEW).count(),
        "runs": views,
        "self_check": self_check_view(question=question, step_key=step_key),
    }
