"""Markdown with math to safe HTML: the one renderer for everything authors write.

Instructors are untrusted too (see shared notes on security): the HTML that Markdown and the
LaTeX converter produce is sanitised with nh3 before it is stored. Math is rendered on the
server to MathML, which browsers display natively, so pages need no math script and the CSP
stays strict.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

import latex2mathml.converter
import markdown
import nh3

from questionbank.spec import QuestionSpec

MATHML_TAGS = {
    "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace",
    "msub", "msup", "msubsup", "mfrac", "msqrt", "mroot", "munder", "mover", "munderover",
    "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose", "merror",
}  # fmt: skip
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
ALLOWED_TAGS = (nh3.ALLOWED_TAGS - {"img"}) | MATHML_TAGS
ALLOWED_ATTRIBUTES = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items()},
    **MATHML_ATTRIBUTES,
    "a": {"href", "title"},
    "code": {"class"},
    "th": {"align"},
    "td": {"align"},
}

# $$...$$ first (display), then $...$ (inline, not spanning lines, not "$5 and $6").
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
_INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?!\s)([^$\n]+?)(?<!\s)\$(?![\w$])")
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)
_MAX_SOURCE_CHARS = 200_000


def latex_to_mathml(latex: str, *, display: bool = False) -> str:
    """LaTeX source -> sanitised MathML; on a conversion error, the escaped source in <code>."""
    try:
        mathml = latex2mathml.converter.convert(latex, display="block" if display else "inline")
    except Exception:  # the converter raises many kinds; the author sees the raw source instead
        return nh3.clean(f"<code>{_escape(latex)}</code>")
    return sanitise(mathml)


def sanitise(html: str) -> str:
    """Sanitised HTML: no scripts, no event handlers, no javascript: links, no hx-* attributes."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def render_markdown(text: str) -> str:
    """Markdown source (with $inline$ and $$display$$ LaTeX) -> sanitised HTML."""
    text = (text or "")[:_MAX_SOURCE_CHARS]
    maths: list[str] = []
    # A per-render token that Markdown leaves alone and authors cannot guess.
    token = "mathslot" + secrets.token_hex(8)

    def stash(html: str) -> str:
        maths.append(html)
        return f"{token}x{len(maths) - 1}x"

    # Code spans keep their dollars; everything else gives its math to the converter.
    pieces = _CODE.split(text)
    for i in range(0, len(pieces), 2):
        piece = _DISPLAY_MATH.sub(
            lambda m: "\n\n" + stash(latex_to_mathml(m.group(1).strip(), display=True)) + "\n\n",
            pieces[i],
        )
        pieces[i] = _INLINE_MATH.sub(lambda m: stash(latex_to_mathml(m.group(1))), piece)
    html = markdown.markdown("".join(pieces), extensions=["tables", "fenced_code", "sane_lists"])
    html = sanitise(html)
    return re.sub(token + r"x(\d+)x", lambda m: maths[int(m.group(1))], html)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_question(spec: QuestionSpec) -> dict[str, Any]:
    """The HTML of every Markdown field of a question, rendered once for storage:
    {"scenario", "steps": {key: {"prompt", "reference"[, "follow_ups": {id: {...}}]}}}."""
    steps: dict[str, Any] = {}
    for step in spec.steps:
        steps[step.key] = {
            "prompt": render_markdown(step.prompt),
            "reference": render_markdown(step.reference),
        }
        if step.follow_ups:
            steps[step.key]["follow_ups"] = {
                fu.id: {
                    "prompt": render_markdown(fu.prompt),
                    "reference": render_markdown(fu.reference),
                }
                for fu in step.follow_ups
            }
    return {"scenario": render_markdown(spec.scenario), "steps": steps}
