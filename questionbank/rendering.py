"""Markdown with math to safe HTML: the one renderer for everything authors write.

Instructors are untrusted too (see shared notes on security): the HTML that Markdown and the
LaTeX converter produce is sanitised with nh3 before it is stored. Math is rendered on the
server to MathML, which browsers display natively, so pages need no math script and the CSP
stays strict.
"""

from __future__ import annotations

import re
import secrets
from functools import lru_cache
from html import escape as html_escape
from typing import Any

import markdown
import nh3

# The one LaTeX-to-MathML converter: sanitised for pages (latex_to_mathml), raw for the
# checker (latex_problem), whose exception says what is wrong.
from planner.engine.render import (
    MATHML_ATTRIBUTES,
    MATHML_TAGS,
    latex_convert,
    latex_to_mathml,
)
from questionbank.spec import QuestionSpec

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
# Python-Markdown's inline pass costs the square of some characters' number: every unclosed
# "[" scans the rest of its paragraph for its end, and every escape ("\[") or entity is a
# placeholder replaced one by one (2,000 "[" took 0.55 s, 50,000 minutes, for one preview on a
# worker). A source with more of them than any page needs (a field of the bank has at most 9) is
# shown as plain text instead.
_MAX_COSTLY_CHARS = 1000
_COSTLY_CHARS = re.compile(r"[\[\\&]")


# Bidirectional embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069): in
# a candidate's plain text they reorder what a reviewer sees on the page while the graders read
# the characters in order, so a page for someone other than the writer shows them as marks.
_DIRECTION_CONTROLS = {
    code: f"[U+{code:04X}]" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
}


def direction_controls_shown(text: str) -> str:
    """`text` with each bidirectional control written out by its code point, as in
    "[U+202E]" (plain text, to escape as ever)."""
    return text.translate(_DIRECTION_CONTROLS)


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
    if len(text) <= _CACHED_SOURCE_CHARS:
        return _render_markdown_cached(text)
    return _render_markdown(text)


# The HTML depends on the text alone, and loading content renders the same notes, prompts and
# references each time (every release, every test that loads the bank): the short ones, which
# are nearly all, are remembered (at most 2048 x 16k characters).
_CACHED_SOURCE_CHARS = 16_000


@lru_cache(maxsize=2048)
def _render_markdown_cached(text: str) -> str:
    return _render_markdown(text)


def _render_markdown(text: str) -> str:
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
    # Counted outside code and math, where Markdown reads them.
    costly = sum(len(_COSTLY_CHARS.findall(pieces[i])) for i in range(0, len(pieces), 2))
    if costly > _MAX_COSTLY_CHARS:
        return f'<pre class="unrendered">{html_escape(text)}</pre>'
    html = markdown.markdown("".join(pieces), extensions=["tables", "fenced_code", "sane_lists"])
    html = sanitise(html)
    return re.sub(token + r"x(\d+)x", lambda m: maths[int(m.group(1))], html)


# Why a formula does not render, by the converter's exception: a sentence for the author.
_LATEX_ERRORS = {
    "NoAvailableTokensError": "it ends before a command has all its arguments (a `}` or an "
    "argument missing?)",
    "NumeratorNotFoundError": "a `\\frac` has no numerator",
    "DenominatorNotFoundError": "a `\\frac` has no denominator",
    "ExtraLeftOrMissingRightError": "a `\\left` has no `\\right` to close it",
    "MissingSuperScriptOrSubscriptError": "a `^` or `_` has nothing after it",
    "DoubleSubscriptsError": "two subscripts in a row: group them, as in `x_{ab}`",
    "DoubleSuperscriptsError": "two superscripts in a row: group them, as in `x^{ab}`",
    "MissingEndError": "a `\\begin{...}` has no `\\end{...}`",
}
# An unknown command comes out of the converter as an identifier holding its own source.
_UNKNOWN_COMMAND = re.compile(r"<mi[^>]*>(\\[A-Za-z]+)</mi>")


@lru_cache(maxsize=4096)
def latex_problem(latex: str, *, display: bool = False) -> str | None:
    """Why the formula `latex` does not render as math, or None when it does. Where the
    converter fails, `latex_to_mathml` shows the formula's source in <code>; where it does
    not know a command, the command's name: either way candidates read LaTeX, not math. The
    content checker (questionbank.files) reports each at its line."""
    try:
        mathml = latex_convert(latex, display=display)
    except Exception as exc:  # latex2mathml raises many kinds
        name = type(exc).__name__
        return _LATEX_ERRORS.get(name, f"the converter cannot read it ({name})")
    unknown = _UNKNOWN_COMMAND.search(mathml)
    if unknown:
        return f"`{unknown.group(1)}` is not a command the converter knows"
    return None


def render_question(spec: QuestionSpec) -> dict[str, Any]:
    """The HTML of every Markdown field of a question, rendered once for storage:
    {"scenario", "steps": {key: {"prompt", "reference"[, "follow_ups": {id: {...}}]}}}."""
    steps: dict[str, Any] = {}
    for step in spec.steps:
        steps[step.key] = {
            "prompt": render_markdown(step.prompt),
            "reference": render_markdown(step.reference),
        }
        if step.interviewer_notes:  # for a mock interview's interviewer only
            steps[step.key]["interviewer_notes"] = render_markdown(step.interviewer_notes)
        if step.misconceptions:
            # Why each wrong idea breaks, shown in the feedback beside the candidate's sentence.
            steps[step.key]["misconceptions"] = {
                m.id: render_markdown(m.explanation) for m in step.misconceptions
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
