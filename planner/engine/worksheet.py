"""The public face of the napkin-math language: one expression, or a worksheet of lines."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from sympy import Rational

from .errors import FormulaError, NapkinError
from .evaluator import Evaluator, Quantity, per_count_names
from .numbers import format_number
from .parser import (
    Line,
    Name,
    UnitRef,
    UnitSpec,
    WithUnit,
    check_definable,
    parse_line,
    parse_units,
    tokenize,
    walk,
)
from .render import line_latex, line_mathml, unit_latex
from .units import REQUESTS, TOKENS, UNITS, Dim, describe_dim, dim_div, readable_unit

MAX_LINES = 200


def _prefers_binary(q: Quantity) -> bool:
    """Binary units when the line used them, or when a byte count is a clean multiple of 1024
    but not of 1000 (2 x 28 x 4 x 128 x 2 B is 56 KiB, not 57.344 KB)."""
    if q.binary:
        return True
    m = q.magnitude
    if q.dim[0] == 1 and isinstance(m, Rational) and m.q == 1 and abs(m.p) >= 1024:
        return m.p % 1024 == 0 and m.p % 1000 != 0
    return False


def shown_in(
    q: Quantity, target: UnitSpec | None = None, target_pos: int | None = None
) -> tuple[float, str]:
    """The value (float) and unit text a Quantity is shown in: `target`, else a readable one."""
    if target is not None:
        if target.dim != q.dim:
            raise NapkinError(
                f"Cannot convert {describe_dim(q.dim)} to {target.text} "
                f"({describe_dim(target.dim)}).{_missing_count_hint(q.dim, target.dim)}",
                target_pos,
            )
        return float(q.magnitude / target.scale), target.text
    unit, scale = readable_unit(q.dim, abs(float(q.magnitude)), _prefers_binary(q), q.days)
    return float(q.magnitude / scale), unit


def _missing_count_hint(have: Dim, want: Dim) -> str:
    """Why a rate lacks its requests or tokens: a per-request amount written without /req
    (`2000 tok/s / 256 tok` is 1/s; `/ 256 tok/req` gives req/s)."""
    missing = dim_div(want, have)
    if missing == REQUESTS:
        return " A count of requests is missing: did you mean tok/req where you wrote tok?"
    if missing == dim_div(TOKENS, REQUESTS):
        return " Tokens per request are missing: did you mean tok/req after the per-request amount?"
    return ""


@dataclass
class Result:
    """One evaluated expression. On error, `error` is one sentence and `position` a 0-based
    offset into `input` (None when it concerns the whole input)."""

    input: str
    value: float | None = None  # in `unit`
    unit: str = ""
    latex: str = ""
    error: str | None = None
    position: int | None = None
    name: str | None = None
    quantity: Quantity | None = field(default=None, repr=False)
    notes: list[str] = field(default_factory=list)  # readings the candidate may not mean

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def display(self) -> str:
        """'21.54 ms'."""
        if self.value is None:
            return ""
        return f"{format_number(self.value)} {self.unit}".strip()

    @property
    def unit_latex(self) -> str:
        return unit_latex(self.unit)

    @property
    def mathml(self) -> str:
        """MathML of the line as read (printed from the parsed line, like `latex`)."""
        return _mathml(self.input) if self.latex else ""

    def as_json(self) -> dict:
        """The `napkin --json` object."""
        if self.error is not None:
            out = {"input": self.input, "error": self.error, "position": self.position}
        else:
            out = {"input": self.input, "value": self.value, "unit": self.unit, "latex": self.latex}
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass
class LineResult(Result):
    """A worksheet line: `kind` is 'blank' (empty or only a comment), 'value' or 'error'."""

    line_no: int = 0  # 1-based
    kind: str = "value"


def evaluate_line(line: Line, env: Mapping[str, Quantity]) -> Quantity:
    """Evaluate a parsed line's expression (raises NapkinError)."""
    return Evaluator(dict(env)).eval(line.expr)


def evaluate_expression(
    text: str, env: Mapping[str, Quantity] | None = None, to_unit: str | None = None
) -> Result:
    """Evaluate one napkin-math line (`EXPR`, `EXPR in UNIT` or `name = EXPR`).

    `env` maps names to Quantities (see `build_env`); `to_unit` (e.g. 'ms', 'GiB', 'req/s')
    overrides the line's own `in`. Never raises for bad input: the Result carries the error.
    """
    result = Result(input=text)
    try:
        read = _read(text)
        line = read.line
        result.name, result.latex = line.name, read.latex
        result.notes = list(line.notes)
        quantity = evaluate_line(line, env or {})
        target, target_pos = line.target, line.target_pos
        if to_unit is not None:
            target, target_pos = parse_units(to_unit), None
        result.value, result.unit = shown_in(quantity, target, target_pos)
        result.quantity = quantity
    except NapkinError as error:
        result.error, result.position = _explained(error.message, result.notes), error.position
    return result


def _explained(message: str, notes: list[str]) -> str:
    """An error, followed by the readings of the line that may explain it (7B as bytes)."""
    return " ".join([message, *notes])


def evaluate(text: str, env: Mapping[str, Quantity] | None = None) -> Quantity:
    """The Quantity of one line, raising NapkinError (for code that needs the exact value)."""
    return evaluate_line(parse_line(text), env or {})


def build_env(
    givens: Mapping[str, str],
    overrides: Mapping[str, Quantity] | None = None,
    base: Mapping[str, Quantity] | None = None,
) -> dict[str, Quantity]:
    """Evaluate a question's givens (name -> napkin expression), in order.

    A given may use the givens before it. `overrides` replaces a given's value wherever it is
    used (the checker uses this to replay a mistake such as forgetting rho). Raises
    FormulaError naming the given when one does not evaluate: that is an authoring error.
    """
    env: dict[str, Quantity] = dict(base or {})
    overrides = overrides or {}
    for name, text in givens.items():
        try:
            check_definable(name)
        except NapkinError as error:
            raise FormulaError(f"The given {name!r}: {error.message}", None) from None
        if name in overrides:
            env[name] = overrides[name]
            continue
        try:
            env[name] = evaluate(str(text), env)
        except NapkinError as error:
            raise FormulaError(f"The given {name!r} = {text!r}: {error.message}", None) from None
    return env


@dataclass(frozen=True, slots=True)
class _ReadLine:
    line: Line
    latex: str
    names: tuple[str, ...]  # every name the expression reads


# Keyed on the line's text: a string keeps its hash, a tree of dataclasses recomputes it.
@lru_cache(maxsize=4096)
def _read(text: str) -> _ReadLine:
    """A line parsed, printed as LaTeX and searched for names, once per distinct text
    (raises NapkinError, which is not remembered)."""
    line = parse_line(text)
    names = {part.id for part in walk(line.expr) if isinstance(part, Name)}
    # `2 B/param` reads a defined `param` too, so the line's value depends on it.
    for part in walk(line.expr):
        if isinstance(part, WithUnit | UnitRef):
            names.update(per_count_names(part.unit))
    return _ReadLine(line, line_latex(line), tuple(sorted(names)))


@lru_cache(maxsize=4096)
def _line_value(text: str, inputs: tuple[tuple[str, Quantity | None], ...]):
    """A line's Quantity and how it is shown: a pure function of the line and the values of the
    names it reads, so a worksheet sent again as its last line is typed (every keystroke, after
    a pause) evaluates that line alone. Errors are raised, not remembered."""
    line = _read(text).line
    quantity = evaluate_line(line, {name: q for name, q in inputs if q is not None})
    return quantity, *shown_in(quantity, line.target, line.target_pos)


@lru_cache(maxsize=4096)
def _mathml(text: str) -> str:
    return line_mathml(_read(text).line)


@lru_cache(maxsize=512)
def _givens_env(givens: tuple[tuple[str, str], ...]) -> Mapping[str, Quantity]:
    """`build_env` of a question's givens, once: every evaluation of a practice worksheet starts
    from the same twenty-odd givens (Quantities are frozen, so sharing them is safe)."""
    return MappingProxyType(build_env(dict(givens)))


def evaluate_worksheet(
    lines: list[str],
    givens: Mapping[str, str] | None = None,
    env: Mapping[str, Quantity] | None = None,
) -> list[LineResult]:
    """Evaluate a worksheet top to bottom: `name = EXPR` lines define names for later lines.

    `givens` are predefined (name -> napkin expression). A line with an error leaves its name
    undefined; later lines that use it say so. At most MAX_LINES lines.
    """
    if len(lines) > MAX_LINES:
        raise NapkinError(f"A worksheet holds at most {MAX_LINES} lines.", None)
    scope: dict[str, Quantity] = dict(env or {})
    if givens:
        scope = build_env(givens, base=scope) if scope else dict(_givens_env(tuple(givens.items())))
    broken: set[str] = set()
    # Names a line tried to define but could not because they are units (`hours = 730`), with
    # the line: a later bare `hours` would otherwise silently mean 1 h.
    refused: dict[str, int] = {}
    defined_at: dict[str, int] = {}  # name -> the worksheet line that last gave it its value
    results: list[LineResult] = []
    for number, text in enumerate(lines, start=1):
        result = LineResult(input=text, line_no=number)
        results.append(result)
        if not text.split("#", 1)[0].strip():
            result.kind = "blank"
            continue
        try:
            read = _read(text)
            line = read.line
            result.name, result.latex = line.name, read.latex
            result.notes = list(line.notes)
            if refused:
                _refuse_unit_read_as_name(line, refused)
            inputs = tuple((name, scope.get(name)) for name in read.names)
            quantity, result.value, result.unit = _line_value(text, inputs)
            result.quantity = quantity
            if line.name:
                earlier = scope.get(line.name)
                if earlier is not None and earlier != quantity:
                    result.notes.append(_redefined_note(line.name, defined_at, givens))
                defined_at[line.name] = number
                scope[line.name] = quantity
                broken.discard(line.name)
        except NapkinError as error:
            result.kind = "error"
            result.error = _explained(error.message, result.notes)
            result.position = error.position
            missing = unknown_name(error.message)
            if missing in broken and error.position is not None:
                result.error = (
                    f"{missing!r} has no value because its own line has an error "
                    f"(column {error.position + 1})."
                )
            if result.name:
                scope.pop(result.name, None)
                broken.add(result.name)
            else:
                tried = name_defined(text)
                if tried in UNITS and tried not in refused:
                    refused[tried] = number
    return results


def _redefined_note(
    name: str, defined_at: Mapping[str, int], givens: Mapping[str, str] | None
) -> str:
    """A line gives a name that already has a value another one: legal (a worksheet may refine
    an estimate), but a given overwritten by a typo would silently change every later line."""
    if name in defined_at:
        return (
            f"{name} had another value from line {defined_at[name]}; from this line on it means "
            "this one."
        )
    if givens and name in givens:
        return (
            f"{name} is one of the question's givens ({givens[name]}); from this line on it "
            "means this line's value instead."
        )
    return f"{name} already had a value; from this line on it means this one."


def name_defined(text: str) -> str | None:
    """The name a `name = ...` line defines, read from its tokens even when it does not parse."""
    try:
        tokens = tokenize(text)
    except NapkinError:
        return None
    if len(tokens) > 2 and tokens[0].kind == "name" and tokens[1].text == "=":
        return tokens[0].text
    return None


def _refuse_unit_read_as_name(line: Line, refused: Mapping[str, int]) -> None:
    """Raise when the line uses, as a value of its own, a unit an earlier line tried to define
    as a name: `ceil(hours / 4 h)` after a refused `hours = 730`. A unit after a number
    (`3 hours`) or after `in` is plainly a unit and is left alone."""
    for part in walk(line.expr):
        if not isinstance(part, UnitRef):
            continue
        for word, _power in part.unit.factors:
            if word not in refused:
                continue
            unit = UNITS[word].name
            raise NapkinError(
                f"{word!r} at column {part.pos + 1} would mean 1 {unit} here: line "
                f"{refused[word]} tried to define the name {word!r}, which was refused because "
                f"it is a unit ({unit}). Choose another name there, such as {word}_total.",
                part.pos,
            )


def evaluate_text(
    text: str, givens: Mapping[str, str] | None = None, *, clip: bool = False
) -> list[LineResult]:
    """A worksheet as typed in a text box (any line endings), evaluated by `evaluate_worksheet`.

    Past MAX_LINES lines the worksheet is refused (NapkinError), or with `clip` cut at MAX_LINES,
    for callers that would rather show the first lines than none.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    return evaluate_worksheet(lines[:MAX_LINES] if clip else lines, givens)


def unknown_name(message: str) -> str | None:
    if message.startswith("Unknown name '"):
        return message.split("'")[1]
    return None
