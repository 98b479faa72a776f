"""A candidate reports a problem with the step they are answering."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from authoring import services
from practice.models import Attempt
from questions.selectors import STEP_TITLES
from rate_limits import LimitExceeded


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def problem_report(request: HttpRequest, attempt_id: int, step: str) -> HttpResponse:
    """The form (GET) and the report (POST) for one step of the candidate's own attempt."""
    attempt = (
        Attempt.objects.owned_by(request.user)
        .select_related("revision__question")
        .filter(pk=attempt_id)
        .first()
    )
    if attempt is None or step not in STEP_TITLES:
        raise Http404("No such attempt.")
    context = {
        "attempt": attempt,
        "revision": attempt.revision,
        "step_key": step,
        "step_title": STEP_TITLES[step],
        "message": "",
        "share_answer": False,
        "error": "",
    }
    if request.method != "POST":
        return render(request, "authoring/report.html", context)
    # Kept whole, as typed, so a refused report loses nothing (the request's size is bounded).
    context["message"] = services.draft_text_normalise(request.POST.get("message", ""))
    context["share_answer"] = request.POST.get("share_answer") == "on"
    try:
        services.problem_report_create(
            user=request.user,
            attempt=attempt,
            step_key=step,
            message=context["message"],
            share_answer=context["share_answer"],
        )
    except LimitExceeded as exc:
        context["error"] = str(exc).replace("your answer is saved", "your report is kept here")
        return render(request, "authoring/report.html", context, status=429)
    except services.AuthoringError as exc:
        context["error"] = str(exc)
        return render(request, "authoring/report.html", context, status=422)
    messages.success(request, "Thank you: the question's instructors will see your report.")
    return redirect("attempt_step", attempt_id=attempt.pk, step=step)
