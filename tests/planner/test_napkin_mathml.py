"""Worksheet lines as MathML, printed straight from the parsed line.

The printer must read the line exactly as the LaTeX printer does: the same symbols in the same
order, with the same layout (fractions, powers, fences, subscripts). latex2mathml, which renders
the LaTeX of the question text, is the reference: for any expression, both MathML documents
hold the same text in the same order.
"""

import xml.etree.ElementTree as ET

from hypothesis import assume, given, settings

from planner.engine import NapkinError, evaluate, evaluate_expression
from planner.engine.parser import parse_line
from planner.engine.render import latex_to_mathml, line_latex, line_mathml
from tests.planner.test_napkin_hostile import _expressions

NS = "{http://www.w3.org/1998/Math/MathML}"


def reading(mathml: str) -> str:
    return "".join(ET.fromstring(mathml).itertext()).replace(" ", "")


def tags(mathml: str) -> list[str]:
    return [e.tag.removeprefix(NS) for e in ET.fromstring(mathml).iter()]


LINES = [
    "n = ceil(50 QPS / (0.7 * r_inst)) in GB/s",
    "tpot = W / (eta * bw) in ms",
    "x = -2^3 + sqrt(rho) - log2(1e9) * max(a, 2k)",
    "y = 7.6e9 * 2 B / s^2",
    "o_bar = abs(x) + floor(1_000)",
    "kv = 2 * 32 * 8 * 128 * 2 B * 4096 tok in GiB",
    "z = 2^-3 * 1e-3 s/tok + round(ln(3)) - log10(100)",
    "c = 2.5 USD/h * 10 h / (1M tok)",
]


def test_each_line_reads_as_its_latex_does() -> None:
    for text in LINES:
        line = parse_line(text)
        ours, reference = line_mathml(line), latex_to_mathml(line_latex(line))
        assert reading(ours) == reading(reference), text


def test_the_layout_follows_the_line() -> None:
    fraction = line_mathml(parse_line("n = ceil(50 QPS / (0.7 * r_inst)) in GB/s"))
    assert tags(fraction)[:2] == ["math", "mrow"]
    assert "mfrac" in tags(fraction) and "msub" in tags(fraction)
    assert "⌈" in fraction and "⌉" in fraction and "→" in fraction
    assert "<mtext>QPS</mtext>" in fraction and "<mtext>GB</mtext>" in fraction  # upright
    power = line_mathml(parse_line("y = 7.6e9 * 2 B / s^2"))
    assert "<msup><mn>10</mn><mrow><mn>9</mn></mrow></msup>" in power
    assert "<msup><mtext>s</mtext><mrow><mn>2</mn></mrow></msup>" in power
    named = line_mathml(parse_line("o_bar = rho * bw_eff"))
    assert "<mover>" in named and "<mi>ρ</mi>" in named
    assert '<msub><mi mathvariant="normal">bw</mi><mrow><mi mathvariant="normal">eff</mi>' in named


def test_a_worksheet_result_carries_the_mathml_of_its_line() -> None:
    result = evaluate_expression(
        "tpot = W / bw in ms", {"W": evaluate("15.2 GB"), "bw": evaluate("1 TB/s")}
    )
    assert result.ok and result.mathml == line_mathml(parse_line("tpot = W / bw in ms"))
    assert evaluate_expression("2 +").mathml == ""  # a line that does not parse has none


@settings(max_examples=300, deadline=None)
@given(_expressions())
def test_any_expression_is_well_formed_and_reads_as_its_latex(text: str) -> None:
    try:
        line = parse_line(text)
    except NapkinError:
        assume(False)  # an expression the parser refuses has no rendering at all
    ours = line_mathml(line)
    assert ET.fromstring(ours).tag == NS + "math"
    assert reading(ours) == reading(latex_to_mathml(line_latex(line))), text
