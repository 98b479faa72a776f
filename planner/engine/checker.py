"""Judge a candidate's napkin-math answer against a question's quantity.

Order of judgement: dimension first, then the relative tolerance, then rounding (a fleet
size is a whole number, rounded up), then known mistakes: the quantity's authored wrong
formulas, then the generic ones (×1000, GB vs GiB, ms vs s, bits vs bytes, K and V, query vs
KV heads, ρ forgotten, mean instead of peak), each named in the hint. The expected value is
only returned when the caller asks for it (after the step was submitted).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sympy import Rational

from .errors import FormulaError, NapkinError
from .evaluator import Quantity
from .parser import (
    BinOp,
    Call,
    Group,
    Name,
    Neg,
    Node,
    Num,
    UnitRef,
    UnitSpec,
    WithUnit,
    parse_line,
    parse_units,
)
from .units import DIMENSIONLESS, describe_dim
from .worksheet import build_env, evaluate, evaluate_line, format_number, shown_in

VERDICTS = ("correct", "close", "wrong_unit", "not_rounded", "known_mistake", "wrong")
DEFAULT_TOLERANCE = 0.05
_ROUNDING = {"ceil": math.ceil, "floor": math.floor, "round": lambda x: math.floor(x + 0.5)}
_ROUNDING_WORDS = {
    "ceil": "rounded up",
    "floor": "rounded down",
    "round": "rounded to the nearest whole number",
}


@dataclass
class CheckResult:
    """verdict: one of VERDICTS; value/unit: the candidate's answer (in the quantity's unit
    when the dimension matches); hint: one or two sentences; expected: the instructor's value
    in `unit`, only when revealed."""

    verdict: str
    value: float | None
    unit: str
    hint: str
    expected: float | None = None

    def as_json(self, reveal: bool = False) -> dict[str, Any]:
        """The `napkin --check --json` object; `expected` only when revealed."""
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "value": self.value,
            "unit": self.unit,
            "hint": self.hint,
        }
        if reveal:
            out["expected"] = self.expected
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


def _labels(estimate_givens: Mapping[str, str], labels: Mapping[str, str] | None) -> dict[str, str]:
    return {name: f"{name} {(labels or {}).get(name, '')}".lower() for name in estimate_givens}


def _has_units(node: Node, env: Mapping[str, Quantity]) -> bool:
    """Whether the candidate wrote any unit (or used a name that carries one)."""
    match node:
        case UnitRef() | WithUnit():
            return True
        case Name(id=name):
            q = env.get(name)
            return q is not None and q.dim != DIMENSIONLESS
        case Group(inner=inner) | Neg(operand=inner):
            return _has_units(inner, env)
        case BinOp(left=left, right=right):
            return _has_units(left, env) or _has_units(right, env)
        case Call(args=args):
            return any(_has_units(a, env) for a in args)
        case Num():
            return False
    return False  # pragma: no cover


def _rel(a: float, b: float) -> float:
    if b == 0:
        return abs(a)
    return abs(a - b) / abs(b)


@dataclass
class _Judge:
    spec: Mapping[str, Any]
    givens: Mapping[str, str]
    labels: dict[str, str]
    target: UnitSpec | None
    tolerance: float
    rounding: str | None

    @property
    def scale(self) -> Rational:
        return self.target.scale if self.target else Rational(1)

    @property
    def dim(self) -> tuple:
        return self.target.dim if self.target else DIMENSIONLESS

    def value_of(self, formula: str, overrides: Mapping[str, Quantity] | None = None) -> Quantity:
        env = build_env(self.givens, overrides)
        try:
            return evaluate(formula, env)
        except NapkinError as error:
            raise FormulaError(
                f"The formula {formula!r} of {self.spec.get('id')!r}: {error.message}"
            ) from None

    def in_unit(self, q: Quantity) -> float:
        return float(q.magnitude / self.scale)

    def rounded(self, x: float) -> float:
        return float(_ROUNDING[self.rounding](x)) if self.rounding else x


def _find_given(labels: Mapping[str, str], *wanted: str, avoid: tuple[str, ...] = ()) -> str | None:
    for name, text in labels.items():
        if all(w in text for w in wanted) and not any(a in text for a in avoid):
            return name
    return None


def _generic_replays(judge: _Judge, env: Mapping[str, Quantity]) -> list[tuple[dict, str]]:
    """Mistakes replayed on the givens: (overrides, hint)."""
    replays: list[tuple[dict, str]] = []
    labels = judge.labels
    rho = next((n for n in labels if n.lower() in ("rho", "ρ")), None) or _find_given(
        labels, "utili", "target"
    )
    if rho and rho in env:
        replays.append(
            (
                {rho: Quantity(Rational(1))},
                "You left out the utilisation target ρ: a fleet sized at 100% busy has no "
                "room for bursts; divide by ρ as well.",
            )
        )
    peak = _find_given(labels, "peak")
    means = [
        name
        for name, text in labels.items()
        if any(word in text for word in ("mean", "average", "avg"))
        and peak in env
        and name in env
        and env[name].dim == env[peak].dim
    ]
    if peak and means:
        replays.append(
            (
                {peak: env[means[0]]},
                "That is sized for the mean traffic; capacity has to cover the peak QPS.",
            )
        )
    kv_heads = _find_given(labels, "kv", "head")
    q_heads = _find_given(labels, "head", avoid=("kv", "dim", "size")) if kv_heads else None
    if kv_heads and q_heads and kv_heads in env and q_heads in env:
        replays.append(
            (
                {kv_heads: env[q_heads]},
                "You used the query heads; only the KV heads are cached (GQA: 4 KV heads for "
                "28 query heads in Qwen2.5-7B).",
            )
        )
    return replays


def _generic_factors(
    dim: tuple, env: Mapping[str, Quantity], labels: Mapping[str, str]
) -> list[tuple[float, str]]:
    """Mistakes seen as a ratio to the right answer: (factor, hint)."""
    factors: list[tuple[float, str]] = []
    if dim[1] != 0:
        thousand = "Off by a factor of 1000: milliseconds versus seconds?"
    elif dim[0] != 0:
        thousand = "Off by a factor of 1000: one unit prefix too many or too few (MB vs GB)?"
    else:
        thousand = "Off by a factor of 1000: check the unit prefixes (k, M, G)."
    factors += [(1000.0, thousand), (1 / 1000, thousand)]
    if dim[0] != 0:
        for n in (1, 2, 3, 4):
            hint = (
                f"Off by (1024/1000)^{n}: GB versus GiB? 1 GiB is 1.074 GB, and the gap grows "
                "with each prefix."
            )
            factors += [(1.024**n, hint), (1 / 1.024**n, hint)]
        bits = "Off by a factor of 8: bits versus bytes (1 B = 8 bit)?"
        factors += [(8.0, bits), (1 / 8, bits)]
        two = "Off by a factor of 2: both K and V are cached (and BF16 takes 2 bytes)."
        factors += [(2.0, two), (0.5, two)]
    if dim[0] == 0:
        return factors
    # The GQA ratio: KV bytes computed with the query heads come out this many times too big.
    gqa = 7.0
    kv_heads = _find_given(labels, "kv", "head")
    q_heads = _find_given(labels, "head", avoid=("kv", "dim", "size"))
    if kv_heads in env and q_heads in env and float(env[kv_heads].magnitude):
        gqa = float(env[q_heads].magnitude / env[kv_heads].magnitude) or 7.0
    heads = (
        f"Off by a factor of {format_number(gqa)}: query heads instead of KV heads? Only the "
        "KV heads are cached."
    )
    factors += [(gqa, heads), (1 / gqa, heads)]
    return factors


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

    quantity_spec: {id, label, formula, unit, tolerance?, rounding?, mistakes?: [{formula,
    hint}]}; givens: name -> napkin expression (see givens_from_estimate); worksheet_env:
    the candidate's own worksheet names (they may be used in the answer); given_labels: name
    -> label, which lets the checker recognise ρ, peak/mean QPS and query/KV heads by meaning.
    A bare number is read in the quantity's unit ("21.5" for a quantity in ms).

    Raises NapkinError when the answer does not evaluate (the caller shows that error), and
    FormulaError when the authored formula or givens do not.
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
        labels=_labels(givens, given_labels),
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

    # The candidate's answer, in their worksheet's scope.
    scope = {**env, **(worksheet_env or {})}
    line = parse_line(answer_text)
    answer = evaluate_line(line, scope)
    shown_in(answer, line.target, line.target_pos)  # an impossible `in UNIT` is an error too
    if answer.dim == DIMENSIONLESS and judge.dim != DIMENSIONLESS:
        if not _has_units(line.expr, scope):
            answer = Quantity(answer.magnitude * judge.scale, judge.dim, answer.binary)

    def result(verdict: str, hint: str, value: float | None, unit: str) -> CheckResult:
        return CheckResult(verdict, value, unit, hint, expected if reveal else None)

    if answer.dim != judge.dim:
        # An authored mistake may have another dimension (e.g. tok/s where req/s was asked).
        for mistake in quantity_spec.get("mistakes") or []:
            wrong = judge.value_of(str(mistake["formula"]))
            if (
                wrong.dim == answer.dim
                and _rel(float(answer.magnitude), float(wrong.magnitude)) <= judge.tolerance
            ):
                value, unit = shown_in(answer)
                return result("known_mistake", str(mistake["hint"]), value, unit)
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
        whole = abs(value - round(value)) < 1e-9
        if whole and round(value) == round(expected):
            return result("correct", "", value, unit_text)
        if _rel(value, raw) <= judge.tolerance or (whole and abs(value - raw) < 1):
            return result(
                "not_rounded",
                f"Right value, but it must be a whole number, "
                f"{_ROUNDING_WORDS[judge.rounding]}: {format_number(raw)} becomes "
                f"{format_number(expected)}."
                if reveal
                else f"Right value, but it must be a whole number, "
                f"{_ROUNDING_WORDS[judge.rounding]}.",
                value,
                unit_text,
            )
    elif distance <= judge.tolerance:
        return result("correct", "", value, unit_text)

    # Known mistakes: a match that is closer than the right answer is.
    def matches(wrong_value: float) -> bool:
        gap = _rel(value, wrong_value)
        return gap <= judge.tolerance and gap < distance

    for mistake in quantity_spec.get("mistakes") or []:
        wrong = judge.value_of(str(mistake["formula"]))
        if wrong.dim == judge.dim:
            w = judge.in_unit(wrong)
            if matches(w) or matches(judge.rounded(w)):
                return result("known_mistake", str(mistake["hint"]), value, unit_text)
    for overrides, hint in _generic_replays(judge, env):
        w = judge.in_unit(judge.value_of(str(quantity_spec["formula"]), overrides))
        if _rel(w, raw) > 1e-9 and (matches(w) or matches(judge.rounded(w))):
            return result("known_mistake", hint, value, unit_text)
    for factor, hint in _generic_factors(judge.dim, env, judge.labels):
        w = raw * factor
        if matches(w) or matches(judge.rounded(w)):
            return result("known_mistake", hint, value, unit_text)

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
