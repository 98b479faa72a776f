"""Render a parsed line as LaTeX (and MathML), the way it was read.

The LaTeX is printed from our own tree rather than from a SymPy expression, because SymPy
would reorder factors and fold the units into numbers; the point of the rendering is to show
the candidate how *their* line was understood (which parentheses, which units).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .parser import BinOp, Call, Group, Line, Name, Neg, Node, Num, UnitRef, UnitSpec, WithUnit

GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "kappa", "lambda",
    "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega",
    "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega",
}  # fmt: skip
_UNICODE_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta",
    "η": "eta", "θ": "theta", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi",
    "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau", "φ": "phi", "χ": "chi", "ψ": "psi",
    "ω": "omega", "Δ": "Delta", "Λ": "Lambda", "Σ": "Sigma", "Ω": "Omega",
}  # fmt: skip

_FUNCTION_LATEX = {
    "log2": r"\log_{2}",
    "log10": r"\log_{10}",
    "ln": r"\ln",
    "min": r"\min",
    "max": r"\max",
    "round": r"\operatorname{round}",
}


def _text(s: str) -> str:
    """Escape for \\mathrm{...}."""
    return s.replace("_", r"\_").replace("µ", r"\mu ").replace("μ", r"\mu ")


def name_latex(name: str) -> str:
    """`r_inst` -> r_{\\mathrm{inst}}, `rho` -> \\rho, `bw` -> \\mathrm{bw}."""
    base, _, sub = name.partition("_")
    if sub == "bar":  # o_bar -> \bar{o}, a mean
        return rf"\bar{{{name_latex(base)}}}"

    def symbol(s: str) -> str:
        s = _UNICODE_GREEK.get(s, s)
        if s in GREEK:
            return "\\" + s
        return s if len(s) == 1 else rf"\mathrm{{{_text(s)}}}"

    out = symbol(base)
    if sub:
        out += rf"_{{{symbol(sub) if sub in GREEK else rf'\mathrm{{{_text(sub)}}}'}}}"
    return out


def unit_latex(spec: UnitSpec | str) -> str:
    """GB/s -> \\text{GB}/\\text{s}; s^2 -> \\text{s}^{2}.

    \\text rather than \\mathrm: MathML renders a one-letter <mi> in italics, and a unit
    (s, B) must stay upright to read as a unit, not a variable."""
    text = spec if isinstance(spec, str) else spec.text
    if not text:
        return ""
    parts = re.split(r"([*/])", text)
    out = []
    for part in parts:
        if part == "*":
            out.append(r"\cdot ")
        elif part == "/":
            out.append("/")
        elif part == "1":
            out.append("1")
        else:
            unit, _, power = part.partition("^")
            out.append(rf"\text{{{unit}}}" + (f"^{{{power}}}" if power else ""))
    return "".join(out)


def number_latex(text: str) -> str:
    text = text.replace("_", "")
    suffix = ""
    if text and text[-1] in "kKMGT":
        suffix = rf"\,\text{{{text[-1]}}}"
        text = text[:-1]
    mantissa, sep, exponent = text.lower().partition("e")
    if sep:
        exponent = exponent.lstrip("+")
        power = f"10^{{{exponent}}}"
        return (power if mantissa == "1" else rf"{mantissa} \times {power}") + suffix
    return mantissa + suffix


def to_latex(node: Node, symbols: dict[str, str] | None = None) -> str:
    """LaTeX for one expression tree; `symbols` replaces names (used to show substitutions)."""
    symbols = symbols or {}

    def go(n: Node) -> str:
        match n:
            case Num(text=text):
                return number_latex(text)
            case Name(id=name):
                return symbols.get(name) or name_latex(name)
            case UnitRef(unit=spec):
                return unit_latex(spec)
            case WithUnit(operand=operand, unit=spec):
                return rf"{go(operand)}\,{unit_latex(spec)}"
            case Group(inner=inner):
                return rf"\left({go(inner)}\right)"
            case Neg(operand=operand):
                return f"-{go(operand)}"
            case BinOp(op="/", left=left, right=right):
                return rf"\frac{{{go(_ungroup(left))}}}{{{go(_ungroup(right))}}}"
            case BinOp(op="^", left=left, right=right):
                return f"{{{go(left)}}}^{{{go(_ungroup(right))}}}"
            case BinOp(op="*", left=left, right=right):
                return rf"{go(left)} \times {go(right)}"
            case BinOp(op=op, left=left, right=right):
                return f"{go(left)} {op} {go(right)}"
            case Call(func=func, args=args):
                inner = ", ".join(go(_ungroup(a)) for a in args)
                if func == "ceil":
                    return rf"\left\lceil {inner} \right\rceil"
                if func == "floor":
                    return rf"\left\lfloor {inner} \right\rfloor"
                if func == "abs":
                    return rf"\left| {inner} \right|"
                if func == "sqrt":
                    return rf"\sqrt{{{inner}}}"
                return rf"{_FUNCTION_LATEX[func]}\left({inner}\right)"
        return ""  # pragma: no cover

    return go(node)


def _ungroup(node: Node) -> Node:
    """Parentheses around a whole numerator, denominator or argument are implied by layout."""
    while isinstance(node, Group):
        node = node.inner
    return node


def line_latex(line: Line) -> str:
    """The whole line: `name = expr \\;\\to\\; unit`."""
    out = to_latex(line.expr)
    if line.name:
        out = f"{name_latex(line.name)} = {out}"
    if line.target is not None:
        out += rf" \;\rightarrow\; {unit_latex(line.target)}"
    return out


@lru_cache(maxsize=2048)
def latex_to_mathml(latex: str) -> str:
    """MathML for browsers (Chromium and Firefox render MathML Core natively)."""
    from latex2mathml.converter import convert

    return convert(latex)


def latex_number_unit(value: float, unit: str) -> str:
    """A value as LaTeX, about four significant digits: 7.616e9 GB -> 7.616 \\times 10^{9}\\,GB."""
    from .worksheet import format_number  # worksheet imports this module

    mantissa, sep, exponent = format_number(value).partition("e")
    text = rf"{mantissa} \times 10^{{{exponent}}}" if sep else mantissa
    return text + (rf"\,{unit_latex(unit)}" if unit else "")
