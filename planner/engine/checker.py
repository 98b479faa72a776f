"""Judge a candidate's napkin-math answer against a question's quantity.

Order of judgement: dimension first, then the relative tolerance, then rounding (a count is a
whole number, rounded the way the quantity says, and the hint says which way the answer went),
then known mistakes, the nearest one winning: the quantity's own `mistakes:` from the question
file, and the slips that depend on no question (a factor of 1000, GB vs GiB to the right power,
bits vs bytes, 32k read as 32,000, one given read in GB where it is GiB or the other way). The
engine knows nothing about any one question: every mistake that needs its meaning is declared
in the file. The expected value is only returned when the caller asks for it (after the step
was submitted).

Two slips can offset each other (24 GB for the driver's 23.65 GiB, and no reserve), so a value
within tolerance is also read for its inputs: the givens the answer uses (through the
candidate's worksheet lines when the caller passes them, and numbers written out for a given),
and the numbers it writes that stand for none. A declared mistake whose inputs differ from the
formula's (a given dropped, another given or a number put in) is named when the answer shows
that same difference, even though the value is in tolerance.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sympy import Rational

from .errors import FormulaError, NapkinError
from .evaluator import Evaluator, Quantity
from .parser import (
    BinOp,
    Call,
    Group,
    Name,
    Node,
    Num,
    UnitRef,
    UnitSpec,
    WithUnit,
    children,
    parse_line,
    parse_units,
    walk,
)
from .units import (
    DIMENSIONLESS,
    MONEY,
    REQUESTS,
    TOKENS,
    UNITS,
    Dim,
    describe_dim,
    dim_div,
    dim_mul,
)
from .worksheet import build_env, evaluate, evaluate_line, format_number, shown_in

VERDICTS = ("correct", "close", "wrong_unit", "not_rounded", "known_mistake", "wrong")
# Each verdict as the pages name it to the candidate: the one list every page uses.
VERDICT_LABELS = {
    "correct": "Correct",
    "close": "Close",
    "wrong_unit": "Wrong unit",
    "not_rounded": "Round it",
    "known_mistake": "A known slip",
    "wrong": "Not right yet",
}
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


def _per_money(dim: Dim) -> bool:
    """Whether `dim` is money per something (USD/Mtok, USD/h, USD/req): money once above the
    line, and only below it besides."""
    per = dim_div(dim, MONEY)
    return dim[-1] == 1 and per != DIMENSIONLESS and max(per) <= 0  # money is the last axis


def _money_alone(
    node: Node,
    env: Mapping[str, Quantity],
    defined: Mapping[str, Node] | None = None,
    seen: frozenset[str] = frozenset(),
) -> bool:
    """Whether the only units the candidate wrote are amounts of money ($1.32, 1.32 USD): no
    other unit, and no name that carries one. A name worth an amount of money (`c = $2.5*8/4.7`
    on the worksheet) counts as the money it stands for; where its worksheet line is known
    (`defined`), that line is read the same way, so `bill = $10/h * 1 h` is no price."""
    for part in walk(node):
        if isinstance(part, UnitRef | WithUnit) and part.unit.dim != MONEY:
            return False
        if not isinstance(part, Name) or part.id not in env:
            continue
        dim = env[part.id].dim
        if dim == DIMENSIONLESS:
            continue
        if dim != MONEY:
            return False
        if defined and part.id in defined and part.id not in seen:
            if not _money_alone(defined[part.id], env, defined, seen | {part.id}):
                return False
    return True


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
    """A wrong answer the checker can name: its value in the quantity's unit, and why.
    `declared`: a mistake from the question file, matched within the quantity's tolerance;
    a slip of the engine's own is matched more tightly (see _slip_window)."""

    value: float
    hint: str
    kind: str | None
    declared: bool = False


# How near an answer must be to a slip of the engine's own, as a share of the slip's distance
# from the right value (and never wider than the quantity's tolerance): a slip of 1.024 (KB vs
# KiB) claims answers 1.018 to 1.030 times the right one, so an answer 1.6% off under a 1%
# tolerance is told it is close, not that it is off by 1.024.
_SLIP_SHARE = 0.25


def _slip_window(judge: _Judge, c: _Candidate, raw: float) -> float:
    """The largest relative gap at which an answer matches candidate `c`."""
    if c.declared:
        return judge.tolerance
    return min(judge.tolerance, _SLIP_SHARE * _rel(c.value, raw))


def _unit_slips(
    judge: _Judge, raw: float, notes: tuple[str, ...], *, bare: bool = False
) -> list[_Candidate]:
    """Slips that depend on no question, seen as a ratio to the right answer (`bare`: the
    answer is a number with no unit, read in the box's)."""
    dim = judge.dim
    out: list[_Candidate] = []
    if dim[1] != 0:
        thousand = "Off by a factor of 1000: milliseconds versus seconds?"
        out += [_Candidate(raw * f, thousand, "factor-1000") for f in (1000.0, 1 / 1000)]
    elif dim[0] == 1:
        # The hint names the step the answer shows, from the expected value's own prefix:
        # 64 MB for 64 KB reads "MB for KB", 64 KB for 64 MB "KB for MB".
        out += _prefix_slips(judge, raw, 1000, "factor-1000", bare=bare)
    elif dim[0] != 0:
        thousand = "Off by a factor of 1000: one unit prefix too many or too few (MB vs GB)?"
        out += [_Candidate(raw * f, thousand, "factor-1000") for f in (1000.0, 1 / 1000)]
    else:
        thousand = "Off by a factor of 1000: check the unit prefixes (k, M, G)."
        out += [_Candidate(raw * f, thousand, "factor-1000") for f in (1000.0, 1 / 1000)]
    if dim[0] == 1:
        # A binary prefix one step off (64 MiB for 64 KiB) is 1024 away, 2.4% from the factor
        # of 1000: under a tight tolerance only its own candidate catches it.
        out += _prefix_slips(judge, raw, 1024, "factor-1024", bare=bare)
    k_note = _k_note(notes)
    if k_note:
        hint = f"Off by 1024/1000: {k_note}"
        out += [_Candidate(raw * f, hint, "k-vs-ki") for f in (1 / 1.024, 1.024)]
    if dim[0] != 0:
        # Slips of one prefix per power of 1000 the value spans: KB vs KiB for 56 KiB, up to
        # GB vs GiB for 15.7 GB, never TB vs TiB for it.
        top = max(1, min(4, int(math.log10(max(abs(raw * float(judge.scale)), 1)) // 3)))
        for n in range(1, top + 1):
            if n < top and 1.024**n - 1 <= 2 * judge.tolerance:
                # A smaller prefix's slip than the value's own (KB vs KiB inside a GB figure)
                # needs a chain of conversions; where it lands in the "close" band (1.024
                # under a 2% tolerance) it is no likelier than rounding, and is told close.
                continue
            hint = (
                f"Off by (1024/1000)^{n} = {1.024**n:.3f}: decimal versus binary units "
                f"({_PREFIX_PAIRS[n]})? The gap grows with each prefix."
            )
            out += [_Candidate(raw * f, hint, "gb-vs-gib") for f in (1.024**n, 1 / 1.024**n)]
        bits = "Off by a factor of 8: bits versus bytes (1 B = 8 bit)?"
        out += [_Candidate(raw * f, bits, "bits-vs-bytes") for f in (8.0, 1 / 8)]
    return out


_PREFIX_LADDERS = {
    1000: ("B", "KB", "MB", "GB", "TB", "PB"),
    1024: ("B", "KiB", "MiB", "GiB", "TiB", "PiB"),
}


def _prefix_slips(
    judge: _Judge, raw: float, base: int, kind: str, *, bare: bool = False
) -> list[_Candidate]:
    """The answers one prefix step of `base` off, too large then too small, each hint naming
    the step. A bare number `base` times too large was counted in the prefix below the box's
    (131072 in a KiB box: bytes), where a written unit that large is the prefix above (64 MiB
    for 64 KiB)."""
    return [
        _Candidate(raw * f, _prefix_step(judge, raw, base, (f > 1) != bare), kind)
        for f in (float(base), 1 / base)
    ]


def _prefix_step(judge: _Judge, raw: float, base: int, up: bool) -> str:
    """The hint for an answer `base` times too large (`up`) or too small: one prefix step off,
    named from the prefix the expected value reads in (MiB for KiB where 64 KiB is expected)."""
    ladder = _PREFIX_LADDERS[base]
    # The byte part of the value in bytes; a quantity per token or per second is read per one.
    size = max(abs(raw * float(judge.scale)), 1.0)
    at = min(len(ladder) - 1, int(math.log(size, base) + 1e-9))
    to = at + 1 if up else at - 1
    step = f" ({ladder[to]} for {ladder[at]}?)" if 0 <= to < len(ladder) else "?"
    return f"Off by a factor of {base}: one prefix step off{step}"


def _k_note(notes: tuple[str, ...]) -> str | None:
    """The line's note that a k-suffixed count was read as a power of 1000, if any."""
    return next((n for n in notes if " reads as " in n and "Ki." in n), None)


# The byte units with a prefix, each with its power of 1000 or 1024 and its counterpart of
# the other kind: GB -> (3, GiB), KiB -> (1, KB).
_PREFIXED_BYTES = {
    **{f"{p}B": (i, f"{p}iB") for i, p in enumerate("KMGTP", start=1)},
    **{f"{p}iB": (i, f"{p}B") for i, p in enumerate("KMGTP", start=1)},
}
_PREFIX_PAIRS = {n: f"{d} vs {b}" for d, (n, b) in _PREFIXED_BYTES.items() if "i" not in d}


@dataclass(frozen=True)
class _Prefixed:
    """A prefixed byte unit a given is written with: the unit text as written (GB/s) and with
    the prefix of the other kind (GiB/s), the prefix's power n of 1000 or 1024, and the factor
    the given's value takes when read as the other kind."""

    written: str
    swapped: str
    n: int
    factor: Rational


def _written_prefixes(text: str) -> list[_Prefixed]:
    """The prefixed byte units a given is written with, where it is one number with its unit:
    `24 GiB` has GiB, `1008 GB/s` GB, `2 B` none. A given computed from other names, or a sum
    or quotient of terms (`24 GiB + 512 MiB`), has no one unit whose misreading scales it."""
    try:
        node = parse_line(text).expr
    except NapkinError:
        return []
    if not isinstance(node, WithUnit) or any(isinstance(p, Name) for p in walk(node)):
        return []
    out = []
    for written, power in node.unit.factors:
        unit = UNITS.get(written)
        if unit is None or unit.name not in _PREFIXED_BYTES:
            continue
        n, other = _PREFIXED_BYTES[unit.name]
        swapped = re.sub(rf"(?<![A-Za-z]){re.escape(written)}(?![A-Za-z])", other, node.unit.text)
        # Once per power of the unit: per GB (a power of -1) divides by the step instead,
        # and GB^2 takes it twice.
        factor = (UNITS[other].scale / unit.scale) ** power
        out.append(_Prefixed(node.unit.text, swapped, n * abs(power), factor))
    return out


def _input_slips(judge: _Judge, env: Mapping[str, Quantity]) -> list[_Candidate]:
    """One given read with the wrong prefix, binary for decimal or the other way round (24 GB
    taken as 24 GiB): the quantity's formula replayed with that given off by (1024/1000)^n,
    where n is the prefix's power the given is written with (3 for GB or GiB, 6 for GB^2). A
    given written with no prefix (`2 B`) has none to misread."""
    out: list[_Candidate] = []
    formula = str(judge.spec["formula"])
    for name, q in env.items():
        if q.dim[0] == 0 or name not in judge.givens or _ROUNDED.match(judge.givens[name]):
            continue
        label = judge.labels.get(name)
        named = f"{name} ({label})" if label else name
        for unit in _written_prefixes(judge.givens[name]):
            misread = Quantity(q.magnitude * unit.factor, q.dim)
            try:
                wrong = judge.in_unit(judge.value_of(formula, {name: misread}))
            except FormulaError:
                continue
            hint = (
                f"Check the unit of {named}: its value is in {unit.written}, and reading it as "
                f"{unit.swapped} moves it by a factor of {1.024**unit.n:.3f}."
            )
            out.append(_Candidate(wrong, hint, "input-unit"))
    return out


# How near a number written out must be to a given's value to stand for it: 25.4 GB and 24 GiB
# stand for the driver's 23.65 GiB, the datasheet's 24 GB (5% off) does not.
_STANDS_FOR = 0.02


@dataclass
class _Inputs:
    """What a formula or an answer is computed from: the givens it reads, directly, through
    an earlier quantity or a worksheet line, or as a number with a unit written out for one;
    the givens a plain number may stand for (a bare 4 may be any given written as 4: it can
    clear a given of being left out, never show that one was put in); and the numbers with a
    unit that stand for no given (24 GB)."""

    names: set[str] = field(default_factory=set)
    maybe: set[str] = field(default_factory=set)
    literals: list[Quantity] = field(default_factory=list)


def _near(a: Quantity, b: Quantity) -> bool:
    return a.dim == b.dim and _rel(float(a.magnitude), float(b.magnitude)) <= _STANDS_FOR


def _holds(literals: Sequence[Quantity], q: Quantity) -> bool:
    return any(_near(q, other) for other in literals)


def _is_literal(node: Node) -> bool:
    """A number as written, with its unit: 24 GB, 0.9, $2.5/h (never a name)."""
    if isinstance(node, Num):
        return True
    if isinstance(node, WithUnit):
        return not any(isinstance(part, Name) for part in walk(node.operand))
    if isinstance(node, Group):
        return _is_literal(node.inner)
    if isinstance(node, BinOp) and node.op in "*/":
        left, right = node.left, node.right
        return (isinstance(right, UnitRef) and _is_literal(left)) or (
            isinstance(left, UnitRef) and _is_literal(right)
        )
    return False


class _Opaque(Exception):
    """The answer uses a worksheet name whose line the checker cannot see."""


@dataclass
class _InputReader:
    givens: Mapping[str, str]
    env: Mapping[str, Quantity]  # the givens' values
    lines: Mapping[str, Node]  # the candidate's worksheet definitions, name -> expression
    hidden: frozenset[str]  # worksheet names defined where the checker cannot see

    def __post_init__(self) -> None:
        self._written = {name: self._written_number(text) for name, text in self.givens.items()}

    @staticmethod
    def _written_number(text: str) -> float | None:
        """The number a given is written with (50 for 50 QPS), so a bare 50 stands for it."""
        try:
            node = parse_line(text).expr
        except NapkinError:
            return None
        if isinstance(node, WithUnit) and isinstance(node.operand, Num):
            return float(node.operand.value)
        return float(node.value) if isinstance(node, Num) else None

    def stands_for(self, q: Quantity) -> set[str]:
        """The givens a number written out may stand for."""
        out = set()
        for name, value in self.env.items():
            written = self._written.get(name)
            if _near(q, value) or (
                q.dim == DIMENSIONLESS
                and written
                and _rel(float(q.magnitude), written) <= _STANDS_FOR
            ):
                out.add(name)
        return out

    def read(
        self, node: Node, overrides: Mapping[str, str] | None = None, candidate: bool = False
    ) -> _Inputs:
        """The inputs of an expression; `overrides` replace givens (a `replace` mistake),
        `candidate` lets the candidate's worksheet lines define names. Raises _Opaque."""
        out = _Inputs()
        self._read(node, dict(overrides or {}), candidate, out, ())
        return out

    def _read(
        self,
        node: Node,
        overrides: dict[str, str],
        candidate: bool,
        out: _Inputs,
        seen: tuple[str, ...],
    ) -> None:
        if _is_literal(node):
            try:
                q = Evaluator({}).eval(node)
            except NapkinError:
                return
            if q.magnitude == 0:
                return  # a zero is something left out (`reserve: 0 B`), not an input
            named = self.stands_for(q)
            if q.dim == DIMENSIONLESS:
                # A bare 2 or 1 says little: at most which givens it may stand for.
                weak = _Inputs()
                for name in named:
                    self._name(name, {}, False, weak, seen)
                out.maybe |= weak.names | weak.maybe
                return
            for name in named:
                self._name(name, {}, False, out, seen)
            if not named:
                out.literals.append(q)
            return
        if isinstance(node, Name):
            self._name(node.id, overrides, candidate, out, seen)
            return
        for child in children(node):
            self._read(child, overrides, candidate, out, seen)

    def _name(
        self,
        name: str,
        overrides: dict[str, str],
        candidate: bool,
        out: _Inputs,
        seen: tuple[str, ...],
    ) -> None:
        if name in seen:
            if candidate:
                raise _Opaque(name)  # `x = x * 2`: the earlier x is out of sight
            return
        if name in overrides:
            self._read(parse_line(overrides[name]).expr, overrides, False, out, (*seen, name))
            return
        if candidate and name in self.hidden:
            raise _Opaque(name)
        if candidate and name in self.lines:
            self._read(self.lines[name], overrides, True, out, (*seen, name))
            return
        out.names.add(name)
        text = self.givens.get(name)
        if text is None:
            return
        node = parse_line(text).expr
        if any(isinstance(part, Name) for part in walk(node)):
            # An earlier quantity: its own inputs count too.
            self._read(node, overrides, False, out, (*seen, name))

    def leaves(self, names: set[str]) -> list[str]:
        """The given names among `names` that are written as values, not formulas."""
        return sorted(
            n
            for n in names
            if n in self.givens
            and not any(isinstance(p, Name) for p in walk(parse_line(self.givens[n]).expr))
        )


def _worksheet_definitions(
    lines: Sequence[str] | None, env_names: set[str]
) -> tuple[dict[str, Node], frozenset[str]]:
    """The candidate's `name = EXPR` lines that gave a value (the last one of a name wins, as
    in the worksheet), and the worksheet names whose definition the checker cannot read."""
    defined: dict[str, Node] = {}
    for text in lines or ():
        if not text.split("#", 1)[0].strip():
            continue
        try:
            line = parse_line(text)
        except NapkinError:
            continue
        if line.name and line.name in env_names:
            defined[line.name] = line.expr
    return defined, frozenset(env_names - set(defined))


def _structural_mistake(
    judge: _Judge,
    mistakes: Sequence[Mapping[str, Any]],
    answer: Node,
    reader: _InputReader,
) -> tuple[str, str | None] | None:
    """The declared mistake whose change of inputs the answer shows, with its hint (and the
    givens the answer also leaves out), or None. Only a positive sign counts (a given or a
    number the mistake puts in), or, for a mistake that only drops givens, an answer that
    names every other input: a bare number shows no structure at all."""
    try:
        seen = reader.read(answer, candidate=True)
    except _Opaque:
        return None
    used = seen.names | seen.maybe
    formula = parse_line(str(judge.spec["formula"])).expr
    right = reader.read(formula)
    best: tuple[int, Mapping[str, Any], _Inputs] | None = None
    for mistake in mistakes:
        if "formula" in mistake:
            wrong = reader.read(parse_line(str(mistake["formula"])).expr)
        else:
            replace = {str(k): str(v) for k, v in dict(mistake["replace"]).items()}
            wrong = reader.read(formula, overrides=replace)
        dropped = right.names - wrong.names
        put_in = wrong.names - right.names
        new_numbers = [q for q in wrong.literals if not _holds(right.literals, q)]
        lost_numbers = [q for q in right.literals if not _holds(wrong.literals, q)]
        if not (dropped or put_in or new_numbers or lost_numbers):
            continue  # the same inputs, combined otherwise: only the value can tell
        if dropped & used or any(_holds(seen.literals, q) for q in lost_numbers):
            continue
        if not put_in <= seen.names or not all(_holds(seen.literals, q) for q in new_numbers):
            continue
        if not (put_in or new_numbers) and not wrong.names <= used:
            continue
        strength = len(dropped) + len(put_in) + len(new_numbers) + len(lost_numbers)
        if best is None or strength > best[0]:
            best = (strength, mistake, wrong)
    if best is None:
        return None
    _, mistake, wrong = best
    also = reader.leaves(wrong.names - used)
    if also:
        named = ", ".join(f"{n} ({judge.labels[n]})" if n in judge.labels else n for n in also)
        more = (
            f"It also does not use {named}; the slips offset each other, so only the value "
            "looks right."
        )
    else:
        more = "The value lands in tolerance only because another slip offsets this one."
    return f"{mistake['hint']} {more}", mistake.get("kind")


def _count_apart(have: Dim, want: Dim) -> str | None:
    """The count ("tokens" or "requests") by which `have` differs from `want`, once, above or
    below the line; None when they differ otherwise."""
    for count, name in ((TOKENS, "tokens"), (REQUESTS, "requests")):
        if have in (dim_div(want, count), dim_mul(want, count)):
            return name
    return None


def check_quantity(
    quantity_spec: Mapping[str, Any],
    answer_text: str,
    givens: Mapping[str, str],
    *,
    reveal: bool = False,
    worksheet_env: Mapping[str, Quantity] | None = None,
    given_labels: Mapping[str, str] | None = None,
    worksheet_lines: Sequence[str] | None = None,
) -> CheckResult:
    """Judge `answer_text` (a napkin-math expression) against one quantity of a question.

    quantity_spec: {id, label, formula, unit, tolerance?, rounding?, mistakes?: [{formula or
    replace, hint, kind?}]}; givens: name -> napkin expression (see givens_from_estimate);
    worksheet_env: the candidate's own worksheet names (they may be used in the answer);
    given_labels: name -> label, quoted when a hint names a given; worksheet_lines: the
    worksheet as typed, so an answer that uses a worksheet name is read for the inputs of its
    line (without them, such an answer is judged on its value alone). A bare number is read in
    the quantity's unit ("21.5" for a quantity in ms), and so is an amount of money alone where
    the unit is money per something ("$1.32" for USD/Mtok, or a worksheet name worth it); the
    hint names the unit assumed, and a known mistake worth money alone is read the same way.

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
    money_read = False  # whether a plain amount of money was read per the box's unit
    if answer.dim == DIMENSIONLESS and judge.dim != DIMENSIONLESS:
        if not _has_units(line.expr, scope):
            answer = Quantity(answer.magnitude * judge.scale, judge.dim, answer.binary)
            # Accepted, but the candidate should see the unit we chose for them: a bare
            # 21.5 is only right because the box asks for ms.
            assumed_unit = (
                f"No unit given, so read in {unit_text}: "
                f"{format_number(judge.in_unit(answer))} {unit_text}."
            )
    elif (
        answer.dim == MONEY
        and _per_money(judge.dim)
        and _money_alone(
            line.expr,
            scope,
            _worksheet_definitions(worksheet_lines, set(worksheet_env or {}))[0],
        )
    ):
        # `$1.32` in a box of USD/Mtok: a price with its "per" left off, read per the box's
        # unit as a bare 1.32 would be (reading it per token instead would make it 1.32e6).
        answer = Quantity(answer.magnitude * judge.scale, judge.dim, answer.binary)
        money_read = True
        assumed_unit = (
            f"USD with no per unit, so read in {unit_text}: "
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
        count = _count_apart(answer.dim, judge.dim)
        if count is not None:
            # `15.2 ms/tok` for a TPOT asked in ms, `128 KiB/tok` for KV bytes per token asked
            # in KiB, `2.9 /s` for req/s: the same quantity with its count written out (or
            # left off). Tokens and requests count 1 each, so the value reads across as it is.
            value, unit = shown_in(answer)
            assumed_unit = (
                f"{assumed_unit} Your {format_number(value)} {unit} is read as "
                f"{format_number(judge.in_unit(Quantity(answer.magnitude, judge.dim)))} "
                f"{unit_text or '(a count)'}, the unit asked for: {count} count as 1 here."
            ).strip()
            if count == "requests":
                # The box reads the number asked for; the worksheet's arithmetic keeps requests
                # as a unit, so the same value needs its request written out to be added there.
                assumed_unit += (
                    " On the worksheet requests stay a unit: write the 1 req out (× 1 req or "
                    "/ 1 req) to use this value beside the others."
                )
            answer = Quantity(answer.magnitude, judge.dim, answer.binary)
    if answer.dim != judge.dim:
        value, unit = shown_in(answer)
        example = f" (in {unit_text})" if unit_text else ""  # a count has no unit to name
        return result(
            "wrong_unit",
            f"Expected {describe_dim(judge.dim)}{example}; your answer is "
            f"{describe_dim(answer.dim)}.",
            value,
            unit,
        )

    value = judge.in_unit(answer)
    distance = _rel(value, expected)

    def offset_slips() -> CheckResult | None:
        """A value in tolerance whose inputs show a declared mistake (see the module)."""
        if not mistakes or money_read:
            # Money read per the box's unit ($93.6 / 1100 for USD/Mtok) is not the formula's
            # quantities over its inputs: reading its inputs for a slip would find one that is
            # not there (the per-Mtok reading itself looks like a dropped token count).
            return None
        inner = line.expr
        if judge.rounding and isinstance(inner, Call) and inner.func in _ROUNDING:
            inner = inner.args[0]
        try:
            exact = judge.in_unit(Evaluator(dict(scope)).eval(inner))
        except NapkinError:
            return None
        if _rel(exact, raw) < 1e-9:
            return None  # the right value to the last digit: a derivation of its own
        defined, hidden = _worksheet_definitions(worksheet_lines, set(worksheet_env or {}))
        reader = _InputReader(givens, env, defined, hidden)
        found = _structural_mistake(judge, [m for m, _ in mistakes], line.expr, reader)
        if found is None:
            return None
        return result("known_mistake", found[0], value, unit_text, found[1])

    # The rounding the answer shows and the value it rounds (in the quantity's unit), if any;
    # and the value the count comes from before any earlier quantity was rounded.
    rounded_from: tuple[str, float] | None = None
    unrounded = raw
    if judge.rounding:
        unrounded = _value_before_rounding(judge, raw)
        own = _own_rounding(line.expr, worksheet_lines, set(worksheet_env or {}))
        if own is not None:
            try:
                inner_q = Evaluator(dict(scope)).eval(own[1])
            except NapkinError:
                inner_q = None
            if inner_q is not None and inner_q.dim == judge.dim:
                rounded_from = (own[0], judge.in_unit(inner_q))
        rounded_right = (
            rounded_from is not None
            and rounded_from[0] == judge.rounding
            and judge.rounded(rounded_from[1]) == value
        )
        verdict = _judge_count(
            judge, value, raw, unrounded, expected, reveal, rounded_right, rounded_from
        )
        if verdict is not None and verdict[0] == "correct":
            return offset_slips() or result("correct", verdict[1], value, unit_text)
        if verdict is not None:
            return result(verdict[0], verdict[1], value, unit_text)
    elif distance <= judge.tolerance:
        slips = offset_slips()
        if slips is not None:
            return slips
        # Within tolerance, but a 32k that meant 32,768 still deserves a word.
        k_note = _k_note(line.notes)
        if k_note and _rel(value, raw / 1.024) < distance:
            return result("correct", k_note, value, unit_text, "k-vs-ki")
        return result("correct", "", value, unit_text)

    # Known mistakes: of those within their window (see _slip_window) and nearer than the right
    # answer, the nearest.
    candidates = [
        _Candidate(judge.in_unit(wrong), str(mistake["hint"]), mistake.get("kind"), True)
        for mistake, wrong in mistakes
        if wrong.dim == judge.dim
    ]
    if money_read:
        # The answer was money read per the box's unit; a mistake worth money alone (an hour's
        # bill where the price per Mtok was asked) is read the same way, so the two compare
        # as the candidate meant them.
        candidates += [
            _Candidate(float(wrong.magnitude), str(mistake["hint"]), mistake.get("kind"), True)
            for mistake, wrong in mistakes
            if wrong.dim == MONEY
        ]
    candidates += _unit_slips(judge, raw, line.notes, bare=bool(assumed_unit) and not money_read)
    # A whole answer to a count is the mistaken count exactly or not at all, and says too
    # little to blame one given's unit on it.
    whole_count = bool(judge.rounding) and abs(value - round(value)) < 1e-9
    if not whole_count:
        candidates += _input_slips(judge, env)
    elif (
        rounded_from is None
        and not reveal
        and _rounded_the_other_way(value, raw, unrounded, expected)
    ):
        # A bare count one rounding away, before the count may be named: told as any number
        # that far off is. A known mistake it only happens to equal (small counts often do)
        # would blame the wrong cause, and a word on rounding would point at the count.
        candidates = []
    best: tuple[float, _Candidate] | None = None
    for c in candidates:
        for w in {judge.rounded(c.value)} if whole_count else {c.value, judge.rounded(c.value)}:
            gap = _rel(value, w)
            if whole_count and round(value) != w:
                continue
            window = _slip_window(judge, c, raw)
            if _rel(w, raw) > 1e-9 and gap <= window and gap < distance:
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


def _own_rounding(
    expr: Node, lines: Sequence[str] | None, names: set[str]
) -> tuple[str, Node] | None:
    """The rounding the answer applies itself and the expression it rounds: `floor(x)`, or a
    worksheet name whose line is `n = floor(x)` (the last line of that name). None when the
    answer rounds nothing the checker can see."""
    defined, _hidden = _worksheet_definitions(lines, names)
    seen: set[str] = set()
    while isinstance(expr, Name | Group) and not (isinstance(expr, Name) and expr.id in seen):
        if isinstance(expr, Group):
            expr = expr.inner
            continue
        if expr.id not in defined:
            return None
        seen.add(expr.id)
        expr = defined[expr.id]
    if isinstance(expr, Call) and expr.func in _ROUNDING and len(expr.args) == 1:
        return expr.func, expr.args[0]
    return None


def _judge_count(
    judge: _Judge,
    value: float,
    raw: float,
    unrounded: float,
    expected: float,
    reveal: bool,
    rounded_right: bool = False,
    rounded_from: tuple[str, float] | None = None,
) -> tuple[str, str] | None:
    """The verdict on an answer to a rounded quantity, when rounding decides it: correct, the
    right value not yet whole, or whole but rounded the other way. None to judge on.
    `rounded_right`: the answer rounds its own value the required way (`floor(x)` for a count
    rounded down), so a wrong whole number comes from the value before rounding, never from
    the direction. `rounded_from`: the rounding the answer applies itself and the value it
    rounds (in the quantity's unit), or None when it rounds nothing the checker can see.

    The count itself is named only when `reveal`: before the step is submitted a hint says
    which way to round, never what the count comes to."""
    whole = abs(value - round(value)) < 1e-9
    if whole and round(value) == round(expected):
        return "correct", ""
    words = _ROUNDING_WORDS[judge.rounding or "round"]

    def near(x: float) -> bool:
        return _rel(x, raw) <= judge.tolerance or _rel(x, unrounded) <= judge.tolerance

    if not whole:
        if not near(value):
            return None
        # "Right value" only when rounding the answer the required way gives the count: 10.4
        # GPUs rounded up is 11, so 10.4 is not the right value of a count that comes to 10.
        if judge.rounded(value) == expected:
            before = _rounded_from_values(raw, unrounded)
            source = before[0] if before else unrounded
            shown = (
                f": {format_number(source)} becomes {format_number(expected)}." if reveal else "."
            )
            return "not_rounded", f"Right value, but it must be a whole number, {words}{shown}"
        return (
            "close",
            f"Not a whole number, and {words} {format_number(value)} gives "
            f"{format_number(judge.rounded(value))}, not the count this comes to; check the "
            "value before rounding.",
        )
    if rounded_right:
        return None
    if rounded_from is None:
        other_way = _rounded_the_other_way(value, raw, unrounded, expected)
        if other_way is None or not reveal:
            return None
        x, way = other_way
        return (
            "not_rounded",
            f"{format_number(x)} {_ROUNDING_WORDS[way]} gives {format_number(value)}, but this "
            f"count must be {words}, which gives {format_number(expected)}.",
        )
    way, x = rounded_from
    if x == round(x) or not near(x) or judge.rounded(x) != expected:
        return None  # not the right value rounded the other way
    shown = f": {format_number(x)} becomes {format_number(expected)}." if reveal else "."
    return (
        "not_rounded",
        f"{format_number(x)} {_ROUNDING_WORDS[way]} gives {format_number(value)}, but this "
        f"count must be {words}{shown}",
    )


def _value_before_rounding(judge: _Judge, raw: float) -> float:
    """The quantity's formula over the givens as they were before any earlier quantity was
    rounded (9.14 instances where the fleet's GPUs take 10 instances); `raw` when it does not
    evaluate."""
    try:
        return judge.in_unit(
            judge.value_of(str(judge.spec["formula"]), givens=_unrounded(judge.givens))
        )
    except FormulaError:
        return raw


def _rounded_from_values(raw: float, unrounded: float) -> list[float]:
    """The values a count is rounded from: the formula over the earlier quantities as they are
    (16 whole streams), unless that is already whole (a fleet of 10 instances times TP), then
    the value before any rounding (9.14 instances)."""
    return [x for x in dict.fromkeys((raw, unrounded)) if x != round(x)]


def _rounded_the_other_way(
    value: float, raw: float, unrounded: float, expected: float
) -> tuple[float, str] | None:
    """(the value, "ceil" or "floor") when the whole number `value` is the right value
    rounded the other way (the value as the earlier quantities are, or as they were before
    rounding), else None."""
    for x in _rounded_from_values(raw, unrounded):
        for way, other in (("ceil", math.ceil(x)), ("floor", math.floor(x))):
            if other == round(value) and other != expected:
                return x, way
    return None


__all__ = [
    "VERDICTS",
    "VERDICT_LABELS",
    "MISTAKE_KEYS",
    "CheckResult",
    "check_quantity",
    "givens_from_estimate",
]
