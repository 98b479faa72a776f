"""Drill and progress pages: parse the request, call a service or a selector, render."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.template.defaultfilters import date as date_filter
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from accounts.instructors import instructor_required, signed_out_form, signin_required
from accounts.referer import referer_path
from drills import charts, engine, selectors, services
from drills.models import Assignment, DrillItem, DrillSet
from practice.form_posts import form_post
from rate_limits import LimitExceeded, calculation_budget, check_daily_quota, user_client


def _index_context(request: HttpRequest) -> dict:
    kinds = engine.drill_kinds()
    return {
        "due": selectors.cards_due(user=request.user),
        "recommendation": selectors.recommendation(user=request.user),
        "available": [k for k in kinds if k.available],
        "unavailable": [k for k in kinds if not k.available],
        "recent_sets": selectors.recent_sets(user=request.user),
        "assignments": selectors.assignments_open(user=request.user),
        "set_size": services.SET_SIZE,
    }


@signin_required
@require_safe
def drills_index(request: HttpRequest) -> HttpResponse:
    return render(request, "drills/index.html", _index_context(request))


@signin_required
@require_POST
def drill_set_start(request: HttpRequest) -> HttpResponse:
    kind = request.POST.get("kind", "").strip()
    seed_text = request.POST.get("seed", "").strip()
    error = ""
    seed = None
    if seed_text:
        # The digits 0-9 only, as every box a number is typed in: int() would also read other
        # scripts' digits, a sign and underscores ("1_0"). One past MAX_SEED's length is
        # read, and refused by its size.
        if seed_text.isascii() and seed_text.isdigit():
            seed = int(seed_text.lstrip("0")[: len(str(engine.MAX_SEED)) + 1] or "0")
        else:
            error = f"A seed is a whole number from 0 to {engine.MAX_SEED}, in the digits 0-9."
    status = 422
    if not error:
        try:
            # Each set is rows and a read of the candidate's drill history: a daily cap, as
            # for attempts, so a script cannot grow them without end. A start refused for
            # its kind or seed is checked first, so it does not use one of the day's sets.
            services.drill_set_check(kind=kind, seed=seed)
            check_daily_quota(
                client=user_client(request.user.pk),
                action="new drill set",
                per_day=settings.DRILL_SETS_PER_DAY,
                advice="Finish the sets you have started (your progress is kept), and start "
                "new ones tomorrow (UTC).",
            )
            drill_set = services.drill_set_start(user=request.user, kind=kind, seed=seed)
        except engine.DrillError as exc:
            error = str(exc)
        except LimitExceeded as exc:
            error, status = str(exc), 429
    if error:
        context = _index_context(request) | {"error": error}
        if seed_text:  # a replay: its form opens again with what was typed, to correct it
            context |= {"replay_kind": kind, "replay_seed": seed_text[:100]}
        return render(request, "drills/index.html", context, status=status)
    return redirect("drills:set", set_id=drill_set.pk)


def _set_context(request: HttpRequest, set_id: int) -> dict:
    try:
        drill_set, items = selectors.drill_set_view(user=request.user, set_id=set_id)
    except DrillSet.DoesNotExist:
        raise Http404("No such drill set.") from None
    # A drill of a kind no longer offered cannot be answered: the set goes on without it.
    current = next(
        (v.item.position for v in items if not v.item.is_answered and v.drill is not None), None
    )
    return {
        "drill_set": drill_set,
        "items": items,
        "current": current,
        "done": current is None,
        "set_size": services.SET_SIZE,
        "assigned": selectors.assignment_of_set(drill_set),
    }


@signin_required
@require_safe
# Answers arrive by htmx without a new address: Back or Forward must fetch the set again, since
# the browser's copy shows an answered drill's box still open (its answer then refused, 409).
@never_cache
def drill_set_page(request: HttpRequest, set_id: int) -> HttpResponse:
    response = render(request, "drills/set.html", _set_context(request, set_id))
    patch_vary_headers(response, ["HX-Request"])
    return response


def _set_page(set_id: int, **_) -> str:
    return reverse("drills:set", args=[set_id])


def _opened_answer_address(request: HttpRequest, set_id: int, position: int) -> str:
    if not DrillSet.objects.owned_by(request.user).filter(pk=set_id).exists():
        raise Http404("No such drill set.")
    return f"{_set_page(set_id)}#drill-{position}"


# A post after the session expired goes to log-in and back to the set (an answer is one line:
# no page of kept text).
_answer_address = form_post(_set_page, owner_page=_opened_answer_address)


@_answer_address
def drill_answer(request: HttpRequest, set_id: int, position: int) -> HttpResponse:
    try:
        item = selectors.drill_item_owned(user=request.user, set_id=set_id, position=position)
    except DrillItem.DoesNotExist:
        raise Http404("No such drill.") from None
    error, status = "", 200
    try:
        with calculation_budget(request, action="check"):
            services.drill_item_answer(item=item, answer=request.POST.get("answer", ""))
    except services.DrillAnswerError as exc:
        error, status = exc.message, exc.status
    except LimitExceeded as exc:
        error, status = str(exc), 429
    if not error and not request.htmx:
        return redirect(reverse("drills:set", args=[set_id]) + f"#drill-{position}")
    context = _set_context(request, set_id)
    answered = any(v.item.position == position and v.item.is_answered for v in context["items"])
    context |= {
        "error": error,
        "error_position": position,
        "answer_text": request.POST.get("answer", "")[:500],
        # htmx swaps the set: the answered input is gone (answered here, or already: 409),
        # so focus moves to its verdict (read out, and the next Tab reaches the next drill)
        # or to "Set done". A drill refused for its turn (409 too) has no verdict: focus
        # stays with the drill to answer.
        "answered": position if answered else None,
    }
    template = "drills/set.html#drill-set" if request.htmx else "drills/set.html"
    return render(request, template, context, status=status)


def _progress_charts(data: selectors.Progress) -> dict:
    """The progress page's three charts, for the candidate's page and the instructor's."""
    weeks = data.weeks
    return {
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


@signin_required
@require_safe
def progress_page(request: HttpRequest) -> HttpResponse:
    data = selectors.progress(user=request.user)
    context = _progress_charts(data) | {
        "assignments": selectors.assignments_open(user=request.user),
    }
    return render(request, "drills/progress.html", context)


@signin_required
@require_safe
def progress_export(request: HttpRequest) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        selectors.progress_csv(user=request.user), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="progress.csv"'
    return response


# ---------------------------------------------------------------------------------------------
# Assignments: the candidate starts one; instructors see candidates and assign


@signin_required
@require_POST
def assignment_start(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """One click: a drill assignment starts its set and opens it; a question assignment opens
    the question. Someone else's assignment is a 404."""
    try:
        assignment = Assignment.objects.for_candidate(request.user).get(pk=assignment_id)
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None
    try:
        assignment = services.assignment_start(assignment=assignment)
    except services.AssignmentError as error:
        # From a page opened before the assignment was withdrawn, the kind withdrawn or the
        # question unpublished: back to that page (a reload does not post again), the
        # sentence above the assignments still there.
        messages.error(request, str(error))
        return redirect(_page_sent_from(request))
    if assignment.drill_set_id:
        return redirect("drills:set", set_id=assignment.drill_set_id)
    return redirect("question", assignment.question.slug)


def _page_sent_from(request: HttpRequest) -> str:
    """The page of this site a form was sent from (its Referer), else the drills page."""
    path = referer_path(request)
    if path and urlsplit(path).path != request.path:
        return path
    return reverse("drills:index")


@instructor_required
@require_safe
def instructor_candidates(request: HttpRequest) -> HttpResponse:
    page = selectors.candidate_summaries(page=request.GET.get("page", 1))
    return render(
        request,
        "drills/instructor_candidates.html",
        {"page": page, "weeks_shown": selectors.PROGRESS_WEEKS, "weak_below": selectors.WEAK_BELOW},
    )


def _candidate_or_404(candidate_id: int) -> User:
    try:
        return selectors.candidate_for_instructor(candidate_id=candidate_id)
    except User.DoesNotExist:
        raise Http404("No such candidate.") from None


def _candidate_context(candidate: User, viewer: User) -> dict:
    data = selectors.progress(user=candidate)
    first = services.today()
    return _progress_charts(data) | {
        "candidate": candidate,
        "progress": data,
        "given": selectors.assignments_given(candidate=candidate, viewer=viewer),
        "choices": selectors.assignment_choices(),
        # The date field's own bounds, as services.due_date_check holds them.
        "due_min": first.isoformat(),
        "due_max": services.a_year_after(first).isoformat(),
    }


@instructor_required
@require_safe
def instructor_candidate(request: HttpRequest, candidate_id: int) -> HttpResponse:
    candidate = _candidate_or_404(candidate_id)
    # An assign form sent after the session ended comes back filled in, once signed in.
    kept = signed_out_form(request)
    context = _candidate_context(candidate, request.user) | {
        "what": kept.get("what", ""),
        "note": kept.get("note", "")[:300],
        "due": kept.get("due", "").strip()[:30],
    }
    return render(request, "drills/instructor_candidate.html", context)


@instructor_required(unsent="nothing was assigned", keep=("what", "note", "due"))
@require_POST
def instructor_assign(request: HttpRequest, candidate_id: int) -> HttpResponse:
    candidate = _candidate_or_404(candidate_id)
    what = request.POST.get("what", "")
    due_text = request.POST.get("due", "")
    source, _, key = what.partition(":")
    try:
        assignment = services.assignment_create(
            instructor=request.user,
            candidate=candidate,
            kind=key if source == "drill" else "",
            question_slug=key if source == "question" else "",
            note=request.POST.get("note", ""),
            due_on=services.due_date_parse(due_text),
        )
    except services.AlreadyAssigned as already:
        # Most often the same form sent twice (a double Enter): the one open stays, once. A
        # new due date or note is not taken: the way to change them is said, where it is
        # this instructor's to take (only its giver withdraws an assignment). Started and
        # not done is still open: it is listed once, with its way back to the work.
        open_one = already.assignment
        changed = (request.POST.get("note", "").strip() or due_text.strip()) and (
            open_one.instructor_id == request.user.pk
        )
        started = (
            f", started {_when(open_one.started_at)} and not done yet"
            if open_one.started_at
            else ""
        )
        messages.info(
            request,
            f"{selectors.assignment_title(open_one)} is already assigned to "
            f"{candidate.username}, open since {_when(open_one.created_at)}{started}: "
            "not assigned again."
            + (
                " To give it another due date or note, withdraw it and assign it again."
                if changed
                else ""
            ),
        )
    except services.AssignmentError as error:
        # The form again with what was chosen and typed: a refusal loses nothing. A due date
        # refused is told at its own field.
        field = "due_error" if isinstance(error, services.DueDateError) else "error"
        context = _candidate_context(candidate, request.user) | {
            field: str(error),
            "what": what,
            "note": request.POST.get("note", "")[:300],
            # Longer than any date: what a script sent, cut to what the field can show.
            "due": due_text.strip()[:30],
        }
        return render(request, "drills/instructor_candidate.html", context, status=422)
    else:
        due, _ = selectors.due_words(assignment.due_on, services.today())
        messages.success(
            request,
            f"Assigned {selectors.assignment_title(assignment)} to {candidate.username}"
            + (f" ({due[0].lower()}{due[1:]})." if due else "."),
        )
    return redirect("drills:instructor_candidate", candidate_id=candidate.pk)


@instructor_required(unsent="nothing was withdrawn")
@require_POST
def instructor_withdraw(
    request: HttpRequest, candidate_id: int, assignment_id: int
) -> HttpResponse:
    """The instructor who gave an assignment withdraws it, from the candidate's page. Anyone
    else's (another instructor's, another candidate's, none) is a 404; one the candidate
    started or did meanwhile, or withdrawn already (the button sent twice, or from a page
    opened before), is refused in a sentence, the page as it now stands."""
    candidate = _candidate_or_404(candidate_id)
    try:
        assignment = services.assignment_withdraw(
            instructor=request.user, candidate=candidate, assignment_id=assignment_id
        )
    except Assignment.DoesNotExist:
        raise Http404("No such assignment of yours.") from None
    except services.WithdrawRefused as refused:
        assignment = Assignment.objects.select_related("question").get(pk=assignment_id)
        title = selectors.assignment_title(assignment)
        when = _when(refused.when) if refused.when else "already"
        if refused.reason == "withdrawn":
            sentence = f"{title} was already withdrawn ({when}): nothing changed."
        else:
            sentence = (
                f"{candidate.username} already did {title} ({when}), so there is nothing to "
                "withdraw: nothing changed."
            )
        messages.error(request, sentence)
    else:
        messages.success(
            request,
            f"Withdrew {selectors.assignment_title(assignment)} from {candidate.username}: it "
            "no longer shows on their pages.",
        )
    return redirect("drills:instructor_candidate", candidate_id=candidate.pk)


def _when(moment: datetime) -> str:
    """A moment as the drill pages print it: "Dec 6, 15:45 UTC"."""
    return f"{date_filter(moment, 'M j, H:i')} {timezone.get_current_timezone_name()}"
