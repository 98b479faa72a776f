"""Solve a formula for one unknown: "what peak QPS do 10 instances sustain?".

The formula's tree (parsed by our own parser, never by SymPy) is turned into a SymPy
expression in base units in which only the unknown stays a Symbol; SymPy's `solve` finds it.
An outer ceil/floor/round is dropped: the largest load N instances sustain is where the
unrounded count reaches N.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from sympy import Symbol

from .errors import NapkinError
from .evaluator import Quantity, bounded
from .parser import (
    BinOp,
    Call,
    Group,
    Name,
    Neg,
    Node,
    Num,
    UnitRef,
    WithUnit,
    parse_line,
    parse_units,
    walk,
)
from .render import latex_number_unit, name_latex
from .worksheet import Result, build_env, evaluate, shown_in

_SYMPY_FUNCTIONS = {
    "sqrt": sympy.sqrt,
    "ln": sympy.log,
    "log2": lambda x: sympy.log(x, 2),
    "log10": lambda x: sympy.log(x, 10),
    "abs": sympy.Abs,
    "min": sympy.Min,
    "max": sympy.Max,
    "ceil": sympy.ceiling,
    "floor": sympy.floor,
}


def to_sympy(node: Node, env: Mapping[str, Quantity], unknown: str, symbol: Symbol) -> sympy.Expr:
    """The tree as a SymPy expression of base-unit magnitudes; `unknown` becomes `symbol`."""
    match node:
        case Num(value=value):
            return value
        case Name(id=name, pos=pos):
            if name == unknown:
                return symbol
            if name not in env:
                raise NapkinError(f"Unknown name {name!r} at column {pos + 1}.", pos)
            return env[name].magnitude
        case UnitRef(unit=spec):
            return spec.scale
        case WithUnit(operand=operand, unit=spec):
            return to_sympy(operand, env, unknown, symbol) * spec.scale
        case Group(inner=inner):
            return to_sympy(inner, env, unknown, symbol)
        case Neg(operand=operand):
            return -to_sympy(operand, env, unknown, symbol)
        case BinOp(op=op, left=left, right=right):
            a = to_sympy(left, env, unknown, symbol)
            b = to_sympy(right, env, unknown, symbol)
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            return a / b if op == "/" else a**b
        case Call(func=func, args=args):
            if func == "round":
                raise NapkinError("round cannot be solved through; use ceil or floor.", None)
            converted = [to_sympy(a, env, unknown, symbol) for a in args]
            return _SYMPY_FUNCTIONS[func](*converted)
    raise NapkinError("Cannot solve this expression.", None)  # pragma: no cover


def _mentions(node: Node, name: str) -> bool:
    return any(isinstance(part, Name) and part.id == name for part in walk(node))


def solve_for(
    formula: str,
    unknown: str,
    target: str,
    givens: Mapping[str, str],
    to_unit: str | None = None,
) -> Result:
    """The value of the given `unknown` that makes `formula` equal `target`.

    formula: napkin expression over the givens (e.g. 'ceil(qps_peak / (rho * r_inst))');
    unknown: the name of one given, whose dimension the answer takes; target: a napkin
    expression (e.g. '10'). Returns a Result in a readable unit (or `to_unit`), with an
    error when there is no positive real solution.
    """
    result = Result(input=f"{formula} = {target}, solved for {unknown}")
    try:
        env = build_env(givens)
        if unknown not in env:
            raise NapkinError(f"{unknown!r} is not one of the givens.", None)
        line = parse_line(formula)
        expr = line.expr
        while isinstance(expr, Group):
            expr = expr.inner
        # The largest load that N instances sustain is where the unrounded count reaches N.
        if isinstance(expr, Call) and expr.func in ("ceil", "floor", "round"):
            expr = expr.args[0]
        if not _mentions(expr, unknown):
            raise NapkinError(f"The formula does not use {unknown!r}.", None)
        goal = evaluate(target, env)
        current = evaluate(formula, env)
        if goal.dim != current.dim:
            raise NapkinError("The target and the formula have different units.", None)
        x = Symbol("x", positive=True)
        equation = to_sympy(expr, env, unknown, x) - goal.magnitude
        solutions = [s for s in sympy.solve(equation, x) if s.is_real and s.is_positive]
        if not solutions:
            raise NapkinError(f"No positive value of {unknown!r} reaches {target}.", None)
        magnitude = bounded(sympy.Float(min(solutions), 15), None)
        answer = Quantity(magnitude, env[unknown].dim, env[unknown].binary)
        unit_spec = parse_units(to_unit) if to_unit else None
        result.value, result.unit = shown_in(answer, unit_spec)
        result.quantity = answer
        result.latex = f"{name_latex(unknown)} = {latex_number_unit(result.value, result.unit)}"
    except NapkinError as error:
        result.error, result.position = error.message, error.position
    return result
