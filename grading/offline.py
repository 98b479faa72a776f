"""The offline rubric grader, a keyword matcher: deterministic, fast, and able to say why.

It points, it does not decide. Where no model grades, the candidate self-checks each rubric
point; the matcher helps by pointing at the candidate's own sentence that may cover a point
(a verdict of hit or partial with evidence) and at possible wrong ideas. So it is built for
precision: it quotes only what the candidate typed (never a form values block, such as the
SLO card's, that opens the text), never a sentence whose figure contradicts the point's
("p99 TTFT 5000 ms" for "at most 2 s"), and never a sentence stating a wrong idea that
contradicts the point. Its verdicts keep their shape and score for the UI, calibration and
scripts, which show them as advisory (`ADVISORY_NOTE`). `bench/pointing.py` measures how often
a human agrees where it points.

For each rubric point it looks for one sentence of the answer holding a phrase from every
group of the point's `recognise.all` (a hit) or, failing that, of `recognise.partial` (a
partial); a phrase also matches the few generic equivalents of `text.phrase_variants` ("a bad
build goes out as a canary" is a rollout). A sentence and the next may hold the groups
together when the next one points back at it and speaks of the point (`_neighbour_pairs`). A
phrase only counts where it is not negated, unless the point's own wording frames it the same
way (`_Framing`: "one giant instance can't beat ..." states "replicas beat one big TP
instance"; "must never reach another's adapter" states a point that is a requirement); a
sentence that is a bare list of buzzwords or that addresses the grader earns nothing, except
that a configuration (engine flags, `text.is_configuration`) answers a point that names a
flag. The passage found, verbatim, is the evidence; the comment names the phrases found and
what was missing, in the answer's own words.

Misconceptions (a step's authored wrong ideas) are recognised sentence by sentence too: every
group of the misconception's `recognise.all` in one sentence, and none of its phrases negated
there ("we would not autoscale on GPU utilisation" rejects the idea, it does not state it).
A sentence that states one is never evidence for a point it contradicts, and such a point is
at best partial (`types.cap_contradicted`, which the model grader applies as well).

A point with a `diagram` rule also reads the candidate's architecture diagram
(`grading.diagram`): it takes the better of the two verdicts, and says which gave the
evidence (`evidence_source` "diagram" or "prose"; for the diagram, the node labels and edge
lines that show it).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from diagrams import Diagram
from grading.diagram import diagram_verdict, read_diagram
from grading.evidence import content_terms
from grading.text import (
    AnswerReading,
    Figure,
    Occurrence,
    Phrase,
    Sentence,
    collapse_whitespace,
    contradicting_figure,
    figures,
    find_phrase,
    is_negator,
    names_engine_flag,
    phrase_variants,
    read_answer,
    split_form_block,
)
from grading.types import (
    VERDICT_CREDIT,
    GradeResult,
    Misconception,
    MisconceptionFound,
    RubricPoint,
    RubricPointVerdict,
    Usage,
    cap_contradicted,
    injection_warning,
    rubric_points,
    step_misconceptions,
    weighted_score,
)

# Bumped with every change of how the grader reads an answer, so calibration figures from
# before it show as stale (v3: misconceptions recognised by clause stretches; v4: the matcher
# points rather than decides: typed words only, no contradicting figures, flag lists only as
# configurations, prohibitions as requirements, a small vocabulary of equivalents; v5: a denial
# covers the ideas joined to the denied one by "or"). A step
# whose points carry diagram rules gets a new version through `rubric_version_for`'s hash.
RUBRIC_GRADER_VERSION = "rubric-v5"
# Said on every offline grade: what a grader that matches wording cannot do.
OFFLINE_LIMITS = (
    "This offline grade matches wording: a correct idea put in other words may be missed, "
    "and a model grade or an instructor's review can credit it."
)
# What the matcher's verdicts are: said beside them wherever they are printed as such.
ADVISORY_NOTE = (
    "Advisory: the offline keyword matcher points at the sentence that may cover each point "
    "and at possible wrong ideas; it does not decide. The candidate's self-check, the model "
    "or an instructor does."
)
# A rubric phrase that is a figure ("6", "0.875"), and the figure an answer's word opens with.
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# Long enough for any honest answer; bounds the work done on a pasted novel.
MAX_ANSWER_CHARS = 20_000
MAX_EVIDENCE_CHARS = 300


@dataclass(frozen=True)
class _Framing:
    """How a point's own wording treats one phrase group, so an answer that agrees with a
    point phrased as a limit is not cancelled as negated.

    `lesser`: the point puts the group on the losing side of a comparison ("replicas beat one
    big tensor-parallel instance"), so "one giant instance can't beat ..." states the point.
    `denied`: the group's phrases the point itself negates ("models that do not fit").
    """

    lesser: bool = False
    denied: frozenset[str] = frozenset()
    # The point states a rule ("no tenant may see another tenant's weights"), so an answer's
    # prohibition ("one customer must never reach another's adapter") states it too.
    requirement: bool = False


def _framings(point: RubricPoint) -> list[_Framing]:
    return list(_framings_of(point.says, point.all_groups + point.partial_groups))


# Words by which a point's own wording states a rule rather than a design choice.
_REQUIREMENT_RE = re.compile(
    r"\b(?:requirement|must|never|may not|mustn't|non[- ]negotiable|no \w+ (?:may|can)|"
    r"cannot|forbid\w*|prevent\w*)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1024)
def _framings_of(says: str, groups: tuple[tuple[str, ...], ...]) -> tuple[_Framing, ...]:
    said = read_answer(says).sentences
    requirement = _REQUIREMENT_RE.search(says) is not None
    out = []
    for group in groups:
        lesser, denied = False, set()
        for phrase_text in group:
            for sentence in said:
                for occurrence in find_phrase(sentence, Phrase.parse(phrase_text)):
                    lesser |= occurrence.lesser
                    if occurrence.negated and not occurrence.lesser:
                        denied.add(phrase_text)
        out.append(_Framing(lesser, frozenset(denied), requirement))
    return tuple(out)


@dataclass
class _GroupMatch:
    """How one phrase group fared in one passage (a sentence, or a sentence and the next)."""

    found: str | None  # the answer's own words that matched, when they count
    negated: bool  # the group's words are there, but only denied
    phrase: str | None = None  # the rubric phrase they matched

    @property
    def other_number(self) -> bool:
        """A number phrase matched by a different number that only starts like it ("6"
        found in "6.577"): the answer's own figure, not the one the point expects."""
        if not self.found or not self.phrase or not _NUMBER.fullmatch(self.phrase):
            return False
        written = _NUMBER.match(self.found)
        return written is None or written.group(0) != self.phrase


def _match_group(
    passage: tuple[Sentence, ...], group: tuple[str, ...], framing: _Framing
) -> _GroupMatch:
    negated = False
    for phrase_text in group:
        for variant in phrase_variants(phrase_text):
            phrase = Phrase.parse(variant)
            for sentence in passage:
                for occurrence in find_phrase(sentence, phrase):
                    agrees = (
                        (occurrence.lesser and framing.lesser)
                        or phrase_text in framing.denied
                        or (occurrence.prohibited and framing.requirement)
                    )
                    if occurrence.negated and not agrees:
                        negated = True
                        continue
                    words = " ".join(sentence.raw[occurrence.start : occurrence.end])
                    return _GroupMatch(found=words, negated=False, phrase=phrase_text)
    return _GroupMatch(found=None, negated=negated)


@dataclass
class _PassageMatch:
    passage: tuple[Sentence, ...]
    groups: list[_GroupMatch]

    @property
    def complete(self) -> bool:
        return bool(self.groups) and all(g.found for g in self.groups)

    @property
    def found_words(self) -> list[str]:
        return [g.found for g in self.groups if g.found]

    @property
    def only_negation_missing(self) -> bool:
        """Every group's words are in the passage, and some only where they are denied: the
        point's words really occur, in a negated sentence."""
        return (
            bool(self.groups)
            and all(g.found or g.negated for g in self.groups)
            and any(not g.found for g in self.groups)
        )


def _match(
    passage: tuple[Sentence, ...],
    groups: tuple[tuple[str, ...], ...],
    framings: list[_Framing],
) -> _PassageMatch:
    return _PassageMatch(
        passage, [_match_group(passage, g, f) for g, f in zip(groups, framings, strict=False)]
    )


def _describe_group(group: tuple[str, ...]) -> str:
    return " / ".join(f'"{p}"' for p in group[:3])


def _quote(passage: tuple[Sentence, ...], text: str) -> str:
    """The passage as the candidate wrote it (whitespace collapsed): one sentence, or two
    neighbours with whatever stood between them, so the quote is found verbatim."""
    evidence = collapse_whitespace(text[passage[0].start : passage[-1].end])
    if len(evidence) <= MAX_EVIDENCE_CHARS:
        return evidence
    # Cut at a word boundary: the quote stays verbatim, only shorter.
    return evidence[:MAX_EVIDENCE_CHARS].rsplit(" ", 1)[0]


def _may_earn(sentence: Sentence, asks_settings: bool) -> bool:
    return sentence.earns_settings if asks_settings else sentence.earns


def _neighbour_pairs(
    reading: AnswerReading, point: RubricPoint, asks_settings: bool
) -> list[tuple[Sentence, Sentence]]:
    """Sentences that may earn this point together with the one before them.

    The second must open by pointing back ("This", "It", "Because", "So", ...: see
    `Sentence.continues_previous`), must earn on its own, and must carry a term of the
    point's own wording, so "This is my design." lends nothing. The first may be a heading
    for it ("Router policy: prefix-aware (KV-cache-aware) routing.", a run of terms too short
    to be a list), but never a list of three or more terms nor text addressed to the grader:
    a reason after a label says how or why, a reason after a keyword list does not make the
    list an answer.
    """
    own_terms = content_terms(f"{point.says} {' '.join(point.concepts).replace('-', ' ')}")
    pairs = []
    for first, second in itertools.pairwise(reading.sentences):
        if not (second.continues_previous and _may_earn(second, asks_settings)):
            continue
        if not content_terms(second.text) & own_terms:
            continue
        heading = first.injection is None and first.bare_reason in ("salad", "fragment")
        if _may_earn(first, asks_settings) or heading:
            pairs.append((first, second))
    return pairs


def grade_point(
    point: RubricPoint, reading: AnswerReading, barred: frozenset[int] = frozenset()
) -> RubricPointVerdict:
    """The matcher's verdict on one rubric point for an already-read answer.

    It points, it does not decide: a verdict of hit or partial comes with the candidate's own
    sentence that may cover the point, and the matcher speaks only where that is likely right.
    A hit needs every group of `recognise.all` in one sentence, or in a sentence and the next
    one when that one continues it (see `_neighbour_pairs`); a partial needs every group of
    `recognise.partial` in one sentence. The evidence is that passage, verbatim. Never
    evidence: sentences whose index is in `barred` (they state a wrong idea contradicting
    this point), and sentences that give a figure of a kind the point names but a different
    value ("p99 TTFT 5000 ms" for "p99 TTFT at most 2 s").
    """
    if not point.all_groups and not point.partial_groups:
        return RubricPointVerdict(
            point.id,
            "miss",
            comment=f"Not judged offline (no recognise phrases): {point.says}",
        )

    framings = _framings(point)
    all_framings = framings[: len(point.all_groups)]
    partial_framings = framings[len(point.all_groups) :]
    # A point that names an engine flag asks for the configuration: a list of flags answers it.
    asks_settings = names_engine_flag(point.says)
    expected = _point_figures(point.says)
    best_partial_view: _PassageMatch | None = None  # most groups found, for the comment
    negated_seen = bare_seen = injected_seen = False
    other_figure: Figure | None = None
    partial_hit: _PassageMatch | None = None
    for sentence in reading.sentences:
        if sentence.index in barred:
            continue
        earns = _may_earn(sentence, asks_settings)
        full = _match((sentence,), point.all_groups, all_framings)
        differs = contradicting_figure(sentence.text, expected) if expected else None
        if differs is not None:
            if full.complete and earns:
                other_figure = other_figure or differs
            continue
        if full.complete:
            if earns:
                return _hit(point, full, reading.text)
            bare_seen |= sentence.bare_list
            injected_seen |= sentence.injection is not None
        negated_seen |= full.only_negation_missing
        if (
            earns
            and full.found_words
            and (
                best_partial_view is None
                or len(full.found_words) > len(best_partial_view.found_words)
            )
        ):
            best_partial_view = full
        if point.partial_groups and partial_hit is None and earns:
            part = _match((sentence,), point.partial_groups, partial_framings)
            if part.complete:
                partial_hit = part
            negated_seen |= part.only_negation_missing

    for pair in _neighbour_pairs(reading, point, asks_settings):
        if any(s.index in barred for s in pair):
            continue
        if expected and any(contradicting_figure(s.text, expected) for s in pair):
            continue
        full = _match(pair, point.all_groups, all_framings)
        if full.complete:
            return _hit(point, full, reading.text)

    if partial_hit is not None:
        found = ", ".join(f'"{w}"' for w in partial_hit.found_words)
        missing = [
            _describe_group(g)
            for g, m in zip(
                point.all_groups,
                _match(partial_hit.passage, point.all_groups, all_framings).groups,
                strict=True,
            )
            if not m.found
        ]
        lacking = f"; not said with {' and '.join(missing)}" if missing else ""
        return RubricPointVerdict(
            point.id,
            "partial",
            evidence=_quote(partial_hit.passage, reading.text),
            comment=f"Partly covered ({found}{lacking}): {point.says}",
        )

    if other_figure is not None:
        why = f'gives "{other_figure.written}", not the figure this point names'
    elif bare_seen:
        why = "named only in a bare list of terms, without saying how or why"
    elif injected_seen:
        why = "only in text addressed to the grader, which earns nothing"
    elif negated_seen:
        why = "mentioned only in a negated sentence"
    elif best_partial_view is not None and any(
        m.found and not m.other_number for m in best_partial_view.groups
    ):
        # A figure of the answer's own that only starts like the expected one (6.577 for
        # "6") is not cited as if it were that one: its group counts as missing.
        missing = [
            _describe_group(g)
            for g, m in zip(point.all_groups, best_partial_view.groups, strict=True)
            if not m.found or m.other_number
        ]
        said = ", ".join(
            f'"{m.found}"' for m in best_partial_view.groups if m.found and not m.other_number
        )
        why = f"mentions {said} but not together with {' and '.join(missing)}"
    else:
        why = "not found in the answer"
    return RubricPointVerdict(point.id, "miss", comment=f"Missing ({why}): {point.says}")


@lru_cache(maxsize=1024)
def _point_figures(says: str) -> tuple[Figure, ...]:
    return tuple(figures(says))


def _hit(point: RubricPoint, match: _PassageMatch, text: str) -> RubricPointVerdict:
    found = ", ".join(f'"{w}"' for w in match.found_words)
    return RubricPointVerdict(
        point.id,
        "hit",
        evidence=_quote(match.passage, text),
        comment=f"Covered ({found}): {point.says}",
    )


# Words that reject what follows them in their clause ("we never push to every replica at
# once", "ignoring whatever adapter the client sends", "NVMe is nowhere near as fast"), beyond
# the negators of `text.py`.
_REJECTING = {
    "ignor", "reject", "avoid", "instead", "rather", "unlike", "overrid", "overwrit", "nowhere",
    "hardly", "barely", "scarcely",
}  # fmt: skip
# Two-word rejections: "far from evenly spread", "anything but free", "nothing like as fast".
_REJECTING_PAIRS = {("far", "from"), ("anything", "but"), ("nothing", "like")}
# "Nothing" soon after a phrase in its clause denies it ("it tells the autoscaler nothing",
# "sharding one instance across ten cards buys nothing"), unless it goes on ("autoscale on
# utilisation and nothing else").
_NOTHING_GOES_ON = {"else", "but", "more", "less", "other"}
# A clause opened by one of these states the other side of a contrast ("we scale on the queue,
# while GPU utilisation saturates early") or concedes something whatever it is ("whatever rank
# a tenant trains, every slot is sized for the maximum"): it does not state the wrong idea.
_CONTRAST_OPENERS = {
    "while", "whereas", "although", "though", "unlike", "instead", "whatever", "whichever",
    "regardless", "irrespective",
}  # fmt: skip
# Connectives that open a clause turning against the one before ("traffic averages 20 QPS,
# but we provision for the peak"; "decode is easy here; the binding constraint is TTFT"). A
# wrong idea's groups found only on both sides of one are two thoughts, not one statement of
# the idea; a semicolon parts them the same way. Not "so" or "because": a reason and its
# consequence often state the idea together ("GPU utilisation is the load signal, so the
# autoscaler watches it").
_TURNS = {
    "but", "yet", "however", "instead", "whereas", "while", "although", "though", "otherwise",
}  # fmt: skip


# Words that judge an idea wrong wherever they stand in the sentence ("GPU utilisation is a
# misleading autoscaling signal", "autoscaling on GPU utilisation is a mistake"): a sentence
# holding one discusses the wrong idea, it does not state it. Matched at a word's start.
_DISMISSING = (
    "mislead", "mistak", "wrong", "poor", "trap", "pitfall", "myth", "fallac", "naive",
    "misconcep", "flaw", "bogus", "false", "tempt", "risk", "useless", "unrealistic", "wishful",
    "hides", "hiding", "masks", "masking",
)  # fmt: skip
# Runs of words that judge the same way ("a GPU per tenant is out of the question").
_DISMISSING_RUNS = (
    ("out", "of", "the", "question"), ("bad", "idea"), ("non", "starter"), ("too", "late"),
    ("backfir",),
)  # fmt: skip
# Words that take a dismissing word back: "there is no risk", "it is not a mistake". Not
# "never": "we never risk a fleet-wide push" still refuses the idea.
_UNDOING = {"no", "not", "without", "zero", "little"}

# A clause opened by one of these, in a sentence that says what "would" happen, is a
# counterfactual ("if we autoscaled on GPU utilisation, we would scale too late"): it
# weighs the wrong idea, it does not adopt it. Without "would" the condition is the design
# ("if GPU utilisation passes 90%, we add a replica") and still counts.
_HYPOTHETICAL_OPENERS = {"if", "suppose", "supposing", "imagine", "say"}
_COUNTERFACTUAL_MODALS = {"would", "wouldn't", "could", "couldn't", "might"}
# Someone else's practice, answered by a "but" clause ("many teams autoscale on GPU
# utilisation, but it saturates early"): reported, then argued against.
_REPORTERS = {
    "many", "some", "most", "people", "others", "teams", "folks", "everyone", "often",
    "commonly", "usually", "typically", "traditionally",
}  # fmt: skip
_COUNTERS = {"but", "yet", "however"}
# What an option would do, answered by a later "so"/"instead"/"but" clause ("tensor
# parallelism across ten cards would add an all-reduce per layer, so we run replicas"): the
# option is weighed and dropped. Said of "we"/"I" ("I would provision for the typical day,
# so ...") it is the design, unless a "but" answers it ("we could assume X, but ...").
_CONSEQUENCES = _COUNTERS | {"so", "instead"}
_PERSONS = {"i", "we", "you", "they"}
# An appearance answered by a "but" ("headroom looks like waste, but it keeps p99 in the
# SLO"): the idea is how it seems, not what the candidate holds.
_SEEMING = {"look", "looks", "seem", "seems", "appear", "appears", "sound", "sounds"}
_AUXILIARY_ENDINGS = {"is", "are", "was", "were", "does", "do", "did", "will", "can", "has"}


def _dismissed(sentence: Sentence, spans: list[tuple[int, int]]) -> bool:
    raw = sentence.raw

    def judging(i: int) -> bool:
        if raw[i].startswith(_DISMISSING):
            return True
        return any(
            len(run) <= len(raw) - i and all(raw[i + k].startswith(w) for k, w in enumerate(run))
            for run in _DISMISSING_RUNS
        )

    return any(
        judging(i)
        and not any(a <= i < b for a, b in spans)
        and not any(w in _UNDOING or w.endswith("n't") for w in raw[max(0, i - 2) : i])
        for i in range(len(raw))
    )


def _clause_openers(sentence: Sentence) -> dict[int, str]:
    """Each clause's first word ("so that" reads as "so-that": a purpose, not a turn)."""
    openers: dict[int, str] = {}
    for i, (clause, word) in enumerate(zip(sentence.clauses, sentence.raw, strict=True)):
        if clause not in openers:
            follower = sentence.raw[i + 1] if i + 1 < len(sentence.raw) else ""
            openers[clause] = "so-that" if (word, follower) == ("so", "that") else word
    return openers


def _regions(sentence: Sentence) -> list[int]:
    """For each word, the stretch of clauses it sits in: a new stretch starts at a clause
    opened by a turn (`_TURNS`) or a semicolon, and at an elliptical reply to a denial
    ("weights are not a problem, KV memory is")."""
    openers = _clause_openers(sentence)
    words_of: dict[int, list[str]] = {}
    for clause, word in zip(sentence.clauses, sentence.raw, strict=True):
        words_of.setdefault(clause, []).append(word)
    out: list[int] = []
    region = 0
    previous: int | None = None
    for i, clause in enumerate(sentence.clauses):
        if previous is not None and clause != previous:
            own = words_of[clause]
            reply = own[-1] in _AUXILIARY_ENDINGS and any(is_negator(w) for w in words_of[previous])
            if openers[clause] in _TURNS or ";" in sentence.gaps[i] or reply:
                region += 1
        out.append(region)
        previous = clause
    return out


def _weighed_not_adopted(sentence: Sentence, clause: int) -> bool:
    """Whether `clause` puts the idea as a counterfactual ("if we did X, we would ..."), as
    others' practice answered by a later "but" ("many teams do X, but ..."), as what an
    option would do answered by a later "so" or "but" ("X would add an all-reduce, so ..."),
    or as how it looks answered by a "but" ("X looks like waste, but ...")."""
    openers = _clause_openers(sentence)
    if openers[clause] in _HYPOTHETICAL_OPENERS and any(
        word in _COUNTERFACTUAL_MODALS for word in sentence.raw
    ):
        return True
    own = [i for i, c in enumerate(sentence.clauses) if c == clause]
    later = {openers[c] for c in openers if c > clause}
    countered = bool(later & _COUNTERS)
    head = [sentence.raw[i] for i in own[:3]]
    if countered and any(word in _REPORTERS for word in head):
        return True
    if countered and any(sentence.raw[i] in _SEEMING for i in own):
        return True
    for i in own:
        if sentence.raw[i] in _COUNTERFACTUAL_MODALS:
            personal = i > 0 and sentence.raw[i - 1] in _PERSONS
            if later & (_COUNTERS if personal else _CONSEQUENCES):
                return True
    return False


def _rejected(sentence: Sentence, start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Whether the words [start, end) are argued against in their clause: a negator or a
    rejecting word earlier in the clause (outside the wrong idea's own phrases, which may hold
    a negator: "no need for evals"), "than" before them (the losing side of a comparison),
    "nothing" soon after them, a clause that opens a contrast, or one that only weighs the
    idea (`_weighed_not_adopted`)."""
    clause = sentence.clauses[start]
    first = start
    while first > 0 and sentence.clauses[first - 1] == clause:
        first -= 1
    if sentence.raw[first] in _CONTRAST_OPENERS or _weighed_not_adopted(sentence, clause):
        return True
    for i in range(first, start):
        if any(a <= i < b for a, b in spans):
            continue
        word = sentence.raw[i]
        if word == "than":
            return True
        if is_negator(word) or any(word.startswith(r) for r in _REJECTING):
            return True
        if i + 1 < len(sentence.raw) and (word, sentence.raw[i + 1]) in _REJECTING_PAIRS:
            return True
    for i in range(end, min(end + 6, len(sentence.raw))):
        if sentence.clauses[i] != clause:
            break
        follower = sentence.raw[i + 1] if i + 1 < len(sentence.raw) else ""
        if (
            sentence.raw[i] == "nothing"
            and follower not in _NOTHING_GOES_ON
            and not any(a <= i < b for a, b in spans)
        ):
            return True
    return False


def _find_exact_negators(sentence: Sentence, phrase: Phrase) -> list[Occurrence]:
    """`find_phrase`, except that a negator in the phrase matches only itself: "no loss" must
    not be read in "not lossless", nor "no eval" in "nobody evaluates"."""
    out = []
    for occurrence in find_phrase(sentence, phrase):
        if occurrence.end - occurrence.start == len(phrase.words) and any(
            is_negator(word) and sentence.words[occurrence.start + k] != word
            for k, word in enumerate(phrase.words)
        ):
            continue
        out.append(occurrence)
    return out


def _denial_outside(sentence: Sentence, at: int, spans: list[tuple[int, int]]) -> bool:
    """Whether the clause of word `at` holds a negator outside the wrong idea's own phrases.
    "KV memory will not be a problem" reads "KV" as negated by "will not", but that "not"
    belongs to the phrase stating the idea."""
    clause = sentence.clauses[at]
    return any(
        sentence.clauses[i] == clause and is_negator(word) and not any(a <= i < b for a, b in spans)
        for i, word in enumerate(sentence.raw)
    )


def _states(sentence: Sentence, groups: tuple[tuple[str, ...], ...]) -> str | None:
    """The words of a sentence stating every group, or None when some group has no phrase
    that stands: found, and not negated, rejected or on the losing side of a comparison; or
    when the sentence calls something wrong or misleading (it then argues against the idea
    rather than stating it). The standing phrases must share one stretch of clauses
    (`_regions`): "traffic averages 20 QPS, but we provision for the peak" does not state
    "provision for the average"."""
    occurrences = []
    for group in groups:
        found = [
            occurrence
            for phrase_text in group
            for occurrence in _find_exact_negators(sentence, Phrase.parse(phrase_text))
        ]
        if not found:
            return None
        occurrences.append(found)
    spans = [(o.start, o.end) for found in occurrences for o in found]
    if _dismissed(sentence, spans):
        return None
    regions = _regions(sentence)
    standing_by_group = []
    for found in occurrences:
        standing = [
            o
            for o in found
            if not (
                (o.negated and _denial_outside(sentence, o.start, spans))
                or o.lesser
                or _rejected(sentence, o.start, o.end, spans)
            )
        ]
        if not standing:
            return None
        standing_by_group.append(standing)
    for region in sorted({regions[o.start] for o in standing_by_group[0]}):
        chosen = [
            next((o for o in standing if regions[o.start] == region), None)
            for standing in standing_by_group
        ]
        if all(o is not None for o in chosen):
            return ", ".join(f'"{" ".join(sentence.raw[o.start : o.end])}"' for o in chosen)
    return None


def find_misconceptions(
    misconceptions: tuple[Misconception, ...], reading: AnswerReading
) -> tuple[list[MisconceptionFound], dict[str, frozenset[int]]]:
    """The wrong ideas an answer states, and for each rubric point the sentences that may not
    back it because they state an idea contradicting it.

    One finding per misconception (its first sentence), in authored order. Text addressed to
    the grader states nothing.
    """
    found: list[MisconceptionFound] = []
    barred: dict[str, set[int]] = {}
    for miscon in misconceptions:
        if not miscon.all_groups:
            continue
        first: tuple[Sentence, str] | None = None
        for sentence in reading.sentences:
            if sentence.injection is not None:
                continue
            words = _states(sentence, miscon.all_groups)
            if words is None:
                continue
            first = first or (sentence, words)
            for point_id in miscon.contradicts:
                barred.setdefault(point_id, set()).add(sentence.index)
        if first is not None:
            sentence, words = first
            found.append(
                MisconceptionFound(
                    miscon.id,
                    evidence=_quote((sentence,), reading.text),
                    comment=f"States ({words}): {miscon.idea}",
                )
            )
    return found, {k: frozenset(v) for k, v in barred.items()}


def _feedback(
    points: list[RubricPoint],
    verdicts: list[RubricPointVerdict],
    found: list[MisconceptionFound],
    misconceptions: tuple[Misconception, ...],
) -> str:
    counts = {v: sum(1 for x in verdicts if x.verdict == v) for v in ("hit", "partial", "miss")}
    lines = [
        f"Offline rubric grader: {counts['hit']} hit, {counts['partial']} partial, "
        f"{counts['miss']} missed of {len(points)} points."
    ]
    ideas = {m.id: m.idea for m in misconceptions}
    if found:
        lines.append("Wrong ideas stated: " + " ".join(ideas.get(f.id, f.id) for f in found))
    says = {p.id: p.says for p in points}
    to_review = [says[v.id] for v in verdicts if v.verdict != "hit"]
    if to_review:
        lines.append("To strengthen: " + " ".join(to_review))
    lines.append(OFFLINE_LIMITS)
    return "\n".join(lines)


def _with_diagram(
    point: RubricPoint, prose: RubricPointVerdict, diagram: Diagram
) -> RubricPointVerdict:
    """The better of the prose's verdict and the diagram's for a point with a diagram rule;
    the diagram's when they tie, since the rule was written for it."""
    if point.diagram is None:
        return prose
    drawn = diagram_verdict(point.diagram, diagram)
    shown = VERDICT_CREDIT[drawn.verdict]
    if shown == 0 or shown < VERDICT_CREDIT.get(prose.verdict, 0):
        return prose
    return RubricPointVerdict(
        point.id,
        drawn.verdict,  # type: ignore[arg-type]
        evidence="; ".join(drawn.evidence),
        comment=f"{drawn.comment}: {point.says}",
        evidence_source="diagram",
        diagram_evidence=list(drawn.evidence),
    )


def rubric_version_for(step: dict[str, Any]) -> str:
    """The offline grader's version for a step: RUBRIC_GRADER_VERSION plus a hash of what it
    reads of the step (the rubric's ids, wording, weights and recognise phrases, and the
    misconceptions it caps points by). An edit of either gives a new version, so calibration
    figures from before it show as stale."""
    rubric = [
        [p.id, p.says, p.weight, p.all_groups, p.partial_groups]
        + ([asdict(p.diagram)] if p.diagram else [])
        for p in rubric_points(step)
    ]
    wrong = [[m.id, list(m.contradicts), m.all_groups] for m in step_misconceptions(step)]
    digest = hashlib.sha256(json.dumps([rubric, wrong]).encode()).hexdigest()
    return f"{RUBRIC_GRADER_VERSION}-{digest[:12]}"


def grade_offline(step: dict[str, Any], answer: str, *, diagram: str = "") -> GradeResult:
    """Grade an answer to one step (or follow-up) with the rubric's `recognise` phrases and,
    for points with a `diagram` rule, the candidate's architecture diagram.

    `step` is the step's dict from the question file; `answer` is the candidate's text;
    `diagram` their Mermaid flowchart text ("" for none). A point takes the better of the
    prose's verdict and the diagram's, and says which gave the evidence (`evidence_source`);
    a diagram that cannot be read leaves a warning and the prose alone is graded.
    Returns a GradeResult with grader "rubric", no model and zero token usage.
    """
    started = time.perf_counter()
    points = rubric_points(step)
    warnings: list[str] = []
    drawn = read_diagram(diagram)
    if drawn.warning:
        warnings.append(drawn.warning)
    # Only what the candidate wrote is read: a form values block that opens the text (the
    # SLO card's values under the app's labels) is never evidence.
    form_values, typed_from = split_form_block(answer or "")
    text = (answer or "")[typed_from:]
    if len(text) > MAX_ANSWER_CHARS:
        text = text[:MAX_ANSWER_CHARS]
        warnings.append(f"answer cut to its first {MAX_ANSWER_CHARS} characters for grading")
    reading = read_answer(text)
    misconceptions = step_misconceptions(step)
    found, barred = find_misconceptions(misconceptions, reading)
    verdicts = [grade_point(point, reading, barred.get(point.id, frozenset())) for point in points]
    if drawn.diagram is not None:
        verdicts = [
            _with_diagram(point, verdict, drawn.diagram)
            for point, verdict in zip(points, verdicts, strict=True)
        ]
    cap_contradicted(verdicts, found, misconceptions)
    injection_reasons = list(reading.injection_reasons)
    for reason in read_answer(form_values).injection_reasons if form_values else ():
        if reason not in injection_reasons:
            injection_reasons.append(reason)
    if injection_reasons:
        warnings.append(
            injection_warning(injection_reasons, "sentences addressed to the grader earned nothing")
        )
    return GradeResult(
        points=verdicts,
        score=weighted_score(points, verdicts),
        feedback=_feedback(points, verdicts, found, misconceptions),
        grader="rubric",
        model=None,
        prompt_version=rubric_version_for(step),
        latency_ms=round((time.perf_counter() - started) * 1000),
        usage=Usage(),
        warnings=warnings,
        injection_suspected=bool(injection_reasons),
        misconceptions=found,
    )
