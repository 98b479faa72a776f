"""Render a parsed line as LaTeX (and MathML), the way it was read.

The LaTeX is printed from our own tree rather than from a SymPy expression, because SymPy
would reorder factors and fold the units into numbers; the point of the rendering is to show
the candidate how *their* line was understood (which parentheses, which units).
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape

import nh3
from latex2mathml.converter import convert

from .numbers import format_number
from .parser import BinOp, Call, Group, Line, Name, Neg, Node, Num, UnitRef, UnitSpec, WithUnit

# Greek letter names a napkin name may use, with the letter MathML shows for each.
GREEK_LETTERS = {
    name: chr(code)
    for name, code in (
        ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4),
        ("epsilon", 0x3B5), ("zeta", 0x3B6), ("eta", 0x3B7), ("theta", 0x3B8),
        ("kappa", 0x3BA), ("lambda", 0x3BB), ("mu", 0x3BC), ("nu", 0x3BD), ("xi", 0x3BE),
        ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3), ("tau", 0x3C4), ("phi", 0x3C6),
        ("chi", 0x3C7), ("psi", 0x3C8), ("omega", 0x3C9), ("Gamma", 0x393),
        ("Delta", 0x394), ("Theta", 0x398), ("Lambda", 0x39B), ("Xi", 0x39E), ("Pi", 0x3A0),
        ("Sigma", 0x3A3), ("Phi", 0x3A6), ("Psi", 0x3A8), ("Omega", 0x3A9),
    )
}  # fmt: skip
GREEK = frozenset(GREEK_LETTERS)
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


def number_parts(text: str) -> tuple[str, str | None, str]:
    """A number as typed, for display: (mantissa, exponent or None, suffix letter or "").
    `7.6e9` -> ("7.6", "9", ""), `2k` -> ("2", None, "k"), `1_000` -> ("1000", None, "")."""
    text = text.replace("_", "")
    found = re.search(r"(?:[KMGT]i|[kKMGT])?%?$", text)
    suffix = found.group() if found else ""
    text = text[: len(text) - len(suffix)]
    mantissa, sep, exponent = text.lower().partition("e")
    return mantissa, exponent.lstrip("+") if sep else None, suffix


def number_latex(text: str) -> str:
    mantissa, exponent, suffix = number_parts(text)
    out = mantissa
    if exponent is not None:
        power = f"10^{{{exponent}}}"
        out = power if mantissa == "1" else rf"{mantissa} \times {power}"
    if suffix.endswith("%"):
        return out + (rf"\,\text{{{suffix[:-1]}}}" if suffix[:-1] else "") + r"\%"
    return out + (rf"\,\text{{{suffix}}}" if suffix else "")


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


# --- MathML straight from the tree -------------------------------------------------------
# A worksheet line is shown as MathML on every evaluation, and the line being typed is new
# each time: going through LaTeX and latex2mathml cost more than evaluating the whole
# worksheet. This printer walks the same tree as `to_latex`, with the same layout choices.

_MATH_OPEN = '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">'
_FENCES = {"ceil": ("\u2308", "\u2309"), "floor": ("\u230a", "\u230b"), "abs": ("|", "|")}
_FUNCTION_MATHML = {
    "log2": "<msub><mi>log</mi><mn>2</mn></msub>",
    "log10": "<msub><mi>log</mi><mn>10</mn></msub>",
    "ln": "<mi>ln</mi>",
    "min": "<mi>min</mi>",
    "max": "<mi>max</mi>",
    "round": "<mi>round</mi>",
}


def _mo(op: str, fence: str = "") -> str:
    if fence:
        return f'<mo stretchy="true" fence="true" form="{fence}">{escape(op)}</mo>'
    return f"<mo>{escape(op)}</mo>"


def _fenced(open_: str, inner: str, close: str) -> str:
    return f"<mrow>{_mo(open_, 'prefix')}{inner}{_mo(close, 'postfix')}</mrow>"


def name_mathml(name: str) -> str:
    """`r_inst` -> r with subscript inst, `rho` -> ρ, `o_bar` -> o with a bar: as name_latex."""
    base, _, sub = name.partition("_")
    if sub == "bar":
        return f'<mover><mrow>{name_mathml(base)}</mrow><mo stretchy="true">\u00af</mo></mover>'

    def symbol(s: str) -> str:
        s = _UNICODE_GREEK.get(s, s)
        if s in GREEK_LETTERS:
            return f"<mi>{GREEK_LETTERS[s]}</mi>"
        if len(s) == 1:
            return f"<mi>{escape(s)}</mi>"
        return f'<mi mathvariant="normal">{escape(s)}</mi>'  # a word, upright

    return f"<msub>{symbol(base)}<mrow>{symbol(sub)}</mrow></msub>" if sub else symbol(base)


def unit_mathml(spec: UnitSpec | str) -> str:
    """Units upright (<mtext>), as unit_latex."""
    text = spec if isinstance(spec, str) else spec.text
    out = []
    for part in re.split(r"([*/])", text or ""):
        if part == "*":
            out.append(_mo("\u22c5"))
        elif part == "/":
            out.append(_mo("/"))
        elif part == "1":
            out.append("<mn>1</mn>")
        elif part:
            unit, _, power = part.partition("^")
            unit = f"<mtext>{escape(unit)}</mtext>"
            out.append(
                f"<msup>{unit}<mrow>{_number_mathml(power)}</mrow></msup>" if power else unit
            )
    return "".join(out)


def _number_mathml(text: str) -> str:
    if text.startswith("-"):
        return _mo("\u2212") + _number_mathml(text[1:])
    return f"<mn>{escape(text)}</mn>"


def number_mathml(text: str) -> str:
    """As number_latex: 7.6e9 -> 7.6 × 10^9, 2k -> 2 k, 1_000 -> 1000."""
    mantissa, exponent, suffix = number_parts(text)
    out = f"<mn>{escape(mantissa)}</mn>"
    if exponent is not None:
        power = f"<msup><mn>10</mn><mrow>{_number_mathml(exponent)}</mrow></msup>"
        out = power if mantissa == "1" else f"{out}{_mo('\u00d7')}{power}"
    percent = "<mo>%</mo>" if suffix.endswith("%") else ""
    suffix = suffix.removesuffix("%")
    spaced = f'<mspace width="0.167em" /><mtext>{suffix}</mtext>' if suffix else ""
    return out + spaced + percent


def to_mathml(node: Node) -> str:
    """MathML for one expression tree, laid out as `to_latex` lays it out."""

    def go(n: Node) -> str:
        match n:
            case Num(text=text):
                return number_mathml(text)
            case Name(id=name):
                return name_mathml(name)
            case UnitRef(unit=spec):
                return unit_mathml(spec)
            case WithUnit(operand=operand, unit=spec):
                return f'{go(operand)}<mspace width="0.167em" />{unit_mathml(spec)}'
            case Group(inner=inner):
                return _fenced("(", go(inner), ")")
            case Neg(operand=operand):
                return _mo("\u2212") + go(operand)
            case BinOp(op="/", left=left, right=right):
                return (
                    f"<mfrac><mrow>{go(_ungroup(left))}</mrow>"
                    f"<mrow>{go(_ungroup(right))}</mrow></mfrac>"
                )
            case BinOp(op="^", left=left, right=right):
                return f"<msup><mrow>{go(left)}</mrow><mrow>{go(_ungroup(right))}</mrow></msup>"
            case BinOp(op="*", left=left, right=right):
                return go(left) + _mo("\u00d7") + go(right)
            case BinOp(op=op, left=left, right=right):
                return go(left) + _mo("\u2212" if op == "-" else op) + go(right)
            case Call(func=func, args=args):
                inner = _mo(",").join(go(_ungroup(a)) for a in args)
                if func in _FENCES:
                    return _fenced(_FENCES[func][0], inner, _FENCES[func][1])
                if func == "sqrt":
                    return f"<msqrt><mrow>{inner}</mrow></msqrt>"
                return _FUNCTION_MATHML[func] + _fenced("(", inner, ")")
        return ""  # pragma: no cover

    return go(node)


def line_mathml(line: Line) -> str:
    """The whole line as MathML: `name = expr → unit`, as line_latex."""
    out = to_mathml(line.expr)
    if line.name:
        out = name_mathml(line.name) + _mo("=") + out
    if line.target is not None:
        space = '<mspace width="0.278em" />'
        out += f"{space}{_mo('\u2192')}{space}{unit_mathml(line.target)}"
    return f"{_MATH_OPEN}<mrow>{out}</mrow></math>"


# The MathML that latex2mathml and our own printer emit, and nothing else: a formula shown on
# a page may come from an instructor, so its MathML is sanitised like any authored HTML.
MATHML_TAGS = frozenset({
    "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace",
    "msub", "msup", "msubsup", "mfrac", "msqrt", "mroot", "munder", "mover", "munderover",
    "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose", "merror", "code",
})  # fmt: skip
MATHML_ATTRIBUTES = {
    "math": {"display", "xmlns"},
    "mo": {"stretchy", "fence", "separator", "lspace", "rspace", "form", "largeop",
           "movablelimits", "accent"},
    "mi": {"mathvariant"},
    "mtext": {"mathvariant"},
    "mspace": {"width"},
    "mstyle": {"displaystyle", "scriptlevel"},
    "mtd": {"columnalign"},
    "mtable": {"columnalign", "rowspacing", "columnspacing"},
    "mover": {"accent"},
    "munder": {"accentunder"},
    "mfrac": {"linethickness"},
    "menclose": {"notation"},
}  # fmt: skip


def sanitise_mathml(html: str) -> str:
    """MathML (or any HTML) reduced to the MathML allow-list above: no scripts, no event
    handlers, no links, no hx-* attributes."""
    return nh3.clean(html, tags=set(MATHML_TAGS), attributes=MATHML_ATTRIBUTES, url_schemes=set())


def latex_convert(latex: str, *, display: bool = False) -> str:
    """latex2mathml's MathML for LaTeX source, unsanitised; raises what the converter raises.
    The one call of the converter: the pages (latex_to_mathml) and the content checker
    (questionbank.rendering.latex_problem) read formulas alike."""
    return convert(latex, display="block" if display else "inline")


@lru_cache(maxsize=2048)
def latex_to_mathml(latex: str, *, display: bool = False) -> str:
    """LaTeX source -> sanitised MathML (inline, or block when `display`), which Chromium and
    Firefox render natively. On a conversion error, the escaped source in <code>."""
    try:
        mathml = latex_convert(latex, display=display)
    except Exception:  # latex2mathml raises many kinds; the reader sees the source instead
        return sanitise_mathml(f"<code>{escape(latex)}</code>")
    return sanitise_mathml(mathml)


def latex_number_unit(value: float, unit: str) -> str:
    """A value as LaTeX, about four significant digits: 7.616e9 GB -> 7.616 \\times 10^{9}\\,GB."""
    mantissa, sep, exponent = format_number(value).partition("e")
    text = rf"{mantissa} \times 10^{{{exponent}}}" if sep else mantissa
    return text + (rf"\,{unit_latex(unit)}" if unit else "")
