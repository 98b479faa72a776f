"""Drill and progress pages: parse the request, call a service or a selector, render."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_POST, require_safe

from drills import charts, engine, selectors, services
from drills.models import DrillItem, DrillSet
from rate_limits import LimitExceeded, check_rate, client_key, cpu_budget


def _index_context(request: HttpRequest) -> dict:
    kinds = engine.drill_kinds()
    return {
        "due": selectors.cards_due(user=request.user),
        "recommendation": selectors.recommendation(user=request.user),
        "available": [k for k in kinds if k.available],
        "unavailable": [k for k in kinds if not k.available],
        "recent_sets": DrillSet.objects.owned_by(request.user)[:5],
        "set_size": services.SET_SIZE,
    }


@login_required
@require_safe
def drills_index(request: HttpRequest) -> HttpResponse:
    return render(request, "drills/index.html", _index_context(request))


@login_required
@require_POST
def drill_set_start(request: HttpRequest) -> HttpResponse:
    kind = request.POST.get("kind", "").strip()
    seed_text = request.POST.get("seed", "").strip()
    error = ""
    seed = None
    if seed_text:
        try:
            seed = int(seed_text)
        except ValueError:
            error = f"A seed is a whole number from 0 to {engine.MAX_SEED}."
    if not error:
        try:
            drill_set = services.drill_set_start(user=request.user, kind=kind, seed=seed)
        except engine.DrillError as exc:
            error = str(exc)
    if error:
        context = _index_context(request) | {"error": error}
        return render(request, "drills/index.html", context, status=422)
    return redirect("drills:set", set_id=drill_set.pk)


def _set_context(request: HttpRequest, set_id: int) -> dict:
    try:
        drill_set, items = selectors.drill_set_view(user=request.user, set_id=set_id)
    except DrillSet.DoesNotExist:
        raise Http404("No such drill set.") from None
    current = next((v.item.position for v in items if not v.item.is_answered), None)
    return {
        "drill_set": drill_set,
        "items": items,
        "current": current,
        "done": current is None,
        "set_size": services.SET_SIZE,
    }


@login_required
@require_safe
def drill_set_page(request: HttpRequest, set_id: int) -> HttpResponse:
    response = render(request, "drills/set.html", _set_context(request, set_id))
    patch_vary_headers(response, ["HX-Request"])
    return response


@login_required
@require_POST
def drill_answer(request: HttpRequest, set_id: int, position: int) -> HttpResponse:
    try:
        item = selectors.drill_item_owned(user=request.user, set_id=set_id, position=position)
    except DrillItem.DoesNotExist:
        raise Http404("No such drill.") from None
    error, status = "", 200
    try:
        check_rate(
            client=client_key(request),
            action="check",
            per_minute=settings.NAPKIN_RATE_PER_MINUTE,
        )
        with cpu_budget(client=client_key(request)):
            services.drill_item_answer(item=item, answer=request.POST.get("answer", ""))
    except services.DrillAnswerError as exc:
        error, status = exc.message, exc.status
    except LimitExceeded as exc:
        error, status = str(exc), 429
    if not error and not request.htmx:
        return redirect(reverse("drills:set", args=[set_id]) + f"#drill-{position}")
    context = _set_context(request, set_id) | {
        "error": error,
        "error_position": position,
        "answer_text": request.POST.get("answer", "")[:500],
    }
    template = "drills/set.html#drill-set" if request.htmx else "drills/set.html"
    return render(request, template, context, status=status)


@login_required
@require_safe
def progress_page(request: HttpRequest) -> HttpResponse:
    data = selectors.progress(user=request.user)
    weeks = data.weeks
    context = {
        "progress": data,
        "step_chart": charts.heat_chart(
            "chart-steps",
            "Verdicts per step, week by week",
            "Mean verdict on each step of the framework per week; S marks self-checked "
            "verdicts, M mock interviews.",
            data.steps,
            weeks,
        ),
        "concept_chart": charts.heat_chart(
            "chart-concepts",
            "Verdicts per concept, week by week",
            "Mean verdict per concept, from graded steps and drills, weakest first.",
            data.concepts,
            weeks,
        ),
        "drill_chart": charts.heat_chart(
            "chart-drills",
            "Drill verdicts per kind, week by week",
            "Share of drills answered right per kind (close counts half).",
            data.drills,
            weeks,
        ),
        "weeks_shown": selectors.PROGRESS_WEEKS,
    }
    return render(request, "drills/progress.html", context)


@login_required
@require_safe
def progress_export(request: HttpRequest) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        selectors.progress_csv(user=request.user), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="progress.csv"'
    return response
