"""The candidate's practice flow: start, work a step, autosave, submit, feedback, scorecard.

Every view loads the attempt through `_own_attempt`, fragments included, so a candidate can
only ever reach their own attempts.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from practice import (
    autosave,
    extensions,
    feedback,
    napkin,
    page_cache,
    self_check,
    step_page,
    views,
)
from practice import services as flow
from practice.autosave import StaleDraft
from practice.form_posts import form_post
from practice.history import candidate_history
from practice.models import Attempt, StepAnswer, Submission
from practice.scorecard import scorecard
from practice.selectors import attempt_number
from practice.slo import NUMBER_FIELDS, TEXT_FIELDS
from questionbank import STEP_KEYS
from questions import selectors
from rate_limits import LimitExceeded, calculation_budget


def _own_attempt(request: HttpRequest, attempt_id: int) -> Attempt:
    """The signed-in user's attempt, or 404 for anyone else's (never a 403 that confirms it).

    Its revision loads on first use: a page served from the cache never needs it."""
    attempt = Attempt.objects.owned_by(request.user).filter(pk=attempt_id).first()
    if attempt is None:
        raise Http404("No such attempt.")
    return attempt


def _answer(request: HttpRequest, attempt: Attempt, step: str, follow_up: str = "") -> StepAnswer:
    # On a GET of the step page too this may write, once: the draft's row is created and its
    # clock started when the candidate first opens the step, since the time a step took is
    # counted from there and only the server can record that honestly.
    try:
        return flow.answer_open(attempt=attempt, step_key=step, follow_up_id=follow_up)
    except flow.FlowError as exc:
        raise Http404(str(exc)) from None


def _own_answer(
    request: HttpRequest, attempt_id: int, step: str, follow_up: str = ""
) -> tuple[Attempt, StepAnswer]:
    """The signed-in user's attempt and their draft for a step (created on first use)."""
    attempt = _own_attempt(request, attempt_id)
    answer = StepAnswer.objects.filter(
        attempt_id=attempt.pk, step_key=step, follow_up_id=follow_up
    ).first()
    if answer is None:
        return attempt, _answer(request, attempt, step, follow_up)
    answer.attempt = attempt
    return attempt, answer


def _posted_answer(request: HttpRequest, step: str) -> dict:
    """The POSTed answer form as the keyword arguments of a draft save or a submit: text,
    fields, base version and seconds. FlowError for a form without usable numbers."""
    base_version = autosave.posted_version(request.POST)
    try:
        seconds = int(request.POST.get("seconds", "0") or 0)
    except ValueError:
        raise flow.FlowError(autosave.FORM_INCOMPLETE) from None
    return {
        "text": request.POST.get("text", ""),
        "fields": step_page.fields_from_post(step, request.POST),
        "base_version": base_version,
        "seconds": seconds,
    }


def _step_page(attempt_id: int, step: str = "estimate", follow_up: str = "", **_) -> str:
    kwargs = {"attempt_id": attempt_id, "step": step}
    if follow_up:
        return reverse("attempt_follow_up", kwargs=kwargs | {"follow_up": follow_up})
    return reverse("attempt_step", kwargs=kwargs)


def _attempt_page(attempt_id: int, **_) -> str:
    return reverse("attempt", kwargs={"attempt_id": attempt_id})


# What a step's answer form posts that a candidate typed, with the name the kept-text page
# gives each (the quantity boxes, expr_<id>, are named by their quantity).
_TYPED_FIELDS = {
    "text": "Your answer",
    "diagram": "Diagram (Mermaid text)",
    "worksheet": "Worksheet",
    **{f.name: f"SLO card: {f.label}" for f in TEXT_FIELDS + NUMBER_FIELDS},
}


def _typed(post) -> list[tuple[str, str]]:
    """What a step's form posted that the candidate typed, as (label, text) to give back."""
    typed = []
    for name, value in post.items():
        value = str(value)
        if not value.strip():
            continue
        if name in _TYPED_FIELDS:
            typed.append((_TYPED_FIELDS[name], value))
        elif name.startswith("expr_"):
            typed.append((f"Check box: {name.removeprefix('expr_')}", value))
    return typed


def _for_owner(page):
    """Where a GET of a post-only address goes: `page`, for the attempt's owner (anyone
    else's: 404, as ever)."""

    def opened(request: HttpRequest, **kwargs) -> str:
        _own_attempt(request, kwargs["attempt_id"])
        return page(**kwargs)

    return opened


# The addresses a step page's forms post to: a post without htmx after the session expired
# gives back what was typed.
_step_post = form_post(_step_page, owner_page=_for_owner(_step_page), typed=_typed)
_attempt_post = form_post(_attempt_page, owner_page=_for_owner(_attempt_page), typed=_typed)


def _self_check_page(request: HttpRequest, *, attempt_id: int, submission_id: int) -> str:
    """Where a GET of a submission's self-check address goes, for the attempt's owner: that
    submission's own step, at its self-check (anyone else's: 404)."""
    attempt = _own_attempt(request, attempt_id)
    answer = get_object_or_404(
        StepAnswer.objects.only("step_key", "follow_up_id"),
        submissions__pk=submission_id,
        attempt=attempt,
    )
    return step_page.step_url(attempt, answer.step_key, answer.follow_up_id) + "#self-check"


# A self-check posts per submission: opened in the browser, it leads to that submission's step
# (not the attempt's open step); signed out, to the attempt, which says no more than the URL.
_self_check_post = form_post(_attempt_page, owner_page=_self_check_page, typed=_typed)


def _fragment(template: str, context: dict, status: int = 200) -> HttpResponse:
    """A fragment that needs nothing from the request (no CSRF token, no user, no messages),
    rendered without the context processors. Its context names every variable the template
    reads: a missing one costs the template engine an exception each time."""
    return HttpResponse(render_to_string(template, context), status=status)


def _save_status(answer: StepAnswer, refused: flow.FlowError | None = None) -> HttpResponse:
    """The autosave's answer for a step (`autosave.save_status`)."""
    return autosave.save_status(
        "interview/attempt_step.html",
        "answer",
        answer,
        refused=refused,
        oob=False,
        save_note=extensions.save_note(answer.attempt_id),
    )


def _with_card_errors(
    response: HttpResponse, request: HttpRequest, step: str, follow_up: str
) -> HttpResponse:
    """`response` with, out of band, why each SLO card figure posted is not read, if it is
    not (`step_page.card_figure_errors`): told at the field while the candidate works, saved
    or not, since it is about the text typed."""
    card = step_page.card_figure_errors(step, follow_up, request.POST)
    if card is not None:
        fragment = render_to_string(
            "interview/attempt_step.html#card-figure-errors", {"card": card}, request=request
        )
        response.content += fragment.encode()
    return response


@login_required
@require_POST
def attempt_start(request: HttpRequest, slug: str) -> HttpResponse:
    revision = selectors.question_current_revision(slug)
    try:
        attempt, created = flow.attempt_start_or_resume(user=request.user, revision=revision)
    except LimitExceeded as exc:
        return views.question_page(request, slug, refusal=str(exc), status=429)
    if not created:
        messages.info(
            request, "You have an attempt open with nothing written in it yet: carry on here."
        )
    return redirect("attempt_step", attempt_id=attempt.pk, step="clarify")


@login_required
@require_safe
def attempt_resume(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = _own_attempt(request, attempt_id)
    return redirect("attempt_step", attempt_id=attempt.pk, step=step_page.next_step(attempt))


@login_required
@require_safe
# The page holds a live draft and the version it was saved at: Back or Forward must fetch it
# again, since a copy from the browser's cache shows older text and a stale version, whose
# next autosave is refused as if another tab had written.
@never_cache
def attempt_step(
    request: HttpRequest, attempt_id: int, step: str, follow_up: str = ""
) -> HttpResponse:
    attempt = _own_attempt(request, attempt_id)
    if step not in STEP_KEYS:
        raise Http404("No such step.")

    def build() -> HttpResponse:
        try:
            # This GET may write once, the draft's row and its clock (why: `_answer`).
            answer = flow.answer_open(attempt=attempt, step_key=step, follow_up_id=follow_up)
        except flow.FollowUpLocked as exc:
            # A follow-up not open yet (a link kept from another attempt, a guessed address)
            # leads to its step, which says why, rather than to a bare 404 (a redirect is
            # never stored as the page).
            messages.info(request, str(exc))
            return redirect(step_page.step_url(attempt, step) + "#follow-ups")
        except flow.FlowError as exc:
            raise Http404(str(exc)) from None
        context = step_page.step_context(attempt=attempt, answer=answer)
        return page_cache.render(request, "interview/attempt_step.html", context)

    # The page shows its own draft, and napkin math shows the SLO card's numbers as names.
    shows = [(step, follow_up)] + ([("clarify", "")] if step == "estimate" else [])
    return page_cache.respond(request, attempt, build, shows)


@_step_post
def draft_autosave(
    request: HttpRequest, attempt_id: int, step: str, follow_up: str = ""
) -> HttpResponse:
    _attempt, answer = _own_answer(request, attempt_id, step, follow_up)
    try:
        answer = flow.draft_save(answer=answer, **_posted_answer(request, step))
    except flow.FlowError as exc:  # a stale tab's (StaleDraft) included
        return _with_card_errors(_save_status(answer, refused=exc), request, step, follow_up)
    return _with_card_errors(_save_status(answer), request, step, follow_up)


@_step_post
def step_submit(
    request: HttpRequest, attempt_id: int, step: str, follow_up: str = ""
) -> HttpResponse:
    attempt, answer = _own_answer(request, attempt_id, step, follow_up)
    status = 200
    posted = None
    try:
        posted = _posted_answer(request, step)
        outcome = flow.step_submit(answer=answer, **posted)
        answer.refresh_from_db()
        context = {
            "answer": answer,
            "submission": outcome.submission,
            "saved_at": autosave.saved_at(),
            # Said beside the button: the feedback may be far below it (after a load test).
            "submitted": True,
            "save_note": extensions.save_note(attempt.pk),
        }
        # Out of band, without a reload: the progress bar shows this step as submitted, and
        # the follow-up list opens the next follow-up as the next action.
        context |= step_page.after_submit_context(attempt=attempt, answer=answer)
    except StaleDraft as exc:
        if not request.htmx:
            return _refused_page(request, attempt, exc.current, posted, exc)
        context, status = {"answer": exc.current, "conflict": str(exc)}, 409
    except LimitExceeded as exc:
        # The draft was saved before the limit was checked: the status says so, and the
        # refusal is told beside it (htmx swaps a 429, see base.html's responseHandling).
        answer.refresh_from_db()
        context = {"answer": answer, "refused": str(exc), "saved_at": autosave.saved_at()}
        status = 429
    except flow.UnreadFigures as exc:
        # The card was saved as typed before the refusal: the status says saved, the refusal
        # is told beside Submit, and the focus goes to the first figure not read.
        answer.refresh_from_db()
        context = {"answer": answer, "refused": str(exc), "saved_at": autosave.saved_at()}
        context["refused_focus"], status = exc.fields[0], 422
    except flow.FlowError as exc:
        answer.refresh_from_db()
        if not request.htmx:
            return _refused_page(request, attempt, answer, posted, exc)
        context, status = {"answer": answer, "error": str(exc)}, 422
        if _draft_holds(answer, posted):
            # The refusal is of the submission, not of the text: the autosave already has
            # what was posted, so the status says saved and the refusal is told beside it.
            context = {"answer": answer, "refused": str(exc)}
    if not request.htmx:
        # Without JavaScript: back to the step page, where the feedback shows; or, past the
        # rate limit, the refusal beside the draft, which was saved before the limit was
        # checked and so is exactly what was posted.
        if status == 200:
            return redirect(step_page.step_url(attempt, step, follow_up) + "#feedback")
        full = step_page.step_context(attempt=attempt, answer=answer)
        full["form_error"] = context["refused"]
        full["refused_focus"] = context.get("refused_focus", "")
        return render(request, "interview/attempt_step.html", full, status=status)
    # A refused submit replaces the feedback panel too: the panel shows the submission before,
    # which still counts (and whose self-check may be half done), beneath the refusal.
    shown = context.get("submission")
    if shown is None:
        shown = context["answer"].submissions.order_by("-number").first()
        if shown is not None:  # the partial then refreshes the progress out of band as well
            context |= step_page.after_submit_context(attempt=attempt, answer=context["answer"])
    context.update(
        feedback.feedback_context(attempt=attempt, answer=context["answer"], submission=shown)
    )
    response = render(request, "interview/attempt_step.html#submit-result", context, status=status)
    return _with_card_errors(response, request, step, follow_up)


def _draft_holds(answer: StepAnswer, posted: dict | None) -> bool:
    """Whether the stored draft is exactly the posted answer form (its text and every posted
    field), at the version that form was loaded at."""
    if not posted or not answer.version or answer.version != posted["base_version"]:
        return False
    fields = answer.fields or {}
    return answer.text == posted["text"] and all(
        fields.get(name) == value for name, value in posted["fields"].items()
    )


def _refused_page(
    request: HttpRequest,
    attempt: Attempt,
    answer: StepAnswer,
    posted: dict | None,
    refused: flow.FlowError,
) -> HttpResponse:
    """The step page after a post from the page without JavaScript (a Submit or a Check)
    whose save was refused: a stale tab's (StaleDraft, 409) or any other (422). Nothing was
    stored, and the page is all the candidate has of what they typed, so its boxes show the
    posted form (`step_page.step_context`'s `typed`) at the version that form had: a stale
    tab's next post is refused again, never written over the newer draft. `posted` is None
    when the form itself was unreadable; then the stored draft shows."""
    stale = isinstance(refused, StaleDraft)
    context = step_page.step_context(attempt=attempt, answer=answer, typed=posted)
    context["form_error"] = str(refused)
    # Reloading this page would post the form again (and be refused again): the newer
    # version is a link away.
    context["newer_url"] = (
        step_page.step_url(attempt, answer.step_key, answer.follow_up_id) if stale else ""
    )
    return render(request, "interview/attempt_step.html", context, status=409 if stale else 422)


@login_required
@require_safe
def submission_feedback(request: HttpRequest, attempt_id: int, submission_id: int) -> HttpResponse:
    attempt = _own_attempt(request, attempt_id)
    if not request.htmx:
        # The panel is a fragment of the step page, unstyled on its own: opened directly (a
        # link copied from the page source, a new tab) it leads to the step, which shows it.
        answer = get_object_or_404(
            StepAnswer.objects.only("step_key", "follow_up_id"),
            submissions__pk=submission_id,
            attempt=attempt,
        )
        response = redirect(
            step_page.step_url(attempt, answer.step_key, answer.follow_up_id) + "#feedback"
        )
        patch_vary_headers(response, ["HX-Request"])
        return response
    shown = request.GET.get("shown", "")
    if shown.removesuffix("-late") in (
        Submission.GradeStatus.QUEUED,
        Submission.GradeStatus.GRADING,
    ):
        # The panel sits in a live region: a poll that would swap in the same status answers
        # 204 (no swap), so a screen reader is not told "Queued for grading" every second.
        row = (
            Submission.objects.filter(pk=submission_id, answer__attempt=attempt)
            .values_list("grade_status", "status_changed_at")
            .first()
        )
        if row is not None and feedback.panel_status(*row) == shown:
            return HttpResponse(status=204)

    def build() -> HttpResponse:
        submission = get_object_or_404(
            Submission.objects.select_related("answer"), pk=submission_id, answer__attempt=attempt
        )
        context = feedback.feedback_context(
            attempt=attempt, answer=submission.answer, submission=submission
        )
        response = page_cache.render(request, "interview/attempt_step.html#feedback", context)
        patch_vary_headers(response, ["HX-Request"])
        return response

    return page_cache.respond(request, attempt, build)


@_self_check_post
def submission_self_check(
    request: HttpRequest, attempt_id: int, submission_id: int
) -> HttpResponse:
    """Save the candidate's self-check ratings of their own submission (the whole form, at
    each choice); htmx gets the save status with the score line out of band."""
    attempt = _own_attempt(request, attempt_id)
    submission = get_object_or_404(
        Submission.objects.select_related("answer"), pk=submission_id, answer__attempt=attempt
    )
    submission.answer.attempt = attempt
    ratings, wrong_ideas = self_check.ratings_from_post(request.POST)
    refused = None
    try:
        self_check.self_check_save(
            submission=submission,
            ratings=ratings,
            wrong_ideas=wrong_ideas,
            base_version=autosave.posted_version(request.POST),
        )
    except flow.FlowError as exc:  # a stale tab's (StaleDraft) included
        refused = exc
    answer = submission.answer
    if not request.htmx:
        # Without JavaScript: back to the self-check, which shows what is saved.
        if refused is not None:
            messages.error(request, str(refused))
        url = step_page.step_url(attempt, answer.step_key, answer.follow_up_id)
        return redirect(url + "#self-check")
    context = feedback.feedback_context(attempt=attempt, answer=answer, submission=submission)
    context["saved_response"] = refused is None
    return autosave.save_status(
        "interview/_self_check.html",
        "self_check_row",
        context.get("self_check", {}).get("row"),
        refused=refused,
        **context,
    )


@_step_post
def quantity_check(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt, answer = _own_answer(request, attempt_id, "estimate")
    if not request.htmx:
        return _quantity_check_without_javascript(request, attempt, answer)
    quantity_id = request.POST.get("quantity", "")
    try:
        result = _quantity_verdict(request, attempt, answer, quantity_id)
    except (flow.FlowError, LimitExceeded) as exc:
        return render(
            request,
            "interview/attempt_step.html#check-result",
            {"quantity_id": quantity_id, "error": str(exc)},
            status=429 if isinstance(exc, LimitExceeded) else 422,
        )
    flow.quantity_check_store(answer=answer, quantity_id=quantity_id, check=result)
    return render(
        request,
        "interview/attempt_step.html#check-result",
        {"quantity_id": quantity_id, "check": napkin.check_for_page(result)},
    )


def _quantity_verdict(
    request: HttpRequest, attempt: Attempt, answer: StepAnswer, quantity_id: str
) -> dict:
    """The checker's verdict on the posted expression for one quantity (`napkin.quantity_verdict`),
    within the candidate's calculation budget. FlowError or LimitExceeded when refused."""
    expression = request.POST.get(f"expr_{quantity_id}", request.POST.get("expression", ""))[:500]
    if extensions.feedback_withheld(attempt.pk):
        raise flow.FlowError(
            "In a mock interview the numbers are checked at the end: the report has them."
        )
    with calculation_budget(request, action="check"):
        return napkin.quantity_verdict(
            attempt=attempt,
            quantity_id=quantity_id,
            expression=expression,
            # A post without the worksheet (a bare check form) uses the saved draft's.
            worksheet=request.POST.get("worksheet", answer.fields.get("worksheet", "")),
        )


def _quantity_check_without_javascript(
    request: HttpRequest, attempt: Attempt, answer: StepAnswer
) -> HttpResponse:
    """A check from the page without JavaScript: its Check button posts the whole answer form
    here, which is saved first, so the step page it returns to keeps everything typed. The
    button names its quantity; Enter in a box (the form's default button) names none, and
    every box filled in is checked. A refused save is told on the step page, with what was
    posted still in its boxes (`_refused_page`), and nothing is checked."""
    if "base_version" in request.POST:  # the answer form (a bare check form carries none)
        posted = None
        try:
            posted = _posted_answer(request, "estimate")
            answer = flow.draft_save(answer=answer, **posted)
        except flow.FlowError as exc:  # a stale tab's (StaleDraft) included
            answer.refresh_from_db()
            return _refused_page(request, attempt, answer, posted, exc)
    if "quantity" in request.POST:
        quantity_ids = [request.POST["quantity"]]
    else:
        spec = attempt.revision.question_spec.step("estimate")
        quantity_ids = [
            q.id for q in spec.quantities if request.POST.get(f"expr_{q.id}", "").strip()
        ]
    url = step_page.step_url(attempt, "estimate")
    for quantity_id in quantity_ids:
        try:
            result = _quantity_verdict(request, attempt, answer, quantity_id)
        except (flow.FlowError, LimitExceeded) as exc:
            messages.error(request, str(exc))
            return redirect(url + f"#q-{quantity_id}")
        flow.quantity_check_store(answer=answer, quantity_id=quantity_id, check=result)
    return redirect(url + (f"#check-{quantity_ids[0]}" if quantity_ids else ""))


@_step_post
def worksheet_evaluate(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = _own_attempt(request, attempt_id)
    try:
        with calculation_budget(request, action="worksheet evaluation"):
            text = request.POST.get("worksheet", "")
            lines = napkin.worksheet_lines(attempt=attempt, text=text)
    except (LimitExceeded, flow.FlowError) as exc:
        status = 429 if isinstance(exc, LimitExceeded) else 422
        context = {"error": str(exc), "lines": []}
        return _fragment("interview/attempt_step.html#worksheet-lines", context, status)
    context = {"error": napkin.worksheet_clipped(text), "lines": lines}
    return _fragment("interview/attempt_step.html#worksheet-lines", context)


@_attempt_post
def attempt_finish(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = _own_attempt(request, attempt_id)
    elsewhere = extensions.attempt_finished(attempt)  # e.g. a mock interview's report
    if elsewhere:
        return redirect(elsewhere)
    if attempt.finished_at is None:
        # One click on the last step's pager must not finish an attempt with steps left
        # unsubmitted without saying which: the candidate confirms on a page that names them
        # (a form, so it works without JavaScript). With nothing submitted there is nothing
        # to score, and the page says so instead of finishing.
        missing = step_page.unsubmitted_steps(attempt)
        if missing and (len(missing) == len(STEP_KEYS) or request.POST.get("confirm") != "yes"):
            context = {
                "attempt": attempt,
                "attempt_number": attempt_number(attempt),
                "revision": attempt.revision,
                "missing": missing,
                "nothing_submitted": len(missing) == len(STEP_KEYS),
                "back_url": step_page.step_url(attempt, STEP_KEYS[-1]),
            }
            return render(request, "interview/finish_confirm.html", context)
    flow.attempt_finish(attempt_id=attempt.pk)
    return redirect("attempt_scorecard", attempt_id=attempt.pk)


@login_required
@require_safe
def attempt_scorecard(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = _own_attempt(request, attempt_id)
    elsewhere = extensions.scorecard_redirect(attempt)  # e.g. a mock interview still running
    if elsewhere:
        return redirect(elsewhere)
    context = scorecard(attempt) | {"scorecard_fragments": extensions.scorecard_fragments(attempt)}
    return render(request, "interview/scorecard.html", context)


@login_required
@require_safe
def history(request: HttpRequest) -> HttpResponse:
    context = candidate_history(request.user, page=request.GET.get("page"))
    return render(request, "interview/history.html", context)
