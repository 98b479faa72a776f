"""Judge a candidate's napkin-math answer against a question's quantity.

Order of judgement: dimension first, then the relative tolerance, then rounding (a count is a
whole number, rounded the way the quantity says, and the hint says which way the answer went),
then known mistakes, the nearest one winning: the quantity's own `mistakes:` from the question
file, and the slips that depend on no question (a factor of 1000, GB vs GiB to the right power,
bits vs bytes, 32k read as 32,000, one given read in GB where it is GiB or the other way). The
engine knows nothing about any one question: every mistake that needs its meaning is declared
in the file. The expected value is only returned when the caller asks for it (after the step
was submitted).

A mistake in the question file is a mapping:
    formula  napkin expression over the givens and earlier quantities (the wrong answer), or
    replace  {given: expression}: the quantity's own formula with those givens replaced
             (e.g. {kv_heads: q_heads}); exactly one of the two
    hint     one or two sentences shown when the answer matches
    kind     optional short tag naming the mistake (e.g. utilisation-target), returned with the
             verdict
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sympy import Rational

from .errors import FormulaError, NapkinError
from .evaluator import Quantity
from .parser import Name, Node, UnitRef, UnitSpec, WithUnit, parse_line, parse_units, walk
from .units import DIMENSIONLESS, describe_dim
from .worksheet import build_env, evaluate, evaluate_line, format_number, shown_in

VERDICTS = ("correct", "close", "wrong_unit", "not_rounded", "known_mistake", "wrong")
DEFAULT_TOLERANCE = 0.05
MISTAKE_KEYS = frozenset({"formula", "replace", "hint", "kind"})
_ROUNDING = {"ceil": math.ceil, "floor": math.floor, "round": lambda x: math.floor(x + 0.5)}
_ROUNDING_WORDS = {
    "ceil": "rounded up",
    "floor": "rounded down",
    "round": "rounded to the nearest whole number",
}
_ROUNDED = re.compile(r"^\s*(ceil|floor|round)\((.*)\)\s*$")


@dataclass
class CheckResult:
    """verdict: one of VERDICTS; value/unit: the candidate's answer (in the quantity's unit
    when the dimension matches); hint: one or two sentences; expected: the instructor's value
    in `unit`, only when revealed; mistake: the `kind` of the known mistake matched, if any."""

    verdict: str
    value: float | None
    unit: str
    hint: str
    expected: float | None = None
    mistake: str | None = None

    def as_json(self, reveal: bool = False) -> dict[str, Any]:
        """The `napkin --check --json` object; `expected` only when revealed, `mistake` only
        when a known mistake with a kind matched."""
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "value": self.value,
            "unit": self.unit,
            "hint": self.hint,
        }
        if reveal:
            out["expected"] = self.expected
        if self.mistake:
            out["mistake"] = self.mistake
        return out


def givens_from_estimate(estimate: Mapping[str, Any], upto: str | None = None) -> dict[str, str]:
    """The givens dict for a question's `estimate` step: its givens (name -> value), then the
    quantities listed before `upto` (id -> formula, wrapped in ceil/floor/round when the
    quantity rounds, so a later N_GPU uses the whole N_inst)."""
    givens = {str(g["name"]): str(g["value"]) for g in estimate.get("givens") or []}
    for quantity in estimate.get("quantities") or []:
        if quantity.get("id") == upto:
            break
        formula = str(quantity["formula"])
        rounding = quantity.get("rounding")
        givens[str(quantity["id"])] = f"{rounding}({formula})" if rounding else formula
    return givens


def _unrounded(givens: Mapping[str, str]) -> dict[str, str]:
    """The givens with every outer ceil/floor/round taken off, so a count derived from another
    count can be compared with the value before any rounding (9.14 instances, not 10)."""
    out = {}
    for name, text in givens.items():
        match = _ROUNDED.match(text)
        out[name] = match.group(2) if match else text
    return out


def _has_units(node: Node, env: Mapping[str, Quantity]) -> bool:
    """Whether the candidate wrote any unit (or used a name that carries one)."""
    return any(
        isinstance(part, UnitRef | WithUnit)
        or (isinstance(part, Name) and part.id in env and env[part.id].dim != DIMENSIONLESS)
        for part in walk(node)
    )


def _rel(a: float, b: float) -> float:
    if b == 0:
        return abs(a)
    return abs(a - b) / abs(b)


@dataclass
class _Judge:
    spec: Mapping[str, Any]
    givens: Mapping[str, str]
    labels: Mapping[str, str]
    target: UnitSpec | None
    tolerance: float
    rounding: str | None

    @property
    def scale(self) -> Rational:
        return self.target.scale if self.target else Rational(1)

    @property
    def dim(self) -> tuple:
        return self.target.dim if self.target else DIMENSIONLESS

    def value_of(
        self,
        formula: str,
        overrides: Mapping[str, Quantity] | None = None,
        givens: Mapping[str, str] | None = None,
    ) -> Quantity:
        env = build_env(self.givens if givens is None else givens, overrides)
        try:
            return evaluate(formula, env)
        except NapkinError as error:
            raise FormulaError(
                f"The formula {formula!r} of {self.spec.get('id')!r}: {error.message}"
            ) from None

    def mistake_value(self, mistake: Mapping[str, Any]) -> Quantity:
        """The wrong answer a declared mistake gives."""
        unknown = set(mistake) - MISTAKE_KEYS
        if unknown or "hint" not in mistake or ("formula" in mistake) == ("replace" in mistake):
            raise FormulaError(
                f"A mistake of {self.spec.get('id')!r} needs a hint and exactly one of formula "
                f"or replace (and no {sorted(unknown)})."
                if unknown
                else f"A mistake of {self.spec.get('id')!r} needs a hint and exactly one of "
                "formula or replace."
            )
        if "formula" in mistake:
            return self.value_of(str(mistake["formula"]))
        env = build_env(self.givens)
        overrides = {}
        for name, text in dict(mistake["replace"]).items():
            if name not in env:
                raise FormulaError(f"A mistake of {self.spec.get('id')!r} replaces {name!r}, "
                                   "which is not a given.")  # fmt: skip
            try:
                overrides[str(name)] = evaluate(str(text), env)
            except NapkinError as error:
                raise FormulaError(
                    f"A mistake of {self.spec.get('id')!r}: {error.message}"
                ) from None
        return self.value_of(str(self.spec["formula"]), overrides)

    def in_unit(self, q: Quantity) -> float:
        return float(q.magnitude / self.scale)

    def rounded(self, x: float) -> float:
        return float(_ROUNDING[self.rounding](x)) if self.rounding else x


@dataclass(frozen=True)
class _Candidate:
    """A wrong answer the checker can name: its value in the quantity's unit, and why."""

    value: float
    hint: str
    kind: str | None


def _unit_slips(judge: _Judge, raw: float, notes: tuple[str, ...]) -> list[_Candidate]:
    """Slips that depend on no question, seen as a ratio to the right answer."""
    dim = judge.dim
    out: list[_Candidate] = []
    if dim[1] != 0:
        thousand = "Off by a factor of 1000: milliseconds versus seconds?"
    elif dim[0] != 0:
        thousand = "Off by a factor of 1000: one unit prefix too many or too few (MB vs GB)?"
    else:
        thousand = "Off by a factor of 1000: check the unit prefixes (k, M, G)."
    out += [_Candidate(raw * f, thousand, "factor-1000") for f in (1000.0, 1 / 1000)]
    k_note = _k_note(notes)
    if k_note:
        hint = f"Off by 1024/1000: {k_note}"
        out += [_Candidate(raw * f, hint, "k-vs-ki") for f in (1 / 1.024, 1.024)]
    if dim[0] != 0:
        # Slips of one prefix per power of 1000 the value spans: KB vs KiB for 56 KiB, up to
        # GB vs GiB for 15.7 GB, never TB vs TiB for it.
        top = max(1, min(4, int(math.log10(max(abs(raw * float(judge.scale)), 1)) // 3)))
        for n in range(1, top + 1):
            hint = (
                f"Off by (1024/1000)^{n} = {1.024**n:.3f}: decimal versus binary units "
                f"({_PREFIX_PAIRS[n]})? The gap grows with each prefix."
            )
            out += [_Candidate(raw * f, hint, "gb-vs-gib") for f in (1.024**n, 1 / 1.024**n)]
        bits = "Off by a factor of 8: bits versus bytes (1 B = 8 bit)?"
        out += [_Candidate(raw * f, bits, "bits-vs-bytes") for f in (8.0, 1 / 8)]
    return out


def _k_note(notes: tuple[str, ...]) -> str | None:
    """The line's note that a k-suffixed count was read as a power of 1000, if any."""
    return next((n for n in notes if " reads as " in n and "Ki." in n), None)


_PREFIX_PAIRS = {1: "KB vs KiB", 2: "MB vs MiB", 3: "GB vs GiB", 4: "TB vs TiB"}


def _input_slips(judge: _Judge, env: Mapping[str, Quantity]) -> list[_Candidate]:
    """One given read with the wrong prefix, binary for decimal or the other way round (24 GB
    taken as 24 GiB): the quantity's formula replayed with that given off by (1024/1000)^n."""
    out: list[_Candidate] = []
    formula = str(judge.spec["formula"])
    for name, q in env.items():
        if q.dim[0] == 0 or name not in judge.givens or _ROUNDED.match(judge.givens[name]):
            continue
        label = judge.labels.get(name)
        named = f"{name} ({label})" if label else name
        for n in (3, 1):
            ratio = Rational(1024**n, 1000**n)
            misread = Quantity(q.magnitude / ratio if q.binary else q.magnitude * ratio, q.dim)
            decimal, binary = _PREFIX_PAIRS[n].split(" vs ")
            given_as, read_as = (binary, decimal) if q.binary else (decimal, binary)
            try:
                wrong = judge.in_unit(judge.value_of(formula, {name: misread}))
            except FormulaError:
                continue
            hint = (
                f"Check the unit of {named}: its value is in {given_as}, and reading it as "
                f"{read_as} moves it by a factor of {1.024**n:.3f}."
            )
            out.append(_Candidate(wrong, hint, "input-unit"))
    return out


def check_quantity(
    quantity_spec: Mapping[str, Any],
    answer_text: str,
    givens: Mapping[str, str],
    *,
    reveal: bool = False,
    worksheet_env: Mapping[str, Quantity] | None = None,
    given_labels: Mapping[str, str] | None = None,
) -> CheckResult:
    """Judge `answer_text` (a napkin-math expression) against one quantity of a question.

    quantity_spec: {id, label, formula, unit, tolerance?, rounding?, mistakes?: [{formula or
    replace, hint, kind?}]}; givens: name -> napkin expression (see givens_from_estimate);
    worksheet_env: the candidate's own worksheet names (they may be used in the answer);
    given_labels: name -> label, quoted when a hint names a given. A bare number is read in
    the quantity's unit ("21.5" for a quantity in ms), and the hint names the unit assumed.

    Raises NapkinError when the answer does not evaluate (the caller shows that error), and
    FormulaError when the authored formula, a mistake or the givens do not.
    """
    unit_text = str(quantity_spec.get("unit") or "")
    try:
        target = parse_units(unit_text) if unit_text else None
    except NapkinError as error:
        raise FormulaError(f"The unit {unit_text!r}: {error.message}") from None
    rounding = quantity_spec.get("rounding")
    if rounding not in (None, *_ROUNDING):
        raise FormulaError(f"Unknown rounding {rounding!r}; use ceil, floor or round.")
    judge = _Judge(
        spec=quantity_spec,
        givens=givens,
        labels=dict(given_labels or {}),
        target=target,
        tolerance=float(quantity_spec.get("tolerance", DEFAULT_TOLERANCE)),
        rounding=rounding,
    )
    env = build_env(givens)
    expected_q = judge.value_of(str(quantity_spec["formula"]))
    if expected_q.dim != judge.dim:
        raise FormulaError(
            f"The formula of {quantity_spec.get('id')!r} gives {describe_dim(expected_q.dim)}, "
            f"but its unit {unit_text!r} is {describe_dim(judge.dim)}."
        )
    raw = judge.in_unit(expected_q)
    expected = judge.rounded(raw)
    mistakes = [(m, judge.mistake_value(m)) for m in quantity_spec.get("mistakes") or []]

    # The candidate's answer, in their worksheet's scope.
    scope = {**env, **(worksheet_env or {})}
    line = parse_line(answer_text)
    answer = evaluate_line(line, scope)
    shown_in(answer, line.target, line.target_pos)  # an impossible `in UNIT` is an error too
    assumed_unit = ""
    if answer.dim == DIMENSIONLESS and judge.dim != DIMENSIONLESS:
        if not _has_units(line.expr, scope):
            answer = Quantity(answer.magnitude * judge.scale, judge.dim, answer.binary)
            # Accepted, but the candidate should see the unit we chose for them: a bare
            # 21.5 is only right because the box asks for ms.
            assumed_unit = (
                f"No unit given, so read in {unit_text}: "
                f"{format_number(judge.in_unit(answer))} {unit_text}."
            )

    def result(
        verdict: str, hint: str, value: float | None, unit: str, kind: str | None = None
    ) -> CheckResult:
        hint = f"{hint} {assumed_unit}".strip()
        return CheckResult(verdict, value, unit, hint, expected if reveal else None, kind)

    if answer.dim != judge.dim:
        # A declared mistake may have another dimension (e.g. tok/s where req/s was asked).
        for mistake, wrong in mistakes:
            if (
                wrong.dim == answer.dim
                and _rel(float(answer.magnitude), float(wrong.magnitude)) <= judge.tolerance
            ):
                value, unit = shown_in(answer)
                return result("known_mistake", str(mistake["hint"]), value, unit,
                              mistake.get("kind"))  # fmt: skip
        value, unit = shown_in(answer)
        example = unit_text or "a plain number"
        return result(
            "wrong_unit",
            f"Expected {describe_dim(judge.dim)} (in {example}); your answer is "
            f"{describe_dim(answer.dim)}.",
            value,
            unit,
        )

    value = judge.in_unit(answer)
    distance = _rel(value, expected)
    if judge.rounding:
        verdict = _judge_count(judge, value, raw, expected, reveal)
        if verdict is not None:
            return result(verdict[0], verdict[1], value, unit_text)
    elif distance <= judge.tolerance:
        # Within tolerance, but a 32k that meant 32,768 still deserves a word.
        k_note = _k_note(line.notes)
        if k_note and _rel(value, raw / 1.024) < distance:
            return result("correct", k_note, value, unit_text, "k-vs-ki")
        return result("correct", "", value, unit_text)

    # Known mistakes: of those within tolerance and nearer than the right answer, the nearest.
    candidates = [
        _Candidate(judge.in_unit(wrong), str(mistake["hint"]), mistake.get("kind"))
        for mistake, wrong in mistakes
        if wrong.dim == judge.dim
    ]
    candidates += _unit_slips(judge, raw, line.notes)
    # A whole answer to a count is the mistaken count exactly or not at all, and says too
    # little to blame one given's unit on it.
    whole_count = bool(judge.rounding) and abs(value - round(value)) < 1e-9
    if not whole_count:
        candidates += _input_slips(judge, env)
    best: tuple[float, _Candidate] | None = None
    for c in candidates:
        for w in {judge.rounded(c.value)} if whole_count else {c.value, judge.rounded(c.value)}:
            gap = _rel(value, w)
            if whole_count and round(value) != w:
                continue
            if _rel(w, raw) > 1e-9 and gap <= judge.tolerance and gap < distance:
                if best is None or gap < best[0] - 1e-12:
                    best = (gap, c)
    if best is not None:
        return result("known_mistake", best[1].hint, value, unit_text, best[1].kind)

    if judge.rounding and abs(value - round(value)) < 1e-9 and distance <= judge.tolerance:
        return result(
            "close",
            "A whole number, but not the one this count comes to; check the inputs you rounded.",
            value,
            unit_text,
        )
    if distance <= 2 * judge.tolerance:
        return result(
            "close",
            f"Close, but more than {judge.tolerance:.0%} off; check the inputs you rounded.",
            value,
            unit_text,
        )
    return result(
        "wrong",
        "Not within tolerance; recheck the formula, its inputs and their units.",
        value,
        unit_text,
    )


def _judge_count(
    judge: _Judge, value: float, raw: float, expected: float, reveal: bool
) -> tuple[str, str] | None:
    """The verdict on an answer to a rounded quantity, when rounding decides it: correct, the
    right value not yet whole, or whole but rounded the other way. None to judge on."""
    whole = abs(value - round(value)) < 1e-9
    if whole and round(value) == round(expected):
        return "correct", ""
    try:
        unrounded = judge.in_unit(
            judge.value_of(str(judge.spec["formula"]), givens=_unrounded(judge.givens))
        )
    except FormulaError:
        unrounded = raw
    words = _ROUNDING_WORDS[judge.rounding or "round"]
    shown = f": {format_number(unrounded)} becomes {format_number(expected)}." if reveal else "."
    if not whole:
        near = _rel(value, raw) <= judge.tolerance or _rel(value, unrounded) <= judge.tolerance
        if not near:
            return None
        # "Right value" only when rounding the answer the required way gives the count: 10.4
        # GPUs rounded up is 11, so 10.4 is not the right value of a count that comes to 10.
        if judge.rounded(value) == expected:
            return "not_rounded", f"Right value, but it must be a whole number, {words}{shown}"
        return (
            "close",
            f"Not a whole number, and {words} {format_number(value)} gives "
            f"{format_number(judge.rounded(value))}, not the count this comes to; check the "
            "value before rounding.",
        )
    for x in {raw, unrounded}:
        if x == round(x):
            continue
        for way, other in (("ceil", math.ceil(x)), ("floor", math.floor(x))):
            if other == round(value) and other != expected:
                went = _ROUNDING_WORDS[way]
                return (
                    "not_rounded",
                    f"Right value, but {went}; this count must be {words}{shown}",
                )
    return None


__all__ = ["VERDICTS", "MISTAKE_KEYS", "CheckResult", "check_quantity", "givens_from_estimate"]
