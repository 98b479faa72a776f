"""The diagram box's live preview: the candidate's Mermaid text in, the laid-out SVG out, or
the syntax error with its line and column (the last good picture, if any, stays on the page).

Rate-limited and charged to the client's CPU budget like the napkin calculator; Graphviz runs
in a subprocess the thread waits on, so the preview is charged the wall-clock time it took
(bounded by `practice.diagram.LAYOUT_TIMEOUT_S`; a picture drawn before costs nothing).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from practice.diagram import DIAGRAM_FIELD, DiagramPicture, diagram_picture
from rate_limits import LimitExceeded, calculation_budget

PREVIEW_TEMPLATE = "interview/_diagram.html#preview"
# Posted by the box's script (static/js/diagram.js) as "1" while a picture is on the page.
PICTURE_SHOWN_FIELD = "picture_shown"


@login_required
@require_POST
def diagram_preview(request: HttpRequest) -> HttpResponse:
    """POST diagram=<Mermaid text>: the picture; or, for a diagram that cannot be drawn (a
    syntax error with its line and column, a size limit, a layout past its time), why, and
    no picture, so the page keeps its last good one. Both are the preview's answer (200: a
    half-typed line is no failed request, and a browser logs every 4xx as a console error);
    429 past the rate limit or the CPU budget. The box's script posts picture_shown=1 while
    the page shows a picture of an earlier diagram: only then does the error say it stays."""
    text = str(request.POST.get(DIAGRAM_FIELD, "")).replace("\r\n", "\n")
    kept = request.POST.get(PICTURE_SHOWN_FIELD) == "1"
    try:
        with calculation_budget(request, action="diagram preview", subprocess=True):
            picture = diagram_picture(text)
    except LimitExceeded as exc:
        return _answer(error=str(exc), picture_kept=kept, status=429)
    if picture.error:
        return _answer(error=picture.message, picture_kept=kept)
    return _answer(picture=picture)


def _answer(
    *,
    picture: DiagramPicture | None = None,
    error: str = "",
    picture_kept: bool = False,
    status: int = 200,
) -> HttpResponse:
    """The preview's fragment: every part swaps out of band (the trigger itself swaps
    nothing), the picture only when there is a new one."""
    context = {"picture": picture, "error": error, "picture_kept": picture_kept}
    return HttpResponse(render_to_string(PREVIEW_TEMPLATE, context), status=status)
