"""The one latex_to_mathml: MathML for pages, sanitised, since formulas can come from authors."""

from planner.engine.render import latex_to_mathml


def test_a_formula_becomes_mathml():
    mathml = latex_to_mathml(r"\frac{W}{\eta \beta}")
    assert mathml.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">')
    assert "<mfrac>" in mathml


def test_display_math_is_a_block():
    assert 'display="block"' in latex_to_mathml("x^2", display=True)


def test_a_javascript_link_in_the_latex_does_not_survive():
    mathml = latex_to_mathml(r"\href{javascript:alert(1)}{x}")
    assert "javascript" not in mathml
    assert "href" not in mathml


def test_html_smuggled_into_text_does_not_become_an_element():
    mathml = latex_to_mathml(r"\text{<img src=x onerror=alert(1)>}")
    assert "<img" not in mathml
    assert "onerror" not in mathml


def test_latex_that_does_not_convert_is_shown_as_escaped_source():
    assert latex_to_mathml(r"\frac{<b>}{") == "<code>\\frac{&lt;b&gt;}{</code>"
