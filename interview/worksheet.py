"""Napkin math inside an attempt: the candidate's worksheet evaluated with the question's
givens (and their own SLO card's figures) predefined, and a required quantity checked."""

from __future__ import annotations

from interview import flow
from interview.flow import FlowError
from interview.models import Attempt, StepAnswer
from interview.slo import review_card
from planner.engine import (
    LineResult,
    NapkinError,
    check_quantity,
    evaluate_worksheet,
    givens_from_estimate,
)

MAX_WORKSHEET_LINES = 200


def card_names(attempt: Attempt) -> dict[str, str]:
    """Numbers from the candidate's SLO card, as names for their worksheet (name -> napkin
    expression, e.g. qps_peak -> "50 QPS")."""
    clarify = (
        StepAnswer.objects.filter(attempt_id=attempt.pk, step_key="clarify", follow_up_id="")
        .only("fields")
        .first()
    )
    if clarify is None:
        return {}
    return review_card(clarify.fields, attempt.revision.question_spec.brief).names


def _givens(attempt: Attempt) -> dict[str, str]:
    spec = attempt.revision.question_spec.step("estimate")
    givens = {g.name: g.value for g in spec.givens}
    # The card's names come first so a question's own given of the same name wins.
    return {**{k: v for k, v in card_names(attempt).items() if k not in givens}, **givens}


def _evaluated(attempt: Attempt, text: str) -> list[LineResult]:
    """The candidate's worksheet evaluated line by line with the question's givens predefined.
    Raises FlowError when the givens themselves do not evaluate (an authoring error, not the
    candidate's)."""
    lines = text.replace("\r\n", "\n").split("\n")[:MAX_WORKSHEET_LINES]
    try:
        return evaluate_worksheet(lines, _givens(attempt))
    except NapkinError as exc:
        raise FlowError(f"This question's givens do not evaluate: {exc.message}") from None


def worksheet_lines(*, attempt: Attempt, text: str) -> list[LineResult]:
    """The evaluated worksheet, one result per line that is not blank (each with its input,
    value as displayed, MathML, or error and column)."""
    return [r for r in _evaluated(attempt, text) if r.kind != "blank"]


def quantity_check(
    *, attempt: Attempt, answer: StepAnswer, quantity_id: str, expression: str, worksheet: str
) -> dict:
    """Check one required quantity against the candidate's expression (which may use names
    from their worksheet); store the verdict on the answer and return it as
    {answer, verdict, value, unit, hint}. FlowError for an unknown quantity or a bad input."""
    spec = attempt.revision.question_spec.step("estimate")
    try:
        quantity = spec.quantity(quantity_id)
    except LookupError:
        raise FlowError("There is no such quantity in this question.") from None
    if not expression.strip():
        raise FlowError("Type a name from your worksheet or an expression to check.")
    givens = givens_from_estimate(spec.estimate_dict(), upto=quantity_id)
    labels = {g.name: g.label for g in spec.givens}
    env = {}
    for line in _evaluated(attempt, worksheet):
        if line.name and line.quantity is not None:
            env[line.name] = line.quantity
    try:
        result = check_quantity(
            quantity.as_dict(), expression, givens, worksheet_env=env, given_labels=labels
        )
    except NapkinError as exc:
        raise FlowError(str(exc)) from None
    check = {
        "answer": expression,
        "verdict": result.verdict,
        "value": result.value,
        "unit": result.unit,
        "hint": result.hint or "",
    }
    flow.quantity_check_store(answer=answer, quantity_id=quantity_id, check=check)
    return check
