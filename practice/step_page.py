"""The practice step page: the answer form's fields, the links between steps and
follow-ups, and everything the page shows (prompt, editor, worksheet, feedback so far)."""

from __future__ import annotations

import copy

from django.urls import reverse

from practice import extensions
from practice.diagram import (
    DIAGRAM_HEADER,
    PALETTE,
    diagram_from_post,
    diagram_picture,
    diagram_text,
    step_has_diagram,
)
from practice.feedback import feedback_context
from practice.models import Attempt, StepAnswer, Submission
from practice.napkin import (
    card_in_panel,
    check_for_page,
    typed_answer,
    worksheet_clipped,
    worksheet_lines,
)
from practice.selectors import attempt_number
from practice.services import FlowError, follow_ups_open
from practice.slo import (
    CARD_FIELD_NAMES,
    NUMBER_FIELDS,
    QPS_KIND,
    TEXT_FIELDS,
    CardField,
    figure_errors,
)
from questionbank import STEP_KEYS, StepSpec
from questions import selectors

# --- forms ------------------------------------------------------------------------------

MAX_POST_FIELDS = 100  # an answer form has about twenty; more is not a browser's doing


def fields_from_post(step: str, post) -> dict:
    """The structured part of an answer form: the SLO card, or the napkin worksheet, and the
    diagram on a step that has the diagram box (`practice.diagram`)."""
    return _step_fields(step, post) | diagram_from_post(post)


def _step_fields(step: str, post) -> dict:
    if step == "clarify":
        fields = {name: str(post.get(name, ""))[:200].strip() for name in CARD_FIELD_NAMES}
        if fields[QPS_KIND] not in ("peak", "mean"):
            fields[QPS_KIND] = "peak"
        return fields
    if step == "estimate":
        fields: dict = {"worksheet": str(post.get("worksheet", ""))}
        # The quantity boxes, typed but perhaps never checked: checked again at submit.
        answers = {
            name.removeprefix("expr_")[:60]: str(value)[:500]
            for name, value in list(post.items())[:MAX_POST_FIELDS]
            if name.startswith("expr_") and str(value).strip()
        }
        if answers:
            fields["answers"] = answers
        return fields
    return {}


# --- navigation -------------------------------------------------------------------------


def step_url(attempt: Attempt, step: str, follow_up: str = "") -> str:
    if follow_up:
        return reverse(
            "attempt_follow_up",
            kwargs={"attempt_id": attempt.pk, "step": step, "follow_up": follow_up},
        )
    return reverse("attempt_step", kwargs={"attempt_id": attempt.pk, "step": step})


def _submitted_keys(attempt: Attempt) -> set[tuple[str, str]]:
    return set(
        Submission.objects.filter(answer__attempt=attempt).values_list(
            "answer__step_key", "answer__follow_up_id"
        )
    )


def unsubmitted_steps(attempt: Attempt) -> list[dict]:
    """The attempt's steps with no submission of their own answer (a follow-up answered is not
    its step submitted), in order, each with its title and link: what Finish names."""
    done = {key for key, follow_up in _submitted_keys(attempt) if not follow_up}
    return [
        {"key": key, "title": selectors.STEP_TITLES[key], "url": step_url(attempt, key)}
        for key in STEP_KEYS
        if key not in done
    ]


def finished_on(attempt: Attempt):
    """When the candidate finished this practice attempt, or None: still open to more work,
    which updates its scorecard, and the step page says so. A mock interview's attempt is
    left out (its end is the mock's, and its pages say so themselves)."""
    if attempt.finished_at is None or hasattr(attempt, "mock"):
        return None
    return attempt.finished_at


def next_step(attempt: Attempt) -> str:
    """The first step without a submission (the last step when all are done)."""
    done = {key for key, _ in _submitted_keys(attempt)}
    return next((key for key in STEP_KEYS if key not in done), STEP_KEYS[-1])


def progress_context(
    *, attempt: Attempt, step_key: str, submitted: set[tuple[str, str]] | None = None
) -> dict:
    """The progress bar: every step with its link and whether it has a submission, the
    current step, and how many are submitted (what a submit sends back out of band)."""
    if submitted is None:
        submitted = _submitted_keys(attempt)
    steps = selectors.question_steps(attempt.revision)
    for s in steps:
        s["submitted"] = any(key == s["key"] for key, _ in submitted)
        s["url"] = step_url(attempt, s["key"])
    return {
        "steps": steps,
        "step": steps[STEP_KEYS.index(step_key)],
        "all_submitted": all(s["submitted"] for s in steps),
        "submitted_count": sum(1 for s in steps if s["submitted"]),
    }


def step_context(*, attempt: Attempt, answer: StepAnswer, typed: dict | None = None) -> dict:
    """Everything the step page shows: the prompt, the editor, feedback so far, navigation.

    `typed` is an answer form whose save was refused (its `text`, `fields` and
    `base_version`): the boxes show it instead of the stored draft (`answer_as_typed`)."""
    stored = answer
    if typed is not None:
        answer = answer_as_typed(answer, typed)
    revision = attempt.revision
    submitted = _submitted_keys(attempt)
    context = progress_context(attempt=attempt, step_key=answer.step_key, submitted=submitted)
    steps, current = context["steps"], context["step"]
    spec = revision.question_spec.step(answer.step_key)
    context |= {
        "attempt": attempt,
        "attempt_number": attempt_number(attempt),
        "revision": revision,
        "answer": answer,
        **_pager(steps, current, follow_up=bool(answer.follow_up_id)),
        "draft_url": _action_url("attempt_draft", attempt, answer),
        "submit_url": _action_url("attempt_submit", attempt, answer),
        "follow_up": None,
        "save_note": extensions.save_note(attempt.pk),
    }
    if answer.follow_up_id:
        context["follow_up"] = {
            "id": answer.follow_up_id,
            "prompt_html": revision.html(answer.step_key, answer.follow_up_id)["prompt"],
        }
    context |= _follow_ups(attempt, answer, submitted)
    if answer.step_key == "clarify":
        context["card"] = _card_form(answer.fields)
    if answer.step_key == "estimate":
        checks = answer.fields.get("checks") or {}
        worksheet = str(answer.fields.get("worksheet", ""))
        context["givens"] = spec.givens
        context["quantities"] = []
        for q in spec.quantities:
            in_box = typed_answer(answer.fields, q.id)
            check = check_for_page(checks.get(q.id), typed=in_box, worksheet=worksheet)
            context["quantities"].append({"spec": q, "check": check, "typed": in_box})
        # A running mock interview checks the numbers only at its end (the report has them):
        # the page offers no Check it would refuse, and says so.
        context["checks_withheld"] = extensions.feedback_withheld(attempt.pk)
        context["worksheet_text"] = answer.fields.get("worksheet", "")
        context["predefined"], context["card_differs"] = card_in_panel(attempt)
        try:
            context["worksheet_lines"] = worksheet_lines(
                attempt=attempt, text=context["worksheet_text"]
            )
            context["worksheet_error"] = worksheet_clipped(context["worksheet_text"])
        except FlowError as exc:
            context["worksheet_error"] = str(exc)
    if not answer.follow_up_id and step_has_diagram(spec):
        context["diagram"] = diagram_box(answer.fields)
    # The save status says the boxes hold text that is not saved (`answer.version` alone
    # would read as "Draft saved.").
    context["unsaved"] = typed is not None
    latest = stored.submissions.order_by("-number").first()
    context.update(feedback_context(attempt=attempt, answer=stored, submission=latest))
    # A feature's live panels (a mock interview's clock, nudges and follow-ups).
    context["panels"] = extensions.step_panels(attempt, answer.step_key)
    context["finish_label"] = _finish_label(context["panels"])
    context["finished_on"] = finished_on(attempt)
    return context


def _finish_label(panels) -> str:
    """What the last step's Finish button says: a panel's words (a mock interview's Finish
    ends the interview), else practice's own."""
    labels = [panel.finish_label for panel in panels if panel.finish_label]
    return labels[0] if labels else "Finish and see the scorecard"


def answer_as_typed(answer: StepAnswer, typed: dict) -> StepAnswer:
    """The draft as a refused answer form had it, for the page to show and never to save:
    the posted text and fields (the stored quantity checks added, which the form does not
    post, as a save would add them) at the version that form was loaded at. Without
    JavaScript the page is all the candidate has, so what they typed must come back in its
    boxes; and a stale tab's page keeps its old version, so its next post is refused again
    instead of overwriting the newer draft."""
    shown = copy.copy(answer)
    shown.text = typed["text"]
    shown.fields = dict(typed["fields"])
    if "checks" in answer.fields:
        shown.fields["checks"] = answer.fields["checks"]
    shown.version = typed["base_version"]
    return shown


def diagram_box(fields: dict) -> dict:
    """The diagram box of a step: the stored Mermaid text, its picture (laid out on page
    load, so it shows without JavaScript too), the palette and the preview's URL."""
    text = diagram_text(fields)
    return {
        "text": text,
        "picture": diagram_picture(text),
        "palette": [{"name": name, "line": line} for name, line in PALETTE],
        "header": DIAGRAM_HEADER,
        "preview_url": reverse("diagram_preview"),
    }


def after_submit_context(*, attempt: Attempt, answer: StepAnswer) -> dict:
    """What a submit refreshes out of band beside its feedback: the progress bar and, on a
    step with follow-ups, their list (the next one now open) and the pager's Finish button."""
    submitted = _submitted_keys(attempt)
    context = progress_context(attempt=attempt, step_key=answer.step_key, submitted=submitted)
    follow_ups = _follow_ups(attempt, answer, submitted)
    if follow_ups:
        pager = _pager(context["steps"], context["step"], follow_up=bool(answer.follow_up_id))
        context |= follow_ups | pager | {"attempt": attempt}
        context["finish_label"] = _finish_label(extensions.step_panels(attempt, answer.step_key))
        context["finished_on"] = finished_on(attempt)
        context["follow_up"] = {"id": answer.follow_up_id} if answer.follow_up_id else None
    return context


def _pager(steps: list[dict], current: dict, *, follow_up: bool = False) -> dict:
    """The steps before and after `current`. A follow-up follows its step's own answer: back
    leads there, not a step earlier (on the page, and in the pager a submit redraws)."""
    number = current["number"]
    return {
        "previous": current if follow_up else (steps[number - 2] if number > 1 else None),
        "next": steps[number] if number < len(steps) else None,
    }


def _follow_ups(attempt: Attempt, answer: StepAnswer, submitted: set) -> dict:
    """The trade-offs step's follow-ups, and whether any is still unanswered (then Finish is
    not the page's main action)."""
    if answer.step_key != "tradeoffs":
        return {}
    spec = attempt.revision.question_spec.step(answer.step_key)
    states = _follow_up_states(attempt, spec, submitted)
    return {
        "follow_ups": states,
        "follow_ups_remaining": any(not fu["submitted"] for fu in states),
    }


def _action_url(name: str, attempt: Attempt, answer: StepAnswer) -> str:
    kwargs = {"attempt_id": attempt.pk, "step": answer.step_key}
    if answer.follow_up_id:
        kwargs["follow_up"] = answer.follow_up_id
        name += "_follow_up"
    return reverse(name, kwargs=kwargs)


def _follow_up_states(attempt: Attempt, spec: StepSpec, submitted: set) -> list[dict]:
    """Follow-ups arrive one at a time (the rule is `flow.follow_ups_open`); `is_next` marks
    the first open one not yet submitted."""
    ids = [fu.id for fu in spec.follow_ups]
    done = {fu_id for key, fu_id in submitted if key == spec.key and fu_id}
    states = [
        {
            "id": fu_id,
            "number": number,
            "submitted": fu_id in done,
            "open": is_open,
            "is_next": False,
            "url": step_url(attempt, spec.key, fu_id),
        }
        for number, (fu_id, is_open) in enumerate(
            zip(ids, follow_ups_open(ids, done), strict=True), start=1
        )
    ]
    # The one to answer next: the first that is open and not yet submitted.
    for fu in states:
        if fu["open"] and not fu["submitted"]:
            fu["is_next"] = True
            break
    return states


def card_figure_errors(step: str, follow_up: str, post) -> dict | None:
    """What an autosave or a Submit of the SLO card answers beside each of its figures, out
    of band (`attempt_step.html#card-figure-errors`): the posted card's rows, each with why
    its figure is not read, if it is not. The text is saved as typed either way; this only
    says so while the candidate works. None for a form without the card."""
    if step != "clarify" or follow_up:
        return None
    return _card_form(_step_fields(step, post))


def _card_form(fields: dict) -> dict:
    """The SLO card's inputs, each with what the candidate typed so far and, for a figure
    the card cannot read, why (`card_figure_errors`)."""
    errors = figure_errors(fields)

    def rows(card_fields: tuple[CardField, ...]) -> list[dict]:
        return [
            {
                "name": f.name,
                "label": f.label,
                "unit": f.unit,
                "value": fields.get(f.name, ""),
                "error": errors.get(f.name, ""),
            }
            for f in card_fields
        ]

    return {
        "numbers": rows(NUMBER_FIELDS),
        "texts": rows(TEXT_FIELDS),
        "qps_kind": fields.get(QPS_KIND) or "peak",
    }
