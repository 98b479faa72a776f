"""Evaluate a parsed napkin-math tree to a Quantity: a SymPy number in base units + a dimension.

Numbers stay exact SymPy Rationals while they are small; a result whose numerator or
denominator would pass MAX_BITS, or that is irrational (sqrt(2), ln 3, 0.3^0.7), becomes a
15-digit SymPy Float. Every power is sized with a float logarithm *before* it is computed, and
every intermediate value must stay within 1e±100, so no input can make SymPy work long.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sympy import Float, Integer, Number, Rational, integer_nthroot

from .errors import NapkinError
from .parser import BinOp, Call, Group, Name, Neg, Node, Num, UnitRef, UnitSpec, WithUnit
from .units import (
    COUNT_WORDS,
    DIMENSIONLESS,
    REQUESTS,
    TOKENS,
    UNITS,
    Dim,
    base_unit_text,
    describe_dim,
    dim_div,
    dim_mul,
    dim_pow,
    unit_hint,
)

MAX_BITS = 400  # numerator/denominator size kept exact; beyond it, a Float
MAX_LOG10 = 100  # |log10 value| of any intermediate result
_LIMIT = 10**MAX_LOG10  # a Python int: compared with a Rational's own p and q, no SymPy
_PRECISION = 15  # decimal digits of Floats
_MAX_DIM_POWER = 6


@dataclass(frozen=True, slots=True)
class Quantity:
    """A value in base units (B, s, tok, req, FLOP, USD) with its dimension.

    `binary` remembers that a KiB..PiB unit was written, so the value is shown in binary units;
    `days` that a day or week was written, so a long time may be shown in days.
    """

    magnitude: Number
    dim: Dim = DIMENSIONLESS
    binary: bool = False
    days: bool = False

    @property
    def dimensionless(self) -> bool:
        return self.dim == DIMENSIONLESS

    def __float__(self) -> float:
        return float(self.magnitude)


def _log2_abs(x: Number) -> float:
    """log2 |x| without forming anything large (x != 0); math.log2 takes ints of any size."""
    if isinstance(x, Rational):
        return math.log2(abs(x.p)) - math.log2(x.q)
    _sign, mantissa, exponent, _bits = x._mpf_
    return math.log2(mantissa) + exponent


def bounded(x: Number, pos: int | None) -> Number:
    """Check the size of an intermediate result; shrink exact values that grew too long."""
    if x == 0:
        return x
    if isinstance(x, Rational):
        if abs(x.p) > _LIMIT * x.q:
            raise NapkinError(
                "The result is larger than 1e100, too large to be a napkin estimate.", pos
            )
        if abs(x.p) * _LIMIT < x.q:
            raise NapkinError(
                "The result is smaller than 1e-100, too small to be a napkin estimate.", pos
            )
        if x.p.bit_length() > MAX_BITS or x.q.bit_length() > MAX_BITS:
            return Float(x, _PRECISION)
        return x
    if not x.is_finite:
        raise NapkinError("The result is not a finite number.", pos)
    log2 = _log2_abs(x)
    if log2 > MAX_LOG10 * 3.3219281:
        raise NapkinError(
            "The result is larger than 1e100, too large to be a napkin estimate.", pos
        )
    if log2 < -MAX_LOG10 * 3.3219281:
        raise NapkinError(
            "The result is smaller than 1e-100, too small to be a napkin estimate.", pos
        )
    return x


def _same_dim(a: Quantity, b: Quantity, what: str, pos: int) -> None:
    if a.dim != b.dim:
        raise NapkinError(
            f"Cannot {what} {describe_dim(a.dim)} and {describe_dim(b.dim)} (at column {pos + 1})."
            + _crossing_hint(a.dim, b.dim),
            pos,
        )


def _crossing_hint(a: Dim, b: Dim) -> str:
    """How to bring two quantities that differ by one unit to the same one, or "".

    A count worked out from plain numbers (pixels over pixels) meeting one with a unit
    (120 tok) is the usual case: the plain number takes the unit. Two quantities a count of
    tokens or requests apart (tokens beside tokens × tokens, a per-request amount beside a
    total) cross over by 1 tok or 1 req, as a count read as a unit does. Two a time or a number
    of bytes apart get no such advice: 1 s is not a neutral amount of time.
    """
    if DIMENSIONLESS in (a, b):
        other = b if a == DIMENSIONLESS else a
        # "1 /s", not "1 1/s": the unit of a rate has no numerator to write.
        unit = base_unit_text(other).removeprefix("1")
        if any(other[2:4]) and not any(other[:2] + other[4:]):
            # Tokens and requests only (40 tok/req beside a prompt's 3050 tokens written as a
            # count): the worksheet keeps counts plain, so the unit side may be the one to go.
            return (
                f" Give the plain number its unit: multiply it by 1 {unit}; or, where both are "
                f"counts, make the other plain: divide it by 1 {unit}."
            )
        return f" Give the plain number its unit: multiply it by 1 {unit}."
    apart = dim_div(a, b)
    for count, symbol, word in ((TOKENS, "tok", "tokens"), (REQUESTS, "req", "requests")):
        if apart not in (count, dim_div(DIMENSIONLESS, count)):
            continue
        more, fewer = (a, b) if apart == count else (b, a)
        if count == REQUESTS and fewer[3] < 0:
            # Requests are a unit here, though a Check's box reads a request as 1.
            return (
                " One is per request and one is not: multiply the per-request amount by 1 req "
                "(one request's worth) to use it as a total."
            )
        return (
            f" The {describe_dim(more)} side has one more factor of {word}: divide it by "
            f"1 {symbol} (or multiply the other by 1 {symbol})."
        )
    return ""


def _about(size: float) -> str:
    """A power of ten 10^size in words: 1e10000000000 while a float holds every digit of the
    exponent, else the exponent itself to three figures, 10^(3.01e+98)."""
    if abs(size) < 1e15:
        return f"1e{size:.0f}"
    return f"10^({size:.3g})"


def _power(base: Number, exponent: Number, pos: int) -> Number:
    """base ** exponent for plain numbers, sized before it is computed."""
    if base == 0:
        if exponent > 0:
            return Integer(0)
        if exponent == 0:
            return Integer(1)
        raise NapkinError(f"Division by zero: 0 to a negative power (column {pos + 1}).", pos)
    integral = isinstance(exponent, Rational) and exponent.q == 1
    if base < 0 and not integral:
        raise NapkinError(
            f"A negative number to a fractional power has no real value (column {pos + 1}).",
            pos,
        )
    # log10(|base| ** exponent), with log2(10) to full precision: a 7-digit log2(10) puts
    # 10^(10^10) at 1e9999999985.
    size = float(exponent) * (_log2_abs(base) / math.log2(10))
    if size > MAX_LOG10:
        raise NapkinError(
            f"The power at column {pos + 1} is about {_about(size)}, too large to be a napkin "
            "estimate.",
            pos,
        )
    if size < -MAX_LOG10:
        raise NapkinError(
            f"The power at column {pos + 1} is about {_about(size)}, too small to be a napkin "
            "estimate.",
            pos,
        )
    if isinstance(base, Rational) and isinstance(exponent, Rational):
        p, q = abs(base.p), base.q
        if exponent.q > 1 and exponent.q <= 64:
            # An exact root when there is one: 4^0.5 = 2, (1/8)^(1/3) = 1/2.
            p_root, p_exact = integer_nthroot(p, int(exponent.q))
            q_root, q_exact = integer_nthroot(q, int(exponent.q))
            if p_exact and q_exact:
                p, q = p_root, q_root
                exponent = Integer(exponent.p)
        if exponent.q == 1:
            n = abs(int(exponent.p))
            if (p.bit_length() + q.bit_length()) * n <= MAX_BITS * 2:
                value = Rational(p**n, q**n)
                if base < 0 and n % 2:
                    value = -value
                return 1 / value if exponent < 0 else value
    if integral:
        return Float(base, _PRECISION) ** int(exponent)
    return Float(base, _PRECISION) ** Float(exponent, _PRECISION)


def _count_like(q: Quantity) -> bool:
    """Plain numbers and counts of tokens or requests can be rounded in their base unit."""
    return q.dim in (DIMENSIONLESS, TOKENS, REQUESTS)


_DAY_UNITS = frozenset({"day", "week"})


def _writes_days(spec: UnitSpec) -> bool:
    return any(w in UNITS and UNITS[w].name in _DAY_UNITS for w, _ in spec.factors)


def _unit_quantity(spec: UnitSpec) -> Quantity:
    return Quantity(spec.scale, spec.dim, spec.binary, _writes_days(spec))


def per_count_names(spec: UnitSpec) -> list[str]:
    """The count words a unit divides by (`B/param`): a name defined as one of them is read as
    that name, as `2 * params` reads the name."""
    return [w for w, power in spec.factors if power < 0 and w in COUNT_WORDS and w not in UNITS]


MAX_SHOWN_NAME = 40  # an unknown name is quoted back this far, however long it is


def unknown_name(name: str, pos: int) -> NapkinError:
    """An unknown name, with what it most likely meant when that is a unit or a count word."""
    shown = name if len(name) <= MAX_SHOWN_NAME else name[: MAX_SHOWN_NAME - 1] + "…"
    message = f"Unknown name {shown!r} at column {pos + 1}."
    hint = unit_hint(name)
    if hint:
        message += f" As a unit, did you mean {hint}?"
    elif name in COUNT_WORDS:
        message += (
            f" {name!r} is a count word: it labels a number, as in 8 GPUs or 70e9 params, or "
            "in the singular ends a unit after '/', as in 2 B/param or $2/GPU/h; define it to use "
            "it as a name."
        )
    return NapkinError(message, pos)


class Evaluator:
    """Walks the tree. `env` maps names to Quantities (givens and earlier lines)."""

    def __init__(self, env: dict[str, Quantity] | None = None) -> None:
        self.env = env or {}

    def eval(self, node: Node) -> Quantity:
        match node:
            case Num(value=value, pos=pos):
                return Quantity(bounded(value, pos))
            case Group(inner=inner):
                return self.eval(inner)
            case Name(id=name, pos=pos):
                if name not in self.env:
                    raise unknown_name(name, pos)
                return self.env[name]
            case UnitRef(unit=spec, pos=pos):
                return self.per_defined_names(_unit_quantity(spec), spec, pos)
            case WithUnit(operand=operand, unit=spec, pos=pos):
                value = self.eval(operand)
                value = Quantity(
                    bounded(value.magnitude * spec.scale, pos),
                    dim_mul(value.dim, spec.dim),
                    value.binary or spec.binary,
                    value.days or _writes_days(spec),
                )
                return self.per_defined_names(value, spec, pos)
            case Neg(operand=operand):
                value = self.eval(operand)
                return Quantity(-value.magnitude, value.dim, value.binary, value.days)
            case BinOp(op=op, left=left, right=right, pos=pos):
                return self.binop(op, self.eval(left), self.eval(right), pos)
            case Call(func=func, args=args, pos=pos):
                return self.call(func, [self.eval(a) for a in args], pos)
        raise NapkinError("Cannot evaluate this expression.", None)  # pragma: no cover

    def per_defined_names(self, value: Quantity, spec: UnitSpec, pos: int) -> Quantity:
        """Divide by each count word of the unit that is a defined name (`B/param` with
        `param = 7e9`): a name the candidate defined wins over the count reading."""
        for word in per_count_names(spec):
            if word in self.env:
                value = self.binop("/", value, self.env[word], pos)
        return value

    def binop(self, op: str, a: Quantity, b: Quantity, pos: int) -> Quantity:
        binary = a.binary or b.binary
        days = a.days or b.days
        if op in "+-":
            _same_dim(a, b, "add" if op == "+" else "subtract", pos)
            value = a.magnitude + b.magnitude if op == "+" else a.magnitude - b.magnitude
            return Quantity(bounded(value, pos), a.dim, binary, days)
        if op == "*":
            return Quantity(
                bounded(a.magnitude * b.magnitude, pos), dim_mul(a.dim, b.dim), binary, days
            )
        if op == "/":
            if b.magnitude == 0:
                raise NapkinError(f"Division by zero at column {pos + 1}.", pos)
            return Quantity(
                bounded(a.magnitude / b.magnitude, pos), dim_div(a.dim, b.dim), binary, days
            )
        # op == "^"
        if not b.dimensionless:
            raise NapkinError(
                f"An exponent must be a plain number, not {describe_dim(b.dim)} "
                f"(column {pos + 1}).",
                pos,
            )
        exponent = b.magnitude
        if a.dimensionless:
            return Quantity(bounded(_power(a.magnitude, exponent, pos), pos), a.dim, binary, days)
        if (
            not (isinstance(exponent, Rational) and exponent.q == 1)
            or abs(exponent) > _MAX_DIM_POWER
        ):
            raise NapkinError(
                f"A quantity with units can only be raised to a whole power up to "
                f"{_MAX_DIM_POWER} (column {pos + 1}).",
                pos,
            )
        n = int(exponent)
        return Quantity(
            bounded(_power(a.magnitude, exponent, pos), pos), dim_pow(a.dim, n), binary, days
        )

    def call(self, func: str, args: list[Quantity], pos: int) -> Quantity:
        if func in ("min", "max"):
            first = args[0]
            for other in args[1:]:
                _same_dim(first, other, f"take the {func} of", pos)
            pick = min if func == "min" else max
            chosen = pick(args, key=lambda q: q.magnitude)
            return Quantity(
                chosen.magnitude,
                first.dim,
                any(q.binary for q in args),
                any(q.days for q in args),
            )
        (x,) = args
        if func == "abs":
            return Quantity(abs(x.magnitude), x.dim, x.binary, x.days)
        if func in ("ceil", "floor", "round"):
            if not _count_like(x):
                raise NapkinError(
                    f"{func} needs a plain number or a count of tokens or requests, not "
                    f"{describe_dim(x.dim)}; divide by a unit first, as in {func}(x / GB).",
                    pos,
                )
            m = x.magnitude
            if func == "ceil":
                value = m.ceiling()
            elif func == "floor":
                value = m.floor()
            else:
                # Half away from zero, the way people round by hand (2.5 -> 3).
                value = (abs(m) + Rational(1, 2)).floor() * (1 if m >= 0 else -1)
            return Quantity(bounded(Integer(value), pos), x.dim, x.binary, x.days)
        if func == "sqrt":
            if any(e % 2 for e in x.dim):
                raise NapkinError(
                    f"The square root of {describe_dim(x.dim)} has no unit in this language "
                    f"(column {pos + 1}).",
                    pos,
                )
            if x.magnitude < 0:
                raise NapkinError(
                    f"The square root of a negative number has no real value (column {pos + 1}).",
                    pos,
                )
            half = tuple(e // 2 for e in x.dim)
            root = _power(x.magnitude, Rational(1, 2), pos)
            return Quantity(bounded(root, pos), half, x.binary, x.days)  # type: ignore[arg-type]
        # log2, log10, ln
        if not x.dimensionless:
            raise NapkinError(
                f"{func} needs a plain number, not {describe_dim(x.dim)} (column {pos + 1}).",
                pos,
            )
        if x.magnitude <= 0:
            raise NapkinError(
                f"{func} is defined only for positive numbers (column {pos + 1}).", pos
            )
        return Quantity(_logarithm(func, x.magnitude), DIMENSIONLESS)


def _logarithm(func: str, x: Number) -> Number:
    """An exact integer for exact powers (log2(1024) = 10), otherwise a Float."""
    base = {"log2": 2, "log10": 10}.get(func)
    if base and isinstance(x, Rational):
        for value, invert in ((x, False), (1 / x, True)):
            if value.q == 1 and value.p >= 1:
                n = round(math.log(value.p, base)) if value.p > 0 else 0
                if n >= 0 and base**n == value.p:
                    return Integer(-n if invert else n)
    # x is within 1e±100, so a float logarithm is exact to the 15 digits we keep.
    result = math.log(float(x))
    if base:
        result /= math.log(base)
    return Float(result, _PRECISION)
