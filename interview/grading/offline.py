"""The offline rubric grader: deterministic, fast, and able to say why.

For each rubric point it looks for one sentence of the answer holding a phrase from every
group of the point's `recognise.all` (a hit) or, failing that, of `recognise.partial` (a
partial). A phrase only counts where it is not negated; a sentence that is a bare list of
buzzwords or that addresses the grader earns nothing. The sentence found is the evidence,
and the comment names what was found and what was missing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from interview.grading.text import (
    AnswerReading,
    Phrase,
    Sentence,
    find_phrase,
    read_answer,
)
from interview.grading.types import (
    GradeResult,
    RubricPoint,
    RubricPointVerdict,
    Usage,
    rubric_points,
    weighted_score,
)

RUBRIC_GRADER_VERSION = "rubric-v1"
# Long enough for any honest answer; bounds the work done on a pasted novel.
MAX_ANSWER_CHARS = 20_000
MAX_EVIDENCE_CHARS = 300


@dataclass
class _GroupMatch:
    """How one phrase group fared in one sentence."""

    found: str | None  # the answer's own words that matched, when not negated
    negated: bool


def _match_group(sentence: Sentence, group: tuple[str, ...]) -> _GroupMatch:
    negated = False
    for phrase_text in group:
        phrase = Phrase.parse(phrase_text)
        for occurrence in find_phrase(sentence, phrase):
            if occurrence.negated:
                negated = True
                continue
            words = " ".join(sentence.raw[occurrence.start : occurrence.end])
            return _GroupMatch(found=words, negated=False)
    return _GroupMatch(found=None, negated=negated)


@dataclass
class _SentenceMatch:
    sentence: Sentence
    groups: list[_GroupMatch]

    @property
    def complete(self) -> bool:
        return bool(self.groups) and all(g.found for g in self.groups)

    @property
    def found_words(self) -> list[str]:
        return [g.found for g in self.groups if g.found]

    @property
    def any_negated(self) -> bool:
        return any(g.negated for g in self.groups)


def _describe_group(group: tuple[str, ...]) -> str:
    return " / ".join(f'"{p}"' for p in group[:3])


def _quote(sentence: Sentence) -> str:
    evidence = sentence.evidence
    if len(evidence) <= MAX_EVIDENCE_CHARS:
        return evidence
    # Cut at a word boundary: the quote stays verbatim, only shorter.
    return evidence[:MAX_EVIDENCE_CHARS].rsplit(" ", 1)[0]


def grade_point(point: RubricPoint, reading: AnswerReading) -> RubricPointVerdict:
    """The verdict on one rubric point for an already-read answer."""
    if not point.all_groups and not point.partial_groups:
        return RubricPointVerdict(
            point.id,
            "miss",
            comment=f"Not judged offline (no recognise phrases): {point.says}",
        )

    best_partial_view: _SentenceMatch | None = None  # most groups found, for the comment
    negated_seen = bare_seen = injected_seen = False
    partial_hit: _SentenceMatch | None = None
    for sentence in reading.sentences:
        full = _SentenceMatch(sentence, [_match_group(sentence, g) for g in point.all_groups])
        if full.complete:
            if sentence.earns:
                found = ", ".join(f'"{w}"' for w in full.found_words)
                return RubricPointVerdict(
                    point.id,
                    "hit",
                    evidence=_quote(sentence),
                    comment=f"Covered ({found}): {point.says}",
                )
            bare_seen |= sentence.bare_list
            injected_seen |= sentence.injection is not None
        negated_seen |= full.any_negated and not full.complete
        if (
            sentence.earns
            and full.found_words
            and (
                best_partial_view is None
                or len(full.found_words) > len(best_partial_view.found_words)
            )
        ):
            best_partial_view = full
        if point.partial_groups and partial_hit is None and sentence.earns:
            part = _SentenceMatch(
                sentence, [_match_group(sentence, g) for g in point.partial_groups]
            )
            if part.complete:
                partial_hit = part
            negated_seen |= part.any_negated and not part.complete

    if partial_hit is not None:
        found = ", ".join(f'"{w}"' for w in partial_hit.found_words)
        missing = [
            _describe_group(g)
            for g, m in zip(point.all_groups, _groups_in(partial_hit.sentence, point), strict=True)
            if not m.found
        ]
        lacking = f"; not said with {' and '.join(missing)}" if missing else ""
        return RubricPointVerdict(
            point.id,
            "partial",
            evidence=_quote(partial_hit.sentence),
            comment=f"Partly covered ({found}{lacking}): {point.says}",
        )

    if bare_seen:
        why = "named only in a bare list of terms, without saying how or why"
    elif injected_seen:
        why = "only in text addressed to the grader, which earns nothing"
    elif negated_seen:
        why = "mentioned only in a negated sentence"
    elif best_partial_view is not None:
        missing = [
            _describe_group(g)
            for g, m in zip(point.all_groups, best_partial_view.groups, strict=True)
            if not m.found
        ]
        said = ", ".join(f'"{w}"' for w in best_partial_view.found_words)
        why = f"mentions {said} but not together with {' and '.join(missing)}"
    else:
        why = "not found in the answer"
    return RubricPointVerdict(point.id, "miss", comment=f"Missing ({why}): {point.says}")


def _groups_in(sentence: Sentence, point: RubricPoint) -> list[_GroupMatch]:
    return [_match_group(sentence, g) for g in point.all_groups]


def _feedback(points: list[RubricPoint], verdicts: list[RubricPointVerdict]) -> str:
    counts = {v: sum(1 for x in verdicts if x.verdict == v) for v in ("hit", "partial", "miss")}
    lines = [
        f"Offline rubric grader: {counts['hit']} hit, {counts['partial']} partial, "
        f"{counts['miss']} missed of {len(points)} points."
    ]
    says = {p.id: p.says for p in points}
    to_review = [says[v.id] for v in verdicts if v.verdict != "hit"]
    if to_review:
        lines.append("To strengthen: " + " ".join(to_review))
    return "\n".join(lines)


def grade_offline(step: dict[str, Any], answer: str) -> GradeResult:
    """Grade an answer to one step (or follow-up) with the rubric's `recognise` phrases.

    `step` is the step's dict from the question file; `answer` is the candidate's text.
    Returns a GradeResult with grader "rubric", no model and zero token usage.
    """
    started = time.perf_counter()
    points = rubric_points(step)
    warnings: list[str] = []
    text = answer or ""
    if len(text) > MAX_ANSWER_CHARS:
        text = text[:MAX_ANSWER_CHARS]
        warnings.append(f"answer cut to its first {MAX_ANSWER_CHARS} characters for grading")
    reading = read_answer(text)
    verdicts = [grade_point(point, reading) for point in points]
    if reading.injection_suspected:
        warnings.append(
            "injection suspected (" + ", ".join(reading.injection_reasons) + "): "
            "sentences addressed to the grader earned nothing"
        )
    return GradeResult(
        points=verdicts,
        score=weighted_score(points, verdicts),
        feedback=_feedback(points, verdicts),
        grader="rubric",
        model=None,
        prompt_version=RUBRIC_GRADER_VERSION,
        latency_ms=round((time.perf_counter() - started) * 1000),
        usage=Usage(),
        warnings=warnings,
        injection_suspected=reading.injection_suspected,
    )
