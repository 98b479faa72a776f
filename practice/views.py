"""Public pages: the question bank, concept notes and the grading backend's status."""

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.views.decorators.http import require_safe
from django_htmx.http import push_url

from grading import GraderConfig
from practice import bank, extensions, grader_status
from practice.models import Attempt
from questionbank import STEP_KEYS
from questions import selectors
from questions.models import Concept


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """The question bank, filtered by the GET form's choices and search (a plain form: the
    same URL works without JavaScript and shared as a link). The form's htmx request gets
    the list alone (a history restore, the whole page). Each response shows the candidate's
    own status on every question: private to them, never stored by a shared cache."""
    filters = bank.BankFilters.from_params(request.GET)
    partial = bool(
        request.htmx
        and request.htmx.target == "question-results"
        and not request.htmx.history_restore_request
    )
    found = bank.question_bank(user=request.user, filters=filters)
    context = {
        "bank": found,
        "partial": partial,  # the list alone, with the count for its live region
    }
    template = "interview/home.html#question-results" if partial else "interview/home.html"
    response = render(request, template, context)
    if partial:
        # The address bar gets the choices as applied, without the form's empty fields
        # (`?q=mixtral`, not `?q=mixtral&topic=&difficulty=&model=&gpu=&sort=`).
        query = found.filters.query
        push_url(response, reverse("home") + (f"?{query}" if query else ""))
    patch_vary_headers(response, ["HX-Request", "HX-Target"])
    patch_cache_control(response, private=True)
    return response


@require_safe
def question_detail(request: HttpRequest, slug: str) -> HttpResponse:
    return question_page(request, slug)


def question_page(
    request: HttpRequest, slug: str, *, refusal: str = "", status: int = 200
) -> HttpResponse:
    """The question's page; `refusal` is why a new attempt was not started (shown by the
    Start button, beside the candidate's attempts so far)."""
    revision = selectors.question_current_revision(slug)
    attempts = []
    if request.user.is_authenticated:
        own = Attempt.objects.filter(
            user=request.user, revision__question=revision.question, is_preview=False
        )
        attempts = list(
            own.select_related("revision")
            # Told apart on the page by how far each got, beside when it was started.
            .annotate(
                steps_submitted=Count(
                    "answers__step_key",
                    # A step's own answer: a follow-up answered is not its step submitted.
                    filter=Q(answers__submissions__isnull=False, answers__follow_up_id=""),
                    distinct=True,
                )
            )
            .order_by("-started_at", "-pk")[:5]
        )
        # Numbered as the step pages and History number them (`selectors.attempt_number`).
        numbers = {pk: n for n, pk in enumerate(own.order_by("pk").values_list("pk", flat=True), 1)}
        links = extensions.attempt_links(attempts)  # a mock's session or report
        for attempt in attempts:
            attempt.number = numbers[attempt.pk]
            attempt.link = links.get(attempt.pk)
    return render(
        request,
        "interview/question.html",
        {
            "revision": revision,
            "attempts": attempts,
            "step_count": len(STEP_KEYS),
            "brief_rows": selectors.brief_rows(revision.question_spec.brief),
            "constraints": revision.question_spec.brief.constraints,
            "steps": selectors.question_steps(revision),
            "refusal": refusal,
            # What features offer here (e.g. a timed mock interview), to a signed-in candidate.
            "question_fragments": (
                extensions.question_fragments(revision, request.user)
                if request.user.is_authenticated
                else []
            ),
        },
        status=status,
    )


@require_safe
def step_detail(request: HttpRequest, slug: str, step: str) -> HttpResponse:
    if step not in STEP_KEYS:
        raise Http404("No such step.")
    revision = selectors.question_current_revision(slug)
    steps = selectors.question_steps(revision)
    current = steps[STEP_KEYS.index(step)]
    spec = revision.question_spec.step(step)
    return render(
        request,
        "interview/step.html",
        {
            "revision": revision,
            "step": current,
            "steps": steps,
            "previous": steps[current["number"] - 2] if current["number"] > 1 else None,
            "next": steps[current["number"]] if current["number"] < len(steps) else None,
            "givens": spec.givens,
            "quantities": spec.quantities,
            "follow_ups": [
                {"id": fu.id, "prompt_html": revision.html(step, fu.id)["prompt"]}
                for fu in spec.follow_ups
            ],
        },
    )


@require_safe
def concept_list(request: HttpRequest) -> HttpResponse:
    return render(request, "interview/concepts.html", {"concepts": Concept.objects.all()})


@require_safe
def concept_page(request: HttpRequest, slug: str) -> HttpResponse:
    concept, related, questions = selectors.concept_detail(slug)
    return render(
        request,
        "interview/concept.html",
        {"concept": concept, "related": related, "questions": questions},
    )


@require_safe
def grader_status_page(request: HttpRequest) -> HttpResponse:
    """Whether the model is grading and how long our queue is; the details for staff only."""
    try:
        config: GraderConfig | None = GraderConfig.from_settings(settings.GRADER)
        config_error = ""
    except ValueError as exc:
        config, config_error = None, str(exc)
    context: dict = {}
    if request.user.is_staff:
        # Asked first: its live check refreshes the stored health answer the public part
        # reads, so the two parts of one page never disagree about a server that just died.
        context.update(
            config_error=config_error,
            server=grader_status.server_status(config or GraderConfig(), cache=cache),
            percentiles=grader_status.grading_latencies(),
            inflight_cap=(config or GraderConfig()).max_inflight,
        )
    context["public"] = grader_status.public_status(config, cache=cache)
    return render(request, "interview/grader_status.html", context)
