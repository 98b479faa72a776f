"""How well the offline keyword matcher points: `python -m bench.pointing [--wrong]`.

The matcher helps the candidate's self-check: for a rubric point whose verdict is "hit" or
"partial" with evidence, the UI shows "may cover this" and the quote. This measures that on
the project's labelled answers (content/calibration/*.jsonl, per-point human labels):

- spoke: how many (answer, point) pairs the matcher pointed at;
- precision: the share of those where the human said hit or partial;
- recall: the share of the human's hits and partials the matcher pointed at;
- contradicted: pointings whose quote lies in a sentence stating a wrong idea that
  contradicts the point (must be 0).

Prints one JSON line; `--wrong` adds each pointing the human disagreed with.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grading.calibration import LabelledAnswer, read_labels  # noqa: E402
from grading.offline import find_misconceptions, grade_offline  # noqa: E402
from grading.text import quote_in_answer, read_answer, typed_text  # noqa: E402
from grading.types import step_misconceptions  # noqa: E402
from questionbank import load_question_spec  # noqa: E402

CALIBRATION_DIR = ROOT / "content" / "calibration"
# What the human must have said for a pointing to be right.
COVERED = ("hit", "partial")


@dataclass
class Pointing:
    """How the matcher pointed over a set of labelled answers."""

    answers: int = 0
    spoke: int = 0
    right: int = 0
    human_covered: int = 0
    contradicted: int = 0
    wrong: list[dict[str, str]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.right / self.spoke if self.spoke else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.human_covered if self.human_covered else 0.0

    def summary(self) -> dict[str, Any]:
        figures = {k: v for k, v in asdict(self).items() if k != "wrong"}
        return {
            "bench": "pointing",
            **figures,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
        }


def shipped_labels(directory: Path = CALIBRATION_DIR) -> list[LabelledAnswer]:
    """Every labelled answer shipped under content/calibration; ValueError on a bad line."""
    entries: list[LabelledAnswer] = []
    for path in sorted(directory.glob("*.jsonl")):
        found, problems = read_labels(path.read_text(encoding="utf-8"))
        if problems:
            raise ValueError(f"{path.name}: {problems[0]}")
        entries += found
    return entries


def measure_pointing(entries: Iterable[LabelledAnswer]) -> Pointing:
    """Grade each labelled answer offline and count where the matcher points, and how often
    the human agrees that the point is covered."""
    out = Pointing()
    specs: dict[str, Any] = {}
    for entry in entries:
        if entry.question not in specs:
            specs[entry.question] = load_question_spec(entry.question)
        step = specs[entry.question].step(entry.step)
        result = grade_offline(step, entry.answer)
        reading = read_answer(typed_text(entry.answer))
        _, barred = find_misconceptions(step_misconceptions(step), reading)
        out.answers += 1
        for verdict in result.points:
            human = entry.labels.get(verdict.id)
            if human is None:
                continue
            out.human_covered += human in COVERED
            if verdict.verdict not in COVERED or not verdict.evidence:
                continue
            out.spoke += 1
            if human in COVERED:
                out.right += 1
            else:
                out.wrong.append(
                    {"question": entry.question, "step": entry.step, "point": verdict.id,
                     "human": human, "matcher": verdict.verdict, "quote": verdict.evidence}
                )  # fmt: skip
            sentences = quote_in_answer(verdict.evidence, reading) or []
            if any(s.index in barred.get(verdict.id, ()) for s in sentences):
                out.contradicted += 1
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wrong", action="store_true", help="list the wrong pointings too")
    args = parser.parse_args(argv)
    measured = measure_pointing(shipped_labels())
    line = measured.summary()
    if args.wrong:
        line["wrong"] = measured.wrong
    print(json.dumps(line))
    return line


if __name__ == "__main__":
    main()
