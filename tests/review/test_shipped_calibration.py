"""The calibration sets shipped in content/calibration/: one labels file per question, at least
12 hand-labelled answers for every free-text step spanning strong, partial, weak, paraphrased
and keyword-stuffed, every rubric point labelled; and the offline grader's agreement with them.

The answers were written and labelled per point before any was graded, the way an interviewer
reads them: a paraphrase that states the idea is a hit even with none of the rubric's words,
and a bare list of keywords (or a plea to the grader) earns nothing. The "kind" key is extra to
the labels format, kept for this check; readers ignore it.

Offline kappa per step (n = 12 each), measured with rubric-v3 on 2026-12-01:
  chat-api-50qps     clarify 0.59  architecture 0.67  bottlenecks 0.58  tradeoffs 0.65
  multi-tenant-lora  clarify 0.59  architecture 0.56  bottlenecks 0.55  tradeoffs 0.62
  long-context-rag   clarify 0.62  architecture 0.64  bottlenecks 0.43  tradeoffs 0.64
The paraphrases are the offline grader's blind spot (that is the model grader's job), so these
stay near the 0.6 bar; the floor below only catches a grader that has stopped agreeing at all.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from grading.calibration import read_labels
from questions.models import Question
from review.calibration_sets import labels_check
from review.services import CALIBRATED_STEPS
from tests.conftest import CORE_SLUGS

KINDS = {"strong", "partial", "weak", "paraphrase", "keyword-stuffed"}
KAPPA_FLOOR = 0.3


def calibration_file(slug: str) -> Path:
    return Path(settings.CONTENT_DIR) / "calibration" / f"{slug}.jsonl"


@pytest.mark.parametrize("slug", CORE_SLUGS)
def test_each_shipped_set_is_valid_and_spans_every_kind(content_loaded, slug):
    text = calibration_file(slug).read_text(encoding="utf-8")
    entries, problems = read_labels(text)
    assert problems == []
    question = Question.objects.get(slug=slug)
    assert labels_check(question=question, entries=entries) == []
    spec = question.current_revision.question_spec
    kinds: dict[str, Counter] = {step: Counter() for step in CALIBRATED_STEPS}
    for line, entry in zip(text.splitlines(), entries, strict=True):
        kinds[entry.step][json.loads(line)["kind"]] += 1
        assert set(entry.labels) == {p.id for p in spec.step(entry.step).rubric}
    for step, counted in kinds.items():
        assert sum(counted.values()) >= 12, step
        assert set(counted) == KINDS, step


@pytest.mark.parametrize("slug", CORE_SLUGS)
def test_the_offline_grader_agrees_with_the_shipped_labels(content_loaded, slug):
    for step in CALIBRATED_STEPS:
        out = io.StringIO()
        call_command(
            "calibrate",
            question=slug,
            step=step,
            labels=str(calibration_file(slug)),
            json=True,
            stdout=out,
            stderr=io.StringIO(),
        )
        data = json.loads(out.getvalue())
        assert data["n"] >= 12
        assert data["kappa"] is not None and data["kappa"] >= KAPPA_FLOOR, (step, data["kappa"])
