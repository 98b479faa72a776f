"""Mock-interview pages: the candidate's session page and live panel, the invite link, the
interviewer's live view with its nudges, follow-ups and blind scores, the report (HTML,
Markdown, a signed share link) and the replay.

Who may see what is checked in every view, fragments included: the candidate's views load
the session through `_candidate_session`, the interviewer's through `_interviewer_session`,
the report through `_party_session`; anyone else gets a 404. A share link opens the report
and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from mocks import report as mock_report
from mocks import services as mock
from mocks.log import CANDIDATE_KINDS, Kind, is_mock_follow_up
from mocks.models import MockSession
from practice import services as flow
from practice.step_page import progress_context, step_url
from questionbank import STEP_KEYS
from questions import selectors
from rate_limits import LimitExceeded


def _session(session_id: int) -> MockSession:
    session = (
        MockSession.objects.select_related("attempt__revision__question", "interviewer")
        .filter(pk=session_id)
        .first()
    )
    if session is None:
        raise Http404("No such mock session.")
    return session


def _candidate_session(request: HttpRequest, session_id: int) -> MockSession:
    session = _session(session_id)
    if session.attempt.user_id != request.user.pk:
        raise Http404("No such mock session.")
    return session


def _interviewer_session(request: HttpRequest, session_id: int) -> MockSession:
    session = _session(session_id)
    if session.interviewer_id is None or session.interviewer_id != request.user.pk:
        raise Http404("No such mock session.")
    return session


def _party_session(request: HttpRequest, session_id: int) -> MockSession:
    session = _session(session_id)
    if request.user.pk not in (session.attempt.user_id, session.interviewer_id):
        raise Http404("No such mock session.")
    return session


# The candidate's panel also redraws when the session starts (the interviewer joined, or the
# candidate started alone in another tab): its clock begins to run.
PANEL_KINDS = (*CANDIDATE_KINDS, Kind.JOINED, Kind.STARTED)


RUNNING_SESSION_POLL_MS = 10_000


def _poll_ms() -> int:
    return int(settings.MOCK_POLL_SECONDS * 1000)


def _absolute(request: HttpRequest, name: str, **kwargs) -> str:
    return request.build_absolute_uri(reverse(name, kwargs=kwargs))


# --- the candidate -------------------------------------------------------------------------


@login_required
@require_POST
def mock_start(request: HttpRequest, slug: str) -> HttpResponse:
    revision = selectors.question_current_revision(slug)
    try:
        session = mock.mock_session_start(
            user=request.user, revision=revision, mode=request.POST.get("mode", "")
        )
    except mock.AlreadyRunning as exc:
        messages.info(request, str(exc))
        return redirect("mock_session", session_id=exc.session.pk)
    except (mock.MockError, LimitExceeded) as exc:
        messages.error(request, str(exc))
        return redirect("question", slug=slug)
    return redirect("mock_session", session_id=session.pk)


@login_required
@require_safe
def mock_session(request: HttpRequest, session_id: int) -> HttpResponse:
    """The candidate's session page: the clock (or, while a person is awaited, a button to
    start without them), the invite link to copy (or revoke), the way to what the candidate
    does next (the follow-up that waits, else the first step not submitted),
    and the report and its share link once it has ended."""
    session = _candidate_session(request, session_id)
    clock = mock.session_tick(session)
    token = mock.invite_token(session)
    share = mock.share_token(session)
    context = {
        "session": session,
        "revision": session.attempt.revision,
        "invite_url": _absolute(request, "mock_join", session_id=session.pk, token=token)
        if token
        else "",
        "share_url": _absolute(request, "mock_shared", token=share) if share else "",
        "next": mock_report.next_for_candidate(session, clock=clock)
        if clock.started and session.ended_at is None
        else None,
        # While a person is awaited the page changes as they join; once the clock runs it
        # counts down by itself, and the page is polled only to see the session end.
        "poll_ms": _poll_ms()
        if not clock.started or (session.mode == "human" and not session.interviewer_id)
        else max(_poll_ms(), RUNNING_SESSION_POLL_MS),
        # The steps the app probes, as the probe decides them (app mode's note names them).
        "probed_steps": [selectors.STEP_TITLES[k] for k in mock.FREE_TEXT_STEPS],
        **mock_report.clock_context(clock),
    }
    return render(request, "mock/session.html", context)


@login_required
@require_safe
def candidate_panel(request: HttpRequest, session_id: int) -> HttpResponse:
    """The candidate's live panel, polled: 204 while nothing they see is new (`after`, the
    last event the page has), else the panel again, with the clock from the server."""
    session = _candidate_session(request, session_id)
    step_key = request.GET.get("step", "")
    try:
        after = int(request.GET.get("after", ""))
    except ValueError:
        after = -1  # the first load: always render
    if after < 0 and request.htmx:
        # Only a step page's first load moves the candidate: the polls of a second tab left
        # open on another step must not flip the step (and its clock) back and forth. And
        # only htmx's load (HX-Request): a link or an image on another site, which Lax
        # cookies still sign in, cannot send that header (a cross-site fetch that tried
        # would need a CORS preflight this site never grants), so it moves nobody.
        mock.step_open(session=session, step_key=step_key)
    clock = mock.session_tick(session)
    if (
        after >= 0
        and not session.events.filter(seq__gt=after, kind__in=PANEL_KINDS).exists()
        and not _grading_settled(request, session, step_key)
    ):
        response = HttpResponse(status=204)
    else:
        context = _candidate_panel_context(session, step_key=step_key, clock=clock)
        response = render(request, "mock/candidate_panel.html", context)
    patch_vary_headers(response, ["HX-Request"])  # only htmx's load moves the candidate
    return response


def _grading_settled(request: HttpRequest, session: MockSession, step_key: str) -> bool:
    """Whether a panel drawn after the end while the step's answer was being graded (its
    poll says `grading=1`) has more to say: the grading settled, which logs no event."""
    if request.GET.get("grading") != "1" or session.ended_at is None:
        return False
    return mock_report.ended_grading(session, step_key) != "grading"


def _candidate_panel_context(session: MockSession, *, step_key: str, clock: mock.Clock) -> dict:
    """The panel's context, and once the session has ended the step page's progress bar
    (sent out of band): the end submitted the answers as they stood, and the bar counts them
    when the panel says so, not at the next reload."""
    context = mock_report.candidate_panel_context(session, step_key=step_key, clock=clock)
    context["poll_ms"] = _poll_ms()
    if context["ended"] and step_key in STEP_KEYS:
        context["progress"] = progress_context(attempt=session.attempt, step_key=step_key)
    return context


def _own_follow_up(request: HttpRequest, session_id: int, follow_up: str):
    session = _candidate_session(request, session_id)
    if not is_mock_follow_up(follow_up):
        raise Http404("No such follow-up.")
    try:
        event = mock.follow_up_event(session, follow_up)
        answer = mock.follow_up_answer(session=session, event=event)
    except flow.FlowError as exc:
        raise Http404(str(exc)) from None
    return session, answer


@login_required
@require_POST
def follow_up_draft(request: HttpRequest, session_id: int, follow_up: str) -> HttpResponse:
    """Autosave of the answer to a follow-up asked in the session (the latest text wins: the
    box is small and lives in one panel)."""
    session, answer = _own_follow_up(request, session_id, follow_up)
    if session.ended_at is not None:
        return HttpResponse("The session has ended.", status=422)
    try:
        flow.draft_save(
            answer=answer,
            text=request.POST.get("text", ""),
            fields={},
            base_version=answer.version,
        )
    except flow.FlowError as exc:
        return HttpResponse(str(exc), status=422)
    return HttpResponse("Draft saved.")


@login_required
@require_POST
def follow_up_submit(request: HttpRequest, session_id: int, follow_up: str) -> HttpResponse:
    session, answer = _own_follow_up(request, session_id, follow_up)
    error = ""
    try:
        if session.ended_at is not None:
            raise mock.MockError("The session has ended: its answers are final.")
        flow.step_submit(
            answer=answer,
            text=request.POST.get("text", ""),
            fields={},
            base_version=answer.version,
        )
    except (flow.FlowError, LimitExceeded) as exc:
        error = str(exc)
    step_key = request.POST.get("step", answer.step_key)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect(step_url(session.attempt, step_key if step_key in STEP_KEYS else "clarify"))
    clock = mock.session_tick(session)
    context = _candidate_panel_context(session, step_key=step_key, clock=clock)
    context |= {"error": error, "focus_latest": not error}
    return render(request, "mock/candidate_panel.html", context, status=422 if error else 200)


@login_required
@require_POST
def start_alone(request: HttpRequest, session_id: int) -> HttpResponse:
    """The candidate starts the clock without waiting for the interviewer (who may still
    join by the link)."""
    session = _candidate_session(request, session_id)
    try:
        if mock.start_alone(session=session, user=request.user):
            messages.success(request, "The clock is running: good luck.")
    except mock.MockError as exc:
        messages.error(request, str(exc))
    return redirect("mock_session", session_id=session.pk)


@login_required
@require_POST
def invite_new(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _candidate_session(request, session_id)
    try:
        mock.invite_issue(session=session)
        messages.success(request, "A new invite link is ready; earlier links no longer work.")
    except mock.MockError as exc:
        messages.error(request, str(exc))
    return redirect("mock_session", session_id=session.pk)


@login_required
@require_POST
def invite_revoke(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _candidate_session(request, session_id)
    mock.invite_revoke(session=session)
    messages.success(request, "The invite link is revoked: it no longer lets anyone in.")
    return redirect("mock_session", session_id=session.pk)


END_UNCONFIRMED = (
    "Tick the box to confirm that you want to end the session now: nothing has ended, "
    "and the clock runs on."
)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
@never_cache  # back, after the end, asks the server again (and finds the report)
def session_end(request: HttpRequest, session_id: int) -> HttpResponse:
    """End the session early (the candidate or the interviewer): answers are submitted as
    they stand, as when the time runs out. GET: the page that says so and asks for a ticked
    box; POST: end, only with that box ticked (`confirm=yes`), so that a mis-tap, or a
    one-click form left in an old tab, ends nothing (422, with the page again). `step` (a
    step key, from the last step's Finish) makes "Keep going" lead back to that step."""
    session = _party_session(request, session_id)
    clock = mock.session_tick(session)  # a session whose time is up ends as "time"
    if session.ended_at is not None:
        return redirect("mock_report", session_id=session.pk)
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        mock.session_end(session=session, reason="ended early")
        return redirect("mock_report", session_id=session.pk)
    is_candidate = request.user.pk == session.attempt.user_id
    # The candidate who came from a step (Finish on the last one) goes back to it.
    back_step = request.POST.get("step") if request.method == "POST" else request.GET.get("step")
    back_step = back_step if is_candidate and back_step in STEP_KEYS else ""
    if back_step:
        back_url = step_url(session.attempt, back_step)
    else:
        back_url = reverse("mock_session" if is_candidate else "mock_interview", args=[session.pk])
    context = {
        "session": session,
        "revision": session.attempt.revision,
        "is_candidate": is_candidate,
        "back_url": back_url,
        "back_step": back_step,
        "back_step_title": selectors.STEP_TITLES.get(back_step, ""),
        "error": END_UNCONFIRMED if request.method == "POST" else "",
        **mock_report.clock_context(clock),
    }
    status = 422 if request.method == "POST" else 200
    return render(request, "mock/end_confirm.html", context, status=status)


# --- the invite link -------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD", "POST"])
def mock_join(request: HttpRequest, session_id: int, token: str) -> HttpResponse:
    """GET: what the link is for, and a button to join; POST: join (the link is used up).
    Every refusal is a page that says why, with status 403. The interviewer who already
    joined goes back to their page instead: the link, opened again from their mail or
    posted twice, is used up by them, and nothing else leads them back. Signed out, the
    page says what the link is for and offers both ways in, each coming back to it: the one
    invited may have no account yet, and a bare log-in form would not say why it is asked.
    It checks no token then, so it tells a stranger nothing of whether a link is valid."""
    if not request.user.is_authenticated:
        if request.method == "POST":
            return redirect_to_login(request.get_full_path())
        return render(request, "mock/join_signed_out.html", {"next": request.get_full_path()})
    if MockSession.objects.filter(pk=session_id).interviewed_by(request.user).exists():
        return redirect("mock_interview", session_id=session_id)
    if request.method == "POST":
        try:
            session = mock.invite_accept(session_id=session_id, token=token, user=request.user)
        except mock.LinkRefused as exc:
            return render(request, "mock/refused.html", {"reason": str(exc)}, status=403)
        return redirect("mock_interview", session_id=session.pk)
    # A GET checks the link without using it up (a preview of the link must not spend it).
    try:
        session = mock.invite_check(session_id=session_id, token=token, user=request.user)
    except mock.LinkRefused as exc:
        return render(request, "mock/refused.html", {"reason": str(exc)}, status=403)
    return render(request, "mock/join.html", {"session": session, "token": token})


# --- the interviewer -----------------------------------------------------------------------


@login_required
@require_safe
def interview_page(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _interviewer_session(request, session_id)
    clock = mock.session_tick(session)
    context = mock_report.live_context(session, clock=clock)
    context["poll_ms"] = _poll_ms()
    return render(request, "mock/interview.html", context)


@login_required
@require_safe
def interview_events(request: HttpRequest, session_id: int) -> HttpResponse:
    """The live part of the interviewer's page, polled: 204 when no event is newer than
    `after` and no grade arrived since `graded`; polling stops once the session has ended."""
    session = _interviewer_session(request, session_id)
    clock = mock.session_tick(session)
    try:
        after = int(request.GET.get("after", ""))
        graded = int(request.GET.get("graded", ""))
    except ValueError:
        after = graded = -1
    if (
        after >= 0
        and not session.events.filter(seq__gt=after).exists()
        and mock_report.graded_count(session) == graded
    ):
        return HttpResponse(status=204)
    context = mock_report.live_context(session, clock=clock)
    context["poll_ms"] = _poll_ms()
    context["polled"] = True
    return render(request, "mock/interview.html#live", context)


def _interviewer_action(
    request: HttpRequest, session: MockSession, action, done: str = "Sent."
) -> HttpResponse:
    try:
        action()
        message, status = done, 200
    except flow.FlowError as exc:
        message, status = str(exc), 422
    if not request.htmx:
        if status == 200:
            messages.success(request, message)
        else:
            messages.error(request, message)
        return redirect("mock_interview", session_id=session.pk)
    return render(
        request, "mock/action_status.html", {"message": message, "ok": status == 200}, status=status
    )


def _interviewer_says(
    request: HttpRequest, session_id: int, say: Callable[..., object]
) -> HttpResponse:
    """What the interviewer types to the candidate (a nudge, a follow-up), passed to `say`."""
    session = _interviewer_session(request, session_id)
    text = request.POST.get("text", "")
    return _interviewer_action(request, session, lambda: say(session=session, text=text))


@login_required
@require_POST
def interview_nudge(request: HttpRequest, session_id: int) -> HttpResponse:
    return _interviewer_says(request, session_id, mock.nudge_send)


@login_required
@require_POST
def interview_ask(request: HttpRequest, session_id: int) -> HttpResponse:
    return _interviewer_says(request, session_id, mock.follow_up_ask)


@login_required
@require_POST
def interview_score(request: HttpRequest, session_id: int, step: str) -> HttpResponse:
    """The interviewer's blind score of a step; the answer is the step's block, now showing
    the graders' verdicts beside theirs."""
    session = _interviewer_session(request, session_id)
    verdicts = {
        key.removeprefix("point-"): value
        for key, value in list(request.POST.items())[:100]
        if key.startswith("point-")
    }
    error = ""
    try:
        mock.step_score_blind(session=session, step_key=step, verdicts=verdicts)
    except flow.FlowError as exc:
        error = str(exc)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect(
            reverse("mock_interview", kwargs={"session_id": session.pk}) + f"#score-{step}"
        )
    clock = mock.session_tick(session)
    context = mock_report.live_context(session, clock=clock)
    block = next((s for s in context["steps"] if s["key"] == step), None)
    if block is None:
        raise Http404("No such step.")
    context |= {"s": block, "error": error}
    return render(request, "mock/interview.html#step-score", context, status=422 if error else 200)


@login_required
@require_POST
def interview_communication(request: HttpRequest, session_id: int) -> HttpResponse:
    """The interviewer's score for communication, once; the answer is its form again, as the
    page draws it from now on: the score ticked and final (a refusal said above it)."""
    session = _interviewer_session(request, session_id)
    verdict = request.POST.get("communication", "")
    error = ""
    try:
        mock.communication_score(session=session, verdict=verdict)
    except flow.FlowError as exc:
        error = str(exc)
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, f"Scored: {verdict}.")
        return redirect(
            reverse("mock_interview", kwargs={"session_id": session.pk}) + "#communication-score"
        )
    context = {
        "session": session,
        "communication": mock.interviewer_scores(session).get("", {}).get("communication", ""),
        "error": error,
    }
    return render(
        request, "mock/interview.html#communication", context, status=422 if error else 200
    )


@login_required
@require_POST
def interview_feedback(request: HttpRequest, session_id: int, step: str) -> HttpResponse:
    """The interviewer's written feedback on a step, or overall; also after the end."""
    session = _interviewer_session(request, session_id)
    if step == mock.OVERALL_SLUG:
        step_key = mock.OVERALL
    elif step in STEP_KEYS:
        step_key = step
    else:
        raise Http404("No such step.")
    text = request.POST.get("text", "")
    return _interviewer_action(
        request,
        session,
        lambda: mock.feedback_write(
            session=session, user=request.user, step_key=step_key, text=text
        ),
        done="Saved.",
    )


# --- the report ----------------------------------------------------------------------------


REPORT_NOT_YET = (
    "The report opens when the session ends: until then nobody sees the rubric or the "
    "graders' verdicts of a running interview."
)


def _report_not_yet(request: HttpRequest, session: MockSession) -> HttpResponse:
    """The refusal of a running session's report, with the way back to it: History links
    every mock attempt's report, a running one's too."""
    if request.user.pk == session.attempt.user_id:
        back_url, back_label = reverse("mock_session", args=[session.pk]), "Back to your session"
    else:
        back_url, back_label = reverse("mock_interview", args=[session.pk]), "Back to the interview"
    context = {
        "heading": "The report is not ready yet",
        "reason": REPORT_NOT_YET,
        "back_url": back_url,
        "back_label": back_label,
    }
    return render(request, "mock/refused.html", context, status=403)


def _shows_matcher(request: HttpRequest, session: MockSession) -> bool:
    """Whether the viewer sees the offline matcher's verdicts (advisory) in the report: the
    person who judges the candidate (the session's interviewer), never the candidate or a
    share link, for whom it would read as a grade."""
    return session.interviewer_id is not None and request.user.pk == session.interviewer_id


def _hidden_steps(request: HttpRequest, session: MockSession) -> set[str]:
    """For the interviewer: the submitted steps they have not scored (blind until they do)."""
    if request.user.pk == session.interviewer_id:
        return mock_report.steps_awaiting_score(session)
    return set()


@login_required
@require_safe
def mock_report_page(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _party_session(request, session_id)
    mock.session_tick(session)
    if session.ended_at is None:
        return _report_not_yet(request, session)
    context = mock_report.report_context(
        session,
        hide_graders_for=_hidden_steps(request, session),
        show_matcher=_shows_matcher(request, session),
    )
    is_candidate = request.user.pk == session.attempt.user_id
    share = mock.share_token(session) if is_candidate else ""
    context |= {
        "shared": False,
        "is_candidate": is_candidate,
        "share_url": _absolute(request, "mock_shared", token=share) if share else "",
    }
    return render(request, "mock/report.html", context)


@login_required
@require_safe
def mock_report_markdown(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _party_session(request, session_id)
    mock.session_tick(session)
    if session.ended_at is None:
        return _report_not_yet(request, session)
    response = HttpResponse(
        mock_report.report_markdown(
            session,
            hide_graders_for=_hidden_steps(request, session),
            show_matcher=_shows_matcher(request, session),
            is_candidate=request.user.pk == session.attempt.user_id,
        ),
        content_type="text/markdown; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="mock-{session.pk}-report.md"'
    return response


@login_required
@require_POST
def share_new(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _candidate_session(request, session_id)
    try:
        mock.share_issue(session=session)
    except mock.MockError as exc:
        messages.error(request, str(exc))
        return redirect("mock_session", session_id=session.pk)
    messages.success(request, "A read-only link to this report is ready; copy it below.")
    return redirect("mock_report", session_id=session.pk)


@login_required
@require_POST
def share_revoke(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _candidate_session(request, session_id)
    mock.share_revoke(session=session)
    messages.success(request, "The report link is revoked.")
    return redirect("mock_report", session_id=session.pk)


@require_safe
def mock_shared(request: HttpRequest, token: str) -> HttpResponse:
    """The report, read-only, for whoever holds the link (no sign-in): no links to the
    attempt, the live view or anything else of the candidate's."""
    try:
        session = mock.share_resolve(token)
    except mock.LinkRefused as exc:
        return render(request, "mock/refused.html", {"reason": str(exc)}, status=403)
    if session.ended_at is None:  # a link is only issued after the end; never show a live one
        return render(request, "mock/refused.html", {"reason": REPORT_NOT_YET}, status=403)
    context = mock_report.report_context(session) | {"shared": True, "is_candidate": False}
    response = render(request, "mock/report.html", context)
    response["X-Robots-Tag"] = "noindex"
    response["Referrer-Policy"] = "no-referrer"  # the token never leaves in a Referer
    return response


@login_required
@require_safe
def mock_replay(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _party_session(request, session_id)
    try:
        version = int(request.GET["v"]) if "v" in request.GET else None
    except ValueError:
        version = None
    context = mock_report.replay_context(
        session, step_key=request.GET.get("step", "clarify"), version=version
    )
    # The replay holds only the candidate's own drafts, which the interviewer watches live
    # anyway, so it opens while the session runs; the report does not (REPORT_NOT_YET), so
    # the way up leads to the report once it has ended and to the party's live page before.
    ended = session.ended_at is not None or (
        session.ends_at is not None and session.ends_at <= timezone.now()
    )
    if ended:
        up_url, up_label = reverse("mock_report", args=[session.pk]), "Mock interview report"
    elif request.user.pk == session.attempt.user_id:
        up_url, up_label = reverse("mock_session", args=[session.pk]), "Your mock interview"
    else:
        up_url, up_label = reverse("mock_interview", args=[session.pk]), "The interview"
    context |= {"up_url": up_url, "up_label": up_label}
    return render(request, "mock/replay.html", context)
