"""Lexer and parser of the napkin-math language, written by hand.

No user text ever reaches `eval`, `ast.parse` or any SymPy string parser: characters become
tokens here, tokens become the small tree below, and only the evaluator turns the tree into
SymPy numbers. Every limit (length, digits, tokens, nodes, nesting) is checked before the work
it bounds is done.

Grammar (loosest first):

    line     := [NAME '='] expr ['in' units]
    expr     := term (('+' | '-') term)*
    term     := unary (('*' | '/') unary)*
    unary    := ('-' | '+') unary | power
    power    := atom ['^' exponent] [COUNT | units]  -- both attach after a number or ')'
    exponent := ('-' | '+') exponent | atom ['^' exponent]
    atom     := number | '$' number | NAME | UNIT | FUNC '(' expr (',' expr)* ')'
              | '(' expr ')'
    number   := NUMBER [SUFFIX] ['%']
    units    := unit ['^' INT] (('*' | '/') unit ['^' INT] | '/' PER)*

SUFFIX is k K M G T (powers of 1000) or Ki Mi Gi Ti (powers of 1024), written straight after
the number: 32k is 32,000 and 32Ki is 32,768. '%' divides by 100 (70% is 0.7); '$' before a
number is USD ($2.5/h is 2.5 USD/h). COUNT is a word that labels a count (GPUs, instances,
streams, replicas, params, ...): `10 GPUs` is the plain number 10. PER is such a word in the
singular ending a unit after '/', as "per" one: `2 B/param` is 2 B, `$2/GPU/h` is 2 USD/h.

Readings a candidate may not mean are kept as notes on the line rather than refused: `7B`
is 7 bytes (not 7 billion parameters) and `32k` is 32,000 (not 32,768).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from sympy import Integer, Rational

from .errors import NapkinError
from .units import (
    COUNT_WORDS,
    DIMENSIONLESS,
    PER_COUNT_WORDS,
    SUFFIXES,
    UNITS,
    Dim,
    Unit,
    dim_div,
    dim_mul,
    dim_pow,
    unit_hint,
)

MAX_INPUT_CHARS = 500
MAX_TOKENS = 250
MAX_NODES = 200
MAX_DEPTH = 24
MAX_DIGITS = 30  # significant digits in one number literal
MAX_EXPONENT = 100  # |e| in a literal like 1e9
MAX_UNIT_POWER = 4

FUNCTIONS = {
    "ceil": 1,
    "floor": 1,
    "round": 1,
    "sqrt": 1,
    "log2": 1,
    "log10": 1,
    "ln": 1,
    "abs": 1,
    "min": -1,  # any number of arguments, at least one
    "max": -1,
}
KEYWORDS = {"in"}

# Typographic stand-ins people paste from slides.
_TRANSLATE = str.maketrans({"×": "*", "·": "*", "−": "-", "–": "-", "÷": "/"})
_NAME_CHARS = r"A-Za-z\u0391-\u03a9\u03b1-\u03c9µ"
_TOKEN_RE = re.compile(
    rf"""
    (?P<ws>[ \t]+)
  | (?P<number>(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[{_NAME_CHARS}][{_NAME_CHARS}0-9_]*)
  | (?P<op>\*\*|[-+*/^(),=%$])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # number | name | op | end
    text: str
    pos: int
    attached: bool = False  # no space between this token and the previous one


def _power_of_two(value: Integer | Rational) -> bool:
    """Whether a number is a whole power of two (1, 2, 4, ... 32, 128)."""
    return value.q == 1 and value.p > 0 and value.p & (value.p - 1) == 0


def tokenize(text: str) -> list[Token]:
    """Split one line into tokens; a '#' starts a comment that runs to the end of the line."""
    if len(text) > MAX_INPUT_CHARS:
        raise NapkinError(
            f"The input is {len(text)} characters long; the limit is {MAX_INPUT_CHARS}.", None
        )
    text = text.translate(_TRANSLATE)
    tokens: list[Token] = []
    pos = 0
    previous_end = -1
    while pos < len(text):
        if text[pos] == "#":
            break
        match = _TOKEN_RE.match(text, pos)
        if match is None:
            char = text[pos]
            shown = repr(char) if char.isprintable() else f"U+{ord(char):04X}"
            raise NapkinError(f"Unexpected character {shown} at column {pos + 1}.", pos)
        kind = match.lastgroup or ""
        if kind != "ws":
            value = match.group()
            if kind == "op" and value == "**":
                value = "^"
            tokens.append(Token(kind, value, pos, attached=previous_end == pos))
            if len(tokens) > MAX_TOKENS:
                raise NapkinError(f"The input has more than {MAX_TOKENS} tokens.", pos)
            previous_end = match.end()
        pos = match.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


# ---------------------------------------------------------------------------------------------
# The tree


@dataclass(frozen=True, slots=True)
class UnitSpec:
    """A unit expression such as GB/s or ms/tok: exact scale onto base units, dimension."""

    text: str
    scale: Rational
    dim: Dim
    binary: bool
    factors: tuple[tuple[str, int], ...]  # (unit as written, exponent)


@dataclass(frozen=True, slots=True)
class Num:
    value: Rational
    text: str
    pos: int


@dataclass(frozen=True, slots=True)
class Name:
    id: str
    pos: int


@dataclass(frozen=True, slots=True)
class UnitRef:
    """A bare unit used as a value, as in `x / s`: one of that unit."""

    unit: UnitSpec
    pos: int


@dataclass(frozen=True, slots=True)
class WithUnit:
    """A value followed by units: `1008 GB/s`, `(a + b) tok`."""

    operand: Node
    unit: UnitSpec
    pos: int


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # + - * / ^
    left: Node
    right: Node
    pos: int


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Node
    pos: int


@dataclass(frozen=True, slots=True)
class Call:
    func: str
    args: tuple[Node, ...]
    pos: int


@dataclass(frozen=True, slots=True)
class Group:
    """Parentheses as typed; kept so the rendering shows how the line was read."""

    inner: Node
    pos: int


Node = Num | Name | UnitRef | WithUnit | BinOp | Neg | Call | Group


@dataclass(frozen=True, slots=True)
class Line:
    """One parsed line: an optional `name =`, the expression, an optional `in UNIT`."""

    name: str | None
    expr: Node
    target: UnitSpec | None
    target_pos: int | None
    notes: tuple[str, ...] = ()  # readings worth telling the candidate about (7B, 32k)


def children(node: Node) -> tuple[Node, ...]:
    """The nodes directly below `node`, left to right (none below a number, name or unit)."""
    match node:
        case WithUnit(operand=inner) | Group(inner=inner) | Neg(operand=inner):
            return (inner,)
        case BinOp(left=left, right=right):
            return (left, right)
        case Call(args=args):
            return args
    return ()


def walk(node: Node) -> Iterator[Node]:
    """The node and every node below it, parents first (for questions asked of a whole tree:
    which names it reads, whether it writes a unit)."""
    yield node
    for child in children(node):
        yield from walk(child)


# ---------------------------------------------------------------------------------------------
# The parser


def _number(token: Token) -> Rational:
    text = token.text
    if "__" in text or text.endswith("_") or "_." in text or "._" in text:
        raise NapkinError(
            f"Misplaced underscore in the number {text!r}; write 1_000_000.", token.pos
        )
    text = text.replace("_", "")
    mantissa, _, exponent_text = text.lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    if len(digits) > MAX_DIGITS:
        raise NapkinError(
            f"The number at column {token.pos + 1} has more than {MAX_DIGITS} digits.", token.pos
        )
    exponent = int(exponent_text) if exponent_text else 0
    # Checked before 10**exponent is ever formed.
    if abs(exponent) > MAX_EXPONENT:
        raise NapkinError(
            f"The exponent of {token.text!r} is beyond ±{MAX_EXPONENT}; "
            f"that is too {'large' if exponent > 0 else 'small'} for a napkin estimate.",
            token.pos,
        )
    value = Rational(int(whole + fraction or "0")) * Rational(10) ** (exponent - len(fraction))
    return value


_USD = UnitSpec("USD", UNITS["USD"].scale, UNITS["USD"].dim, False, (("USD", 1),))
# "Per GPU" in a unit: a count, so a plain 1 (a name defined in the worksheet wins, see the
# evaluator).
_PER_COUNT = Unit("", Integer(1), DIMENSIONLESS)


def _is_in(token: Token) -> bool:
    """Whether the token is the 'in' that converts a whole line: inside a bracket it can only
    mean the bracket was left open."""
    return token.kind == "name" and token.text in KEYWORDS


def _is_unit_name(token: Token) -> bool:
    return token.kind == "name" and token.text in UNITS


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.nodes = 0
        self.depth = 0
        self.notes: list[str] = []

    # -- helpers
    def peek(self, offset: int = 0) -> Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def count(self, pos: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise NapkinError(f"The expression has more than {MAX_NODES} parts.", pos)

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise NapkinError(f"The expression nests more than {MAX_DEPTH} levels deep.", pos)

    def expect(self, text: str, what: str) -> Token:
        token = self.peek()
        if token.text != text or token.kind != "op":
            raise NapkinError(f"Expected {what} at column {token.pos + 1}.", token.pos)
        return self.advance()

    # -- grammar
    def line(self) -> Line:
        name = None
        if self.peek().kind == "name" and self.peek(1).text == "=" and self.peek(1).kind == "op":
            token = self.advance()
            self.advance()
            check_definable(token.text, token.pos)
            name = token.text
        if self.peek().kind == "end":
            raise NapkinError("There is no expression to evaluate.", self.peek().pos)
        expr = self.expr()
        target = target_pos = None
        if self.peek().kind == "name" and self.peek().text == "in":
            in_token = self.advance()
            target_pos = self.peek().pos
            if self.peek().kind == "end":
                raise NapkinError("Name a unit after 'in', e.g. 'in ms'.", in_token.pos)
            target = self.units(required=True)
        token = self.peek()
        if token.kind != "end":
            raise self.unexpected(token)
        return Line(name, expr, target, target_pos, tuple(dict.fromkeys(self.notes)))

    def unexpected(self, token: Token) -> NapkinError:
        previous = self.tokens[self.i - 1] if self.i else None
        if (
            token.kind == "name"
            and previous is not None
            and (previous.kind == "number" or previous.text == ")" or previous.text in SUFFIXES)
        ):
            return _not_a_unit(token)
        if token.text == "=":
            return NapkinError(
                f"Unexpected '=' at column {token.pos + 1}; only 'name = expression' defines "
                "a name.",
                token.pos,
            )
        if token.text == ")":
            return NapkinError(f"Unmatched ')' at column {token.pos + 1}.", token.pos)
        following = self.peek(1)
        digits_around_comma = (
            token.text == ","
            and previous is not None
            and re.fullmatch(r"\d+", previous.text)
            and following.attached
            and re.fullmatch(r"\d+", following.text)
        )
        if digits_around_comma and len(following.text) != 3:
            return NapkinError(
                f"The comma at column {token.pos + 1} is not a decimal point: write "
                f"{previous.text}.{following.text}.",
                token.pos,
            )
        if digits_around_comma:
            # `1,000`: a thousands separator, which napkin math does not read (a comma only
            # separates a function's arguments).
            groups, k = [previous.text], self.i
            while (
                self.tokens[k].text == ","
                and self.tokens[k + 1].attached
                and re.fullmatch(r"\d{3}", self.tokens[k + 1].text)
            ):
                groups.append(self.tokens[k + 1].text)
                k += 2
            # 500,000 is also 500e3; 1,008 is not 1e3, so it gets no such form.
            short = (
                f" (or {previous.text}e{3 * (len(groups) - 1)})"
                if all(group == "000" for group in groups[1:])
                else ""
            )
            return NapkinError(
                f"The comma at column {token.pos + 1} reads as a thousands separator: write "
                f"{''.join(groups)}{short}, with no comma.",
                token.pos,
            )
        if token.text == "$":
            return NapkinError(
                f"'$' at column {token.pos + 1} must come straight before a number, as in "
                "$2.5/h (or write 2.5 USD/h).",
                token.pos,
            )
        if token.text == "%":
            return NapkinError(
                f"'%' at column {token.pos + 1} must follow its number with no space, as in 70%.",
                token.pos,
            )
        if token.kind in ("name", "number") or token.text == "(":
            return NapkinError(
                f"Missing an operator before {token.text!r} at column {token.pos + 1}.",
                token.pos,
            )
        return NapkinError(f"Unexpected {token.text!r} at column {token.pos + 1}.", token.pos)

    def expr(self) -> Node:
        self.enter(self.peek().pos)
        node = self.term()
        while self.peek().kind == "op" and self.peek().text in "+-":
            op = self.advance()
            self.count(op.pos)
            node = BinOp(op.text, node, self.term(), op.pos)
        self.depth -= 1
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.peek().kind == "op" and self.peek().text in "*/":
            op = self.advance()
            self.count(op.pos)
            node = BinOp(op.text, node, self.unary(), op.pos)
        return node

    def unary(self) -> Node:
        token = self.peek()
        if token.kind == "op" and token.text in "+-":
            self.advance()
            self.enter(token.pos)
            self.count(token.pos)
            operand = self.unary()
            self.depth -= 1
            return Neg(operand, token.pos) if token.text == "-" else operand
        return self.power()

    def power(self) -> Node:
        node = self.atom()
        if self.peek().kind == "op" and self.peek().text == "^":
            op = self.advance()
            self.count(op.pos)
            node = BinOp("^", node, self.exponent(), op.pos)
        last = self.tokens[self.i - 1]
        after_value = last.kind == "number" or last.text in (")", "%") or last.text in SUFFIXES
        nxt = self.peek()
        if nxt.kind == "name" and nxt.text in COUNT_WORDS and after_value:
            self.advance()
            self.count(nxt.pos)
            label = UnitSpec(nxt.text, Integer(1), DIMENSIONLESS, False, ((nxt.text, 1),))
            return WithUnit(node, label, nxt.pos)
        # Units follow a number or a closing parenthesis: `1008 GB/s`, `2^10 B`, `(a+b) tok`.
        if _is_unit_name(self.peek()) and self.peek(1).text != "(":
            if (
                last.kind == "number"
                or last.text in (")", "%")
                or last.kind == "name"
                and (last.text in SUFFIXES and last.attached)
            ):
                pos = self.peek().pos
                self.count(pos)
                node = WithUnit(node, self.units(), pos)
        return node

    def exponent(self) -> Node:
        token = self.peek()
        self.enter(token.pos)
        if token.kind == "op" and token.text in "+-":
            self.advance()
            self.count(token.pos)
            operand = self.exponent()
            node: Node = Neg(operand, token.pos) if token.text == "-" else operand
        else:
            node = self.atom()
            if self.peek().kind == "op" and self.peek().text == "^":
                op = self.advance()
                self.count(op.pos)
                node = BinOp("^", node, self.exponent(), op.pos)
        self.depth -= 1
        return node

    def atom(self) -> Node:
        token = self.peek()
        self.count(token.pos)
        if token.kind == "number":
            return self.number()
        if token.kind == "op" and token.text == "$":
            self.advance()
            if self.peek().kind != "number" or not self.peek().attached:
                raise NapkinError(
                    f"'$' at column {token.pos + 1} must come straight before a number, as in "
                    "$2.5/h (or write 2.5 USD/h).",
                    token.pos,
                )
            self.count(token.pos)
            amount = self.number()
            # `$2/GPU/hour` is one unit, USD/GPU/hour, as `2 USD/GPU/hour` would be.
            spec = self.units(lead=_USD) if self.unit_continues() else _USD
            return WithUnit(amount, spec, token.pos)
        if token.kind == "op" and token.text == "%":
            raise NapkinError(
                f"'%' at column {token.pos + 1} must follow a number, as in 70%.", token.pos
            )
        if token.kind == "name":
            self.advance()
            if self.peek().text == "(" and self.peek().kind == "op":
                return self.call(token)
            if token.text in KEYWORDS:
                raise NapkinError(
                    f"'in' at column {token.pos + 1} must follow an expression, as in "
                    "'W / bw in ms'.",
                    token.pos,
                )
            if token.text in UNITS:
                self.i -= 1
                return UnitRef(self.units(), token.pos)
            if token.text in FUNCTIONS:
                raise NapkinError(
                    f"The function {token.text!r} needs parentheses, as in {token.text}(x).",
                    token.pos,
                )
            return Name(token.text, token.pos)
        if token.kind == "op" and token.text == "(":
            self.advance()
            inner = self.expr()
            closing = self.peek()
            if closing.text != ")":
                if closing.kind == "end":
                    raise NapkinError(
                        f"The '(' at column {token.pos + 1} is never closed.", token.pos
                    )
                if _is_in(closing):
                    raise NapkinError(
                        f"The '(' at column {token.pos + 1} is not closed before 'in' at column "
                        f"{closing.pos + 1}: add the ')'.",
                        token.pos,
                    )
                raise self.unexpected(closing)
            self.advance()
            return Group(inner, token.pos)
        if token.kind == "end":
            raise NapkinError("The expression ends too early.", token.pos)
        raise NapkinError(f"Unexpected {token.text!r} at column {token.pos + 1}.", token.pos)

    def number(self) -> Num:
        """NUMBER [SUFFIX] ['%'], noting the readings a candidate may not mean."""
        token = self.advance()
        value = _number(token)
        text = token.text
        nxt = self.peek()
        if nxt.kind == "name" and nxt.attached:
            if nxt.text in SUFFIXES:
                self.advance()
                value = value * SUFFIXES[nxt.text]
                text += nxt.text
                if nxt.text in ("k", "K") and _power_of_two(_number(token)):
                    # 32k may mean 32,768; 500k documents or 2.2k tokens never mean 512,000
                    # or 2252.8, so only a power of two gets the note.
                    self.notes.append(
                        f"{text} reads as {format_count(value)}; for a power of two such as "
                        f"{format_count(_number(token) * 1024)} write {token.text}Ki."
                    )
            elif nxt.text == "B":
                self.notes.append(
                    f"{text}B reads as {text} bytes; for {text} billion parameters write "
                    f"{text}e9 or {text}G."
                )
            elif nxt.text not in UNITS and nxt.text not in COUNT_WORDS:
                raise _not_a_unit(nxt)
        nxt = self.peek()
        if nxt.kind == "op" and nxt.text == "%" and nxt.attached:
            self.advance()
            value = value / 100
            text += "%"
        return Num(value, text, token.pos)

    def call(self, token: Token) -> Node:
        name = token.text
        if name not in FUNCTIONS:
            known = ", ".join(sorted(FUNCTIONS))
            raise NapkinError(f"Unknown function {name!r}; known ones are {known}.", token.pos)
        self.enter(token.pos)
        self.advance()  # (
        args = []
        if self.peek().text == ")":
            raise NapkinError(f"{name}() needs an argument.", token.pos)
        while True:
            args.append(self.expr())
            if self.peek().text == ",":
                self.advance()
                continue
            break
        closing = self.peek()
        if closing.text != ")":
            if closing.kind == "end":
                raise NapkinError(
                    f"The '(' of {name} at column {token.pos + len(name) + 1} is never closed.",
                    token.pos + len(name),
                )
            if _is_in(closing):
                raise NapkinError(
                    f"The '(' of {name} at column {token.pos + len(name) + 1} is not closed "
                    f"before 'in' at column {closing.pos + 1}: add the ')'.",
                    token.pos + len(name),
                )
            raise self.unexpected(closing)
        self.advance()
        self.depth -= 1
        arity = FUNCTIONS[name]
        if arity > 0 and len(args) != arity:
            raise NapkinError(f"{name} takes exactly one argument.", token.pos)
        return Call(name, tuple(args), token.pos)

    def unit_continues(self) -> bool:
        """Whether the tokens ahead continue a unit: `/s`, `*tok`, or `/GPU` (per one GPU)."""
        nxt, after = self.peek(), self.peek(1)
        if nxt.kind != "op" or nxt.text not in "*/" or self.peek(2).text == "(":
            return False
        return _is_unit_name(after) or (
            nxt.text == "/" and after.kind == "name" and after.text in PER_COUNT_WORDS
        )

    def units(self, required: bool = False, lead: UnitSpec | None = None) -> UnitSpec:
        """A unit expression; `lead` is a unit already read (the USD of `$2`), and the tokens
        ahead continue it."""
        start = self.peek()
        factors: list[tuple[str, int]] = []
        text_parts: list[str] = []
        scale: Rational = Integer(1)
        dim: Dim = (0, 0, 0, 0, 0, 0)
        binary = False
        sign = 1
        if lead is not None:
            factors, text_parts = list(lead.factors), [lead.text]
            scale, dim, binary = lead.scale, lead.dim, lead.binary
            op = self.advance()
            sign = -1 if op.text == "/" else 1
            text_parts.append(op.text)
        elif required and start.kind == "number" and start.text == "1" and self.peek(1).text == "/":
            # `in 1/s`
            self.advance()
            text_parts.append("1")
            sign = -1
            self.advance()
            text_parts.append("/")
        while True:
            token = self.peek()
            per_count = sign < 0 and token.kind == "name" and token.text in PER_COUNT_WORDS
            if not _is_unit_name(token) and not per_count:
                hint = unit_hint(token.text) if token.kind == "name" else None
                raise NapkinError(
                    f"{token.text or 'the end'!r} at column {token.pos + 1} is not a unit"
                    + (f"; did you mean {hint}?" if hint else "."),
                    token.pos,
                )
            self.advance()
            unit: Unit = _PER_COUNT if per_count else UNITS[token.text]
            power = 1
            text = token.text
            if self.peek().text == "^" and self.peek().kind == "op":
                self.advance()
                negative = False
                if self.peek().text in "+-" and self.peek().kind == "op":
                    negative = self.advance().text == "-"
                exp_token = self.peek()
                if exp_token.kind != "number" or not exp_token.text.isdigit():
                    raise NapkinError(
                        f"A unit's power must be a whole number, at column {exp_token.pos + 1}.",
                        exp_token.pos,
                    )
                self.advance()
                power = int(exp_token.text) * (-1 if negative else 1)
                if not 0 < abs(power) <= MAX_UNIT_POWER:
                    raise NapkinError(
                        f"A unit's power must be between 1 and {MAX_UNIT_POWER}.", exp_token.pos
                    )
                text += f"^{power}"
            power *= sign
            factors.append((token.text, power))
            text_parts.append(text)
            scale = scale * unit.scale**power
            dim = dim_mul(dim, dim_pow(unit.dim, power))
            binary = binary or unit.binary
            nxt = self.peek()
            if self.unit_continues():
                self.advance()
                sign = -1 if nxt.text == "/" else 1
                text_parts.append(nxt.text)
                continue
            break
        return UnitSpec("".join(text_parts), scale, dim, binary, tuple(factors))


def format_count(value: Rational) -> str:
    """A whole count with thousands separators (32,000); other values as they come."""
    if value.q == 1:
        return f"{int(value):,}"
    return str(float(value))


def _not_a_unit(token: Token) -> NapkinError:
    """A word after a number that is neither a unit nor a count label, with the close ones."""
    hint = unit_hint(token.text)
    if hint:
        return NapkinError(
            f"{token.text!r} at column {token.pos + 1} is not a unit; did you mean {hint}?",
            token.pos,
        )
    close = difflib.get_close_matches(token.text, [*UNITS, *COUNT_WORDS], n=3, cutoff=0.6)
    hint = f" Close ones: {', '.join(close)}." if close else ""
    return NapkinError(
        f"{token.text!r} at column {token.pos + 1} is not a unit.{hint} Count words such as "
        "GPUs, instances, streams, replicas or params may follow a number; to multiply by a "
        "name, write '*'.",
        token.pos,
    )


def check_definable(name: str, pos: int = 0) -> None:
    """Refuse a name that would shadow a unit, a function or a keyword."""
    if name in UNITS:
        raise NapkinError(f"{name!r} is a unit; choose another name.", pos)
    if name in FUNCTIONS or name in KEYWORDS:
        raise NapkinError(f"{name!r} is a reserved word; choose another name.", pos)
    if name in SUFFIXES:
        raise NapkinError(f"{name!r} is a number suffix; choose another name.", pos)


@lru_cache(maxsize=4096)
def parse_line(text: str) -> Line:
    """Parse one line. Cached: a worksheet re-evaluates unchanged lines on every keystroke."""
    parser = _Parser(tokenize(text))
    return parser.line()


def parse_units(text: str) -> UnitSpec:
    """Parse a unit expression on its own, e.g. the `--to` of the command ('ms', 'GB/s')."""
    parser = _Parser(tokenize(text))
    if parser.peek().kind == "end":
        raise NapkinError("No unit given.", 0)
    spec = parser.units(required=True)
    if parser.peek().kind != "end":
        raise parser.unexpected(parser.peek())
    return spec


def unit_dim(spec: UnitSpec) -> Dim:
    return spec.dim


__all__ = [
    "Node",
    "Num",
    "Name",
    "UnitRef",
    "WithUnit",
    "BinOp",
    "Neg",
    "Call",
    "Group",
    "Line",
    "UnitSpec",
    "parse_line",
    "parse_units",
    "tokenize",
    "children",
    "walk",
    "check_definable",
    "dim_div",
]
