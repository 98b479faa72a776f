"""The instructor's editor: question list, edit with live preview, publish, files, previews.

Every view here is `instructor_required` (404 for everyone signed in but not an instructor),
the htmx fragments too; a signed-out visitor is sent to sign in, and back.
The candidate's side (reporting a problem) lives in report_views.py.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts.instructors import instructor_required
from authoring import selectors, services
from authoring.models import Draft, ProblemReport
from practice import autosave
from practice.autosave import StaleDraft
from practice.diagram import diagram_picture
from practice.errors import FlowError
from questionbank import STEP_KEYS
from questions.models import Concept, Question
from questions.selectors import STEP_TITLES, brief_rows
from rate_limits import LimitExceeded

MD_CONTENT_TYPE = "text/markdown; charset=utf-8"


@instructor_required
@require_safe
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "authoring/index.html", _index_context())


def _index_context(**extra) -> dict:
    return {"rows": selectors.question_rows(), "concepts": selectors.concept_rows(), **extra}


@instructor_required
@require_POST
def create(request: HttpRequest) -> HttpResponse:
    kind = Draft.Kind.CONCEPT if request.POST.get("kind") == "concept" else Draft.Kind.QUESTION
    try:
        draft = services.draft_new(kind=kind, slug=request.POST.get("slug", ""), user=request.user)
    except services.AuthoringError as exc:
        context = _index_context(new_error=str(exc), new_kind=kind)
        # What was typed, whole, to shorten (a page's worth: a slug is at most 50 characters).
        context["new_slug"] = request.POST.get("slug", "")[:1000]
        return render(request, "authoring/index.html", context, status=422)
    return redirect(f"authoring:{kind}", slug=draft.slug)


def _draft_or_404(kind: str, slug: str) -> Draft:
    try:
        return services.draft_open(kind, slug)
    except services.AuthoringError:
        raise Http404("No such file.") from None


def _preview_context(kind: str, slug: str, text: str) -> dict:
    """What the live preview shows: the problems with their lines, and the question (or
    concept note) as a candidate sees it once the text is valid."""
    if kind == Draft.Kind.CONCEPT:
        concept = services.concept_check(slug=slug, text=text, render=True)
        context: dict = {"kind": kind, "problems": concept.problems, "slug": slug}
        # A valid note is shown even while it holds the template's placeholders (problems
        # Publish refuses for), as a question is.
        if concept.body_html:
            context["concept_preview"] = {
                "title": concept.cf.meta["title"],
                "summary": concept.cf.meta["summary"],
                "body_html": concept.body_html,
            }
        return context
    # The problems Publish refuses for, found by the same check (a placeholder of the
    # template is one), so the preview never calls publishable a text Publish refuses.
    check = services.question_publish_check(slug=slug, text=text, render=True)
    context = {"kind": kind, "problems": check.problems, "slug": slug}
    if check.spec is not None:
        report = services.question_tests(check)
        # The file's own tests and the checks every question gets are counted apart: the
        # author knows how many tests they wrote.
        context["builtin_checks"] = sum(r.kind == "builtin" for r in report.results)
        context["own_tests"] = len(report.results) - context["builtin_checks"]
        context["test_failures"] = report.failures
        spec, rendered = check.spec, check.rendered
        context["preview"] = {
            "title": spec.title,
            "summary": spec.summary,
            "scenario_html": rendered["scenario"],
            "brief_rows": brief_rows(spec.brief),
            "constraints": spec.brief.constraints,
            "steps": [
                {
                    "number": number,
                    "title": STEP_TITLES[key],
                    "prompt_html": rendered["steps"][key]["prompt"],
                    "reference_html": rendered["steps"][key]["reference"],
                    # The step's reference diagram laid out (practice.diagram), as candidates
                    # see it beside the reference answer; None when the step has none.
                    "reference_diagram": _picture(spec.step(key).reference_diagram),
                    "follow_ups": [
                        html["prompt"]
                        for html in rendered["steps"][key].get("follow_ups", {}).values()
                    ],
                }
                for number, key in enumerate(STEP_KEYS, start=1)
            ],
        }
    return context


def _picture(text: str):
    """A diagram laid out (practice.diagram); None when there is none."""
    return diagram_picture(text) if text.strip() else None


def _editor(
    request: HttpRequest,
    *,
    slug: str,
    draft: Draft,
    text: str | None = None,
    refusal: str = "",
    refusal_problems: list | None = None,
    refusal_failures: list | None = None,
    upload_error: str = "",
    report_error: dict | None = None,
    conflict: str = "",
    base_version: int | None = None,
    newer: int | None = None,
    status: int = 200,
) -> HttpResponse:
    text = draft.text if text is None else text
    kind = draft.kind
    context = {
        "slug": slug,
        "draft": draft,
        "text": text,
        "refusal": refusal,
        # A refused Publish's problems and failing tests, each listed at its line.
        "refusal_problems": refusal_problems or [],
        "refusal_failures": refusal_failures or [],
        "upload_error": upload_error,  # a refused upload, told at the upload field
        # A refused Close of a report ({id, value, message}), told at its field.
        "report_error": report_error or {},
        "max_file_bytes": services.MAX_FILE_BYTES,  # the editor's script checks before sending
        # The version the page's saves are guarded by: the draft's, but for a stale tab's
        # text shown again (`conflict`), the version that tab loaded.
        "conflict": conflict,
        # The refusal above the page says what to do; the save status, then, only what
        # happened (the autosave's answer, alone, says it).
        "conflict_told_above": bool(conflict),
        "base_version": draft.version if base_version is None else base_version,
        "newer": newer,  # a revision published since the draft began, which publishing replaces
        "urls": {
            "editor": reverse(f"authoring:{kind}", args=[slug]),
            **{
                action: reverse(f"authoring:{kind}_{action}", args=[slug])
                for action in ("save", "preview", "publish", "upload", "download")
            },
        },
        **_preview_context(kind, slug, text),
    }
    # An upload over edits not yet published asks for a ticked box (services.draft_upload).
    context["unpublished"] = services.draft_unpublished(kind=kind, slug=slug, draft=draft)
    if draft.version:  # the save status says when the saved draft is the published text
        context["same_as_published"] = services.draft_same_as_published(
            kind=kind, slug=slug, text=draft.text
        )
    if kind == Draft.Kind.QUESTION:
        question = Question.objects.select_related("current_revision").filter(slug=slug).first()
        context["current"] = question.current_revision if question else None
        context["revisions"] = selectors.question_revisions(slug)
        reports = selectors.open_reports(slug)
        for report in reports:  # named as the candidate saw the step, not by its key
            report.step_title = STEP_TITLES.get(report.step_key, report.step_key)
        context["reports"] = reports
    else:
        context["published_concept"] = Concept.objects.filter(slug=slug).exists()
    return render(request, "authoring/edit.html", context, status=status)


@instructor_required
@require_safe
def editor(request: HttpRequest, slug: str, kind: str = Draft.Kind.QUESTION) -> HttpResponse:
    draft = _draft_or_404(kind, slug)
    return _editor(request, slug=slug, draft=draft, **_refusal_taken(request, draft))


# The session entry a refusal waits in, and the query parameter of the redirect that names
# it. The entry is keyed by a one-time token carried in that redirect, so only the request
# that follows it is told: another tab of the same session, loading the same editor at the
# same draft version, neither shows nor takes it.
REFUSALS_SESSION_KEY = "authoring-refusals"
REFUSAL_PARAM = "refusal"
# The most refusals kept for redirects not yet followed (a closed tab, a lost connection):
# each waits under its own token, and the oldest goes first, so the session stays small.
REFUSALS_KEPT = 8


def _refusal_redirect(
    request: HttpRequest,
    *,
    draft: Draft,
    refusal: str = "",
    problems: list | None = None,
    failures: list | None = None,
    newer: int | None = None,
    upload_error: str = "",
    report_error: dict | None = None,
) -> HttpResponse:
    """Post/Redirect/Get for a refused Publish or upload: the refusal waits in the session
    under a one-time token, and the editor's own address with that token shows it, once. A
    reload then reloads the editor instead of sending the form again (saving the draft again),
    the spent token showing nothing, and Back finds no page of the POST."""
    kind, slug = draft.kind, draft.slug
    token = secrets.token_urlsafe(16)
    waiting = dict(request.session.get(REFUSALS_SESSION_KEY) or {})
    waiting[token] = {
        "kind": kind,
        "slug": slug,
        "version": draft.version,  # told only beside the draft it is about
        "refusal": refusal,
        "refusal_problems": [{"line": p.line, "message": p.message} for p in problems or ()],
        "refusal_failures": [
            {"line": f.line, "test": f.test, "expected": f.expected, "got": f.got}
            for f in failures or ()
        ],
        "newer": newer,
        "upload_error": upload_error,
        "report_error": report_error,
    }
    # Entries keep their insertion order through the session's JSON: the oldest go first.
    request.session[REFUSALS_SESSION_KEY] = dict(list(waiting.items())[-REFUSALS_KEPT:])
    # A refused upload is told at its field, which takes the focus (edit.html): the browser
    # scrolls it into view. A #fragment would stop that (autofocus yields to a fragment).
    editor_url = reverse(f"authoring:{kind}", args=[slug])
    return redirect(f"{editor_url}?{urlencode({REFUSAL_PARAM: token})}")


def _refusal_taken(request: HttpRequest, draft: Draft) -> dict:
    """The refusal the redirect named by the request's token left for this editor
    (`_refusal_redirect`), taken out of the session so that it shows once; {} when there is
    none (no token, a spent or unknown one, another editor's), or when the draft has changed
    since (another tab's save, or the redirect followed late): it spoke of other text."""
    if request.method != "GET":  # a HEAD request shows nothing, so it takes nothing
        return {}
    token = request.GET.get(REFUSAL_PARAM, "")
    waiting = request.session.get(REFUSALS_SESSION_KEY) or {}
    told = waiting.get(token)
    if not told or (told.get("kind"), told.get("slug")) != (draft.kind, draft.slug):
        return {}  # another editor's token is left for that editor
    waiting = {key: entry for key, entry in waiting.items() if key != token}
    if waiting:
        request.session[REFUSALS_SESSION_KEY] = waiting
    else:
        del request.session[REFUSALS_SESSION_KEY]
    told = dict(told)
    del told["kind"], told["slug"]
    if told.pop("version", None) != draft.version:
        return {}
    return told


def _posted_number(value: str | None) -> int | None:
    return int(value) if value and value.isascii() and value.isdigit() and len(value) < 10 else None


def _posted(request: HttpRequest) -> str:
    return services.draft_text_normalise(request.POST.get("text", ""))


def _save_posted(request: HttpRequest, *, kind: str, slug: str, text: str) -> Draft:
    """Save the posted text as the draft, guarded by the version the page loaded."""
    return services.draft_save(
        kind=kind,
        slug=slug,
        text=text,
        base_version=autosave.posted_version(request.POST),
        user=request.user,
        # The revision an unsaved draft's page loaded, for the first save's base.
        base_revision=_posted_number(request.POST.get("base_revision")),
    )


def _refused(
    request: HttpRequest, *, slug: str, draft: Draft, exc: FlowError, text: str | None = None
) -> HttpResponse:
    """The editor again after a refused save, the posted text (if any) still in the box: a
    stale tab's (409) beside the newer draft, any other refusal (422) beside the draft."""
    if not isinstance(exc, StaleDraft):
        return _editor(request, slug=slug, draft=draft, text=text, refusal=str(exc), status=422)
    if text is None:  # the newer draft's own text is shown: the page may save over it
        return _editor(request, slug=slug, draft=exc.current, refusal=str(exc), status=409)
    # The stale tab's text is shown again: the page stays guarded by the version that tab
    # loaded, as after a refused autosave, so its next keystroke cannot save this text over
    # the newer draft (only a reload, after copying, moves it on).
    return _editor(
        request,
        slug=slug,
        draft=exc.current,
        text=text,
        refusal=str(exc),
        conflict=str(exc),
        base_version=autosave.posted_version(request.POST),
        status=409,
    )


@instructor_required
@require_POST
def editor_save(request: HttpRequest, slug: str, kind: str = Draft.Kind.QUESTION) -> HttpResponse:
    """Autosave (htmx: the save status) or the "Save draft" button (no JavaScript: the page)."""
    draft = _draft_or_404(kind, slug)
    text = _posted(request)
    try:
        draft = _save_posted(request, kind=kind, slug=slug, text=text)
    except FlowError as exc:  # a stale tab's (StaleDraft) included
        if request.htmx:
            return autosave.save_status("authoring/edit.html", "draft", draft, refused=exc)
        return _refused(request, slug=slug, draft=draft, exc=exc, text=text)
    if request.htmx:
        return autosave.save_status(
            "authoring/edit.html",
            "draft",
            draft,
            same_as_published=services.draft_same_as_published(
                kind=kind, slug=slug, text=draft.text
            ),
        )
    messages.success(request, f"Draft saved (version {draft.version}).")
    return redirect(f"authoring:{kind}", slug=slug)


@instructor_required
@require_POST
def editor_preview(
    request: HttpRequest, slug: str, kind: str = Draft.Kind.QUESTION
) -> HttpResponse:
    """The live preview (htmx): nothing is saved."""
    text = _posted(request)
    return render(request, "authoring/edit.html#preview", _preview_context(kind, slug, text))


@instructor_required
@require_POST
def editor_publish(
    request: HttpRequest, slug: str, kind: str = Draft.Kind.QUESTION
) -> HttpResponse:
    """Save the posted text as the draft, then publish it; a refusal says which problem or
    test stopped it and keeps the text on the page."""
    draft = _draft_or_404(kind, slug)
    text = _posted(request)
    try:
        draft = _save_posted(request, kind=kind, slug=slug, text=text)
        if kind == Draft.Kind.CONCEPT:
            saved = services.concept_publish_text(slug=slug, text=draft.text)
            messages.success(request, "Concept note published." if saved else "No change.")
            return redirect("authoring:concept", slug=slug)
        revision, created = services.question_draft_publish(
            draft=draft, replace_newer=_posted_number(request.POST.get("replace_newer"))
        )
    except services.PublishRefused as exc:  # the posted text is the saved draft by now
        return _refusal_redirect(
            request,
            draft=draft,
            refusal=str(exc),
            problems=exc.problems,
            failures=exc.failures,
            newer=exc.newer,
        )
    except FlowError as exc:  # not saved (a stale tab, a text too large): the text stays here
        return _refused(request, slug=slug, draft=draft, exc=exc, text=text)
    if created:
        messages.success(request, f"Published revision {revision.number}.")
    else:
        messages.info(request, f"Nothing new to publish: revision {revision.number} has this text.")
    return redirect("authoring:question", slug=slug)


@instructor_required
@require_POST
def editor_upload(request: HttpRequest, slug: str, kind: str = Draft.Kind.QUESTION) -> HttpResponse:
    """An uploaded .md file replaces the draft (version-guarded like any save). A refusal
    leaves the draft as it was and is told at the upload field of the editor."""
    draft = _draft_or_404(kind, slug)
    upload = request.FILES.get("file")
    if upload is None:
        return _refusal_redirect(request, draft=draft, upload_error="Choose a .md file.")
    try:
        draft = services.draft_upload(
            kind=kind,
            slug=slug,
            name=upload.name or "",
            data=upload.read(services.MAX_FILE_BYTES + 1),
            base_version=autosave.posted_version(request.POST),
            user=request.user,
            replace_unpublished=request.POST.get("replace_draft") == "yes",
        )
    except FlowError as exc:  # a stale tab's (StaleDraft) included: the editor shows the newer
        return _refusal_redirect(request, draft=draft, upload_error=str(exc))
    messages.success(request, f"{upload.name} is now the draft (version {draft.version}).")
    return redirect(f"authoring:{kind}", slug=slug)


def _markdown_file(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text.encode("utf-8"), content_type=MD_CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@instructor_required
@require_safe
def editor_download(
    request: HttpRequest, slug: str, kind: str = Draft.Kind.QUESTION
) -> HttpResponse:
    """The draft (or, with none, the published text) as <slug>.md, byte for byte."""
    return _markdown_file(_draft_or_404(kind, slug).text, f"{slug}.md")


@instructor_required
@require_POST
def question_try(request: HttpRequest, slug: str) -> HttpResponse:
    """Start a preview attempt: of the published question, or of the draft. A refusal is told
    on the editor's own address (Post/Redirect/Get, as a refused Publish), each problem listed."""
    draft = _draft_or_404(Draft.Kind.QUESTION, slug)
    text = None if request.POST.get("which") == "published" else draft.text
    try:
        attempt = services.preview_start(user=request.user, slug=slug, text=text)
    except services.TryRefused as exc:
        return _refusal_redirect(request, draft=draft, refusal=str(exc), problems=exc.problems)
    except (services.AuthoringError, LimitExceeded) as exc:
        return _refusal_redirect(request, draft=draft, refusal=str(exc))
    return redirect("attempt_step", attempt_id=attempt.pk, step="clarify")


@instructor_required
@require_safe
def revision_detail(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    return _revision_page(request, slug=slug, number=number)


def _revision_page(
    request: HttpRequest, *, slug: str, number: int, restore_error: str = "", status: int = 200
) -> HttpResponse:
    """A revision's changes, and the form that makes it the draft: guarded by the draft's
    version as the page loads it, and asking for the box where the draft holds edits not yet
    published (services.draft_restore)."""
    revision = selectors.question_revision(slug, number)
    previous, diff, coarse = selectors.revision_diff(revision)
    # The saved draft, if any (version 0 else): what the form replaces, and is guarded by.
    draft = Draft.objects.filter(kind=Draft.Kind.QUESTION, slug=slug).first()
    context = {
        "slug": slug,
        "revision": revision,
        "previous": previous,
        "diff": diff,
        "coarse": coarse,
        "draft_version": draft.version if draft else 0,
        "unpublished": services.draft_unpublished(kind=Draft.Kind.QUESTION, slug=slug, draft=draft),
        "restore_error": restore_error,  # a refused restore, told at its form
    }
    return render(request, "authoring/revision.html", context, status=status)


@instructor_required
@require_POST
def revision_restore(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """Make a published revision the draft (services.draft_restore), then open the editor on
    it. A refusal (unpublished edits and the box not ticked, a stale page) is told at the form
    on the revision's page, the draft unchanged."""
    selectors.question_revision(slug, number)  # 404 for a number that is no revision
    try:  # a form without its version is refused too (autosave.posted_version)
        draft, revision = services.draft_restore(
            slug=slug,
            number=number,
            base_version=autosave.posted_version(request.POST),
            user=request.user,
            replace_unpublished=request.POST.get("replace_draft") == "yes",
        )
    except FlowError as exc:  # a stale page's (StaleDraft) included
        status = 409 if isinstance(exc, StaleDraft) else 422
        return _revision_page(
            request, slug=slug, number=number, restore_error=str(exc), status=status
        )
    messages.success(
        request,
        f"Revision {revision.number} is now the draft (version {draft.version}); "
        "publish it to make it current.",
    )
    return redirect("authoring:question", slug=slug)


@instructor_required
@require_safe
def revision_download(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    revision = selectors.question_revision(slug, number)
    return _markdown_file(revision.source_text, f"{slug}.md")


@instructor_required
@require_POST
def report_close(request: HttpRequest, report_id: int) -> HttpResponse:
    """Close a report. A fixing revision that is not one is told at its field, the value typed
    kept (`_refusal_redirect`); a report closed already is left as it was, and said so."""
    report = get_object_or_404(ProblemReport.objects.select_related("question"), pk=report_id)
    slug = report.question.slug
    fixed_in = None
    number = request.POST.get("fixed_in", "").strip()
    error = ""
    if number and not (number.isascii() and number.isdigit() and len(number) <= 9):  # not "²"
        error = "The fixing revision is a number, e.g. 3."
    elif number:
        fixed_in = report.question.revisions.filter(number=int(number), is_published=True).first()
        if fixed_in is None:
            error = f"There is no published revision {number} of this question."
    if error and report.status == ProblemReport.Status.OPEN:
        return _refusal_redirect(
            request,
            draft=services.question_draft(slug),
            report_error={"id": report.pk, "value": number[:20], "message": error},
        )
    try:  # a report closed already (by another tab, or instructor) is refused as it stands
        services.problem_report_close(report=report, user=request.user, fixed_in=fixed_in)
    except services.AuthoringError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Report closed.")
    return redirect("authoring:question", slug=slug)


@instructor_required
@require_http_methods(["GET", "HEAD", "POST"])
def report_add_test(request: HttpRequest, report_id: int) -> HttpResponse:
    """Turn the answer a candidate shared with a report (its text and its diagram) into a test
    in the question's draft: the form proposes the offline grader's verdicts, the instructor
    sets the human ones."""
    report = get_object_or_404(
        ProblemReport.objects.select_related("question").exclude(answer_text="", answer_diagram=""),
        pk=report_id,
    )
    slug = report.question.slug
    try:
        points = services.answer_test_verdicts(
            slug=slug,
            step_key=report.step_key,
            answer=report.answer_text,
            diagram=report.answer_diagram,
        )
    except services.AuthoringError as exc:
        messages.error(request, str(exc))
        return redirect("authoring:question", slug=slug)
    error, status, expect = "", 200, {}
    if request.method == "POST":
        expect = {pid: request.POST.get(f"verdict-{pid}", "") for pid, _says, _v in points}
        try:
            services.draft_add_answer_test(
                slug=slug,
                step_key=report.step_key,
                answer=report.answer_text,
                expect=expect,
                name=f"from report {report.pk}",
                user=request.user,
                diagram=report.answer_diagram,
            )
        except FlowError as exc:  # a refusal, or another tab saved the draft meanwhile
            error, status = str(exc), 422
        else:
            messages.success(request, "Test added to the draft: publish to keep it.")
            return redirect("authoring:question", slug=slug)
    context = {
        "report": report,
        "slug": slug,
        # Each point with the verdict ticked: the instructor's after a refused form, so their
        # choices are kept, else the offline grader's.
        "points": [
            (pid, says, offline, expect.get(pid) or offline) for pid, says, offline in points
        ],
        "error": error,
        # The step as the editor and the candidate name it, not by its key.
        "step_title": STEP_TITLES.get(report.step_key, report.step_key),
        # The diagram shared with the answer, laid out (practice.diagram).
        "diagram_picture": _picture(report.answer_diagram),
    }
    return render(request, "authoring/report_test.html", context, status=status)
