"""Napkin math inside an attempt: the candidate's worksheet evaluated with the question's
givens (and their own SLO card's figures) predefined, and a required quantity checked."""

from __future__ import annotations

import hashlib

from grading.text import form_block
from planner.engine import (
    LineResult,
    NapkinError,
    check_quantity,
    evaluate_text,
    format_number,
    givens_from_estimate,
)
from planner.engine.worksheet import MAX_LINES, name_defined, unknown_name
from practice.errors import FlowError
from practice.models import Attempt, StepAnswer
from practice.slo import NUMBER_FIELDS, figure_readings, review_card


def _card(attempt: Attempt) -> dict | None:
    """The candidate's SLO card (the clarify step's fields), or None before they wrote one."""
    clarify = (
        StepAnswer.objects.filter(attempt_id=attempt.pk, step_key="clarify", follow_up_id="")
        .only("fields")
        .first()
    )
    return None if clarify is None else clarify.fields


def card_names(attempt: Attempt) -> dict[str, str]:
    """Numbers from the candidate's SLO card, as names for their worksheet (name -> napkin
    expression, e.g. qps_peak -> "50 QPS")."""
    card = _card(attempt)
    if card is None:
        return {}
    return review_card(card, attempt.revision.question_spec.brief).names


def card_in_panel(attempt: Attempt) -> tuple[dict[str, str], list[dict[str, str]]]:
    """What the Givens panel adds from the SLO card, so that it lists exactly what the
    worksheet computes with, each name once: the card's names the question does not give
    (name -> expression), and the card's figures that differ from a given of the same name,
    which the worksheet does not use ({name, card, given, reading}), or from the brief where
    the question gives no such name, which it does use ({name, card, brief, reading}). The
    brief's givens win because the quantities are checked against them. `reading` is the
    calculator's own note on how it read the figure where that may explain the difference
    ("8k reads as 8,000; …"), else empty."""
    card = _card(attempt)
    if card is None:
        return {}, []
    brief = attempt.revision.question_spec.brief
    givens = _question_givens(attempt)
    by_label = figure_readings(card, brief)
    readings = {f.worksheet_name: by_label.get(f.label, "") for f in NUMBER_FIELDS}
    extra, differs = {}, []
    review = review_card(card, brief)
    # The brief's figure where the card's differs, by worksheet name: a name the question
    # gives no value for is the card's in the worksheet, and the page says the brief differs.
    brief_says = {
        f.worksheet_name: d["brief"]  # with its unit ("32768 tokens")
        for d in review.differs
        for f in NUMBER_FIELDS
        if f.label == d["label"]
    }
    for name, value in review.names.items():
        if name not in givens:
            extra[name] = value
            if name in brief_says:
                differs.append(
                    {
                        "name": name,
                        "card": value,
                        "brief": brief_says[name],
                        "reading": readings.get(name, ""),
                    }
                )
        elif " ".join(value.split()) != " ".join(givens[name].split()):
            differs.append(
                {
                    "name": name,
                    "card": value,
                    "given": givens[name],
                    "reading": readings.get(name, ""),
                }
            )
    return extra, differs


def _question_givens(attempt: Attempt) -> dict[str, str]:
    """The givens of the revision the attempt answers (name -> napkin expression)."""
    return {g.name: g.value for g in attempt.revision.question_spec.step("estimate").givens}


def _givens(attempt: Attempt) -> dict[str, str]:
    givens = _question_givens(attempt)
    # The card's names come first so a question's own given of the same name wins.
    return {**{k: v for k, v in card_names(attempt).items() if k not in givens}, **givens}


def _evaluated(attempt: Attempt, text: str) -> list[LineResult]:
    """The candidate's worksheet evaluated line by line with the question's givens predefined
    (lines past the engine's limit are left out). Raises FlowError when the givens themselves
    do not evaluate (an authoring error, not the candidate's)."""
    try:
        return evaluate_text(text, _givens(attempt), clip=True)
    except NapkinError as exc:
        raise FlowError(f"This question's givens do not evaluate: {exc.message}") from None


def worksheet_clipped(text: str) -> str:
    """What the page says when the worksheet is longer than the engine works out (its lines
    past MAX_LINES are left out of the results and of the checks); empty otherwise."""
    if len(text.replace("\r\n", "\n").split("\n")) <= MAX_LINES:
        return ""
    return (
        f"A worksheet holds at most {MAX_LINES} lines: only the first {MAX_LINES} are worked "
        "out, and the checks read only those. Shorten it to use the rest."
    )


def worksheet_lines(*, attempt: Attempt, text: str) -> list[LineResult]:
    """The evaluated worksheet, one result per line that is not blank (each with its input,
    value as displayed, MathML, or error and column)."""
    return [r for r in _evaluated(attempt, text) if r.kind != "blank"]


def quantity_verdict(
    *, attempt: Attempt, quantity_id: str, expression: str, worksheet: str
) -> dict:
    """Check one required quantity against the candidate's expression (which may use names
    from their worksheet), without storing it: {answer, verdict, value, unit, hint}.
    FlowError for an unknown quantity or a bad input."""
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
    broken: dict[str, int] = {}  # a name whose latest line has an error -> that line
    for line in _evaluated(attempt, worksheet):
        if line.name and line.quantity is not None:
            env[line.name] = line.quantity
            broken.pop(line.name, None)
        elif line.error:
            # A line too broken to parse still reads as "name = ..." to the candidate.
            name = line.name or name_defined(line.input or "")
            if name:
                env.pop(name, None)
                broken[name] = line.line_no
    typed = expression.strip()
    if typed in broken:
        # Checked by itself, a name whose line failed would be read as whatever else it can
        # be: `h` after a refused `h = ...` is an hour, "wrong unit".
        raise FlowError(
            f"'{typed}' has no value: its line in your worksheet (line {broken[typed]}) has an "
            "error. Fix that line, then check again."
        )
    try:
        result = check_quantity(
            quantity.as_dict(),
            expression,
            givens,
            worksheet_env=env,
            given_labels=labels,
            # The lines themselves too: two slips that offset each other show in what a line
            # was computed from, not in its value.
            worksheet_lines=worksheet.replace("\r\n", "\n").split("\n"),
        )
    except NapkinError as exc:
        # A name the candidate defined on a line that failed is not "unknown": say which line.
        name = unknown_name(exc.message)
        if name in broken:
            raise FlowError(
                f"'{name}' has no value: its line in your worksheet (line {broken[name]}) "
                "has an error. Fix that line, then check again."
            ) from None
        raise FlowError(str(exc)) from None
    return {
        "answer": expression,
        "verdict": result.verdict,
        "value": result.value,
        "unit": result.unit,
        "hint": result.hint or "",
        "worksheet": worksheet_digest(worksheet),
    }


def worksheet_digest(worksheet: str) -> str:
    """A short fingerprint of the worksheet a check read: a check whose worksheet has changed
    since may no longer hold (a line it names now computes another value)."""
    text = "\n".join(line.rstrip() for line in worksheet.replace("\r\n", "\n").split("\n"))
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


def check_for_page(
    check: dict | None, *, typed: str | None = None, worksheet: str | None = None
) -> dict | None:
    """A quantity's check as the page shows it: with `shown`, the candidate's value written
    as the worksheet writes values ("21.54 ms", "1e-5 GB"), where a fixed number of decimals
    pads some and rounds others to nothing; `stale` where the box (`typed`) or the worksheet
    has changed since the check, whose verdict the page then does not repeat."""
    if not check:
        return check
    stale = (typed is not None and typed.strip() != str(check.get("answer", "")).strip()) or (
        worksheet is not None
        and "worksheet" in check
        and check["worksheet"] != worksheet_digest(worksheet)
    )
    if stale:
        return {**check, "stale": True}
    if check.get("value") is None:
        return check
    return {**check, "shown": f"{format_number(check['value'])} {check.get('unit') or ''}".strip()}


def typed_answer(fields: dict, quantity_id: str) -> str:
    """What the candidate has in a quantity's box: the latest typed text, else the expression
    they last checked."""
    typed = (fields.get("answers") or {}).get(quantity_id)
    if typed is not None:
        return str(typed)
    return str(((fields.get("checks") or {}).get(quantity_id) or {}).get("answer", ""))


def submission_checks(*, attempt: Attempt, fields: dict) -> dict[str, dict]:
    """Every quantity of a submitted napkin-math answer checked as it stands at submit,
    whether or not "Check" was pressed for it: quantity id -> check (a box left empty is
    "unchecked"; an input that does not evaluate is "wrong", with why as its hint)."""
    spec = attempt.revision.question_spec.step("estimate")
    worksheet = str(fields.get("worksheet", ""))
    checks = {}
    for qty in spec.quantities:
        expression = typed_answer(fields, qty.id).strip()
        if not expression:
            checks[qty.id] = {"answer": "", "verdict": "unchecked", "hint": ""}
            continue
        try:
            checks[qty.id] = quantity_verdict(
                attempt=attempt, quantity_id=qty.id, expression=expression, worksheet=worksheet
            )
        except FlowError as exc:
            checks[qty.id] = {"answer": expression, "verdict": "wrong", "hint": str(exc)}
    return checks


def worksheet_as_text(*, attempt: Attempt, fields: dict, checks: dict[str, dict]) -> str:
    """The worksheet as the graders read it: what the app worked out (each line's value, and
    each quantity the checker found right with its label) in a form values block that is
    context, never evidence (`grading.text.form_block`), then the lines the candidate typed,
    verbatim, which a grader may quote."""
    spec = attempt.revision.question_spec.step("estimate")
    values, typed = [], []
    try:
        lines = worksheet_lines(attempt=attempt, text=str(fields.get("worksheet", "")))
    except FlowError:
        lines = []
    computed = {}  # worksheet name -> the line that computes it, as the candidate wrote it
    for line in lines:
        if line.kind != "blank" and line.error is None:
            typed.append(line.input.strip())
            values.append(f"{line.input.strip()} gives {line.display}")
            if line.name:
                computed[line.name] = line.input.strip()
    for qty in spec.quantities:
        check = checks.get(qty.id) or {}
        # The label says what the number is, which only holds once the checker agrees: a
        # wrong number must not earn a point through the question's own wording.
        if check.get("value") is None or check.get("verdict") not in ("correct", "close"):
            continue
        # Only the candidate's own working: the box, or the worksheet line it names.
        working = computed.get(check["answer"].strip(), check["answer"])
        unit = f" {check['unit']}" if check.get("unit") else ""
        values.append(f"{qty.label} (checked): {working} = {check['value']:.4g}{unit}")
    return "\n".join(part for part in (form_block(values), *typed) if part)
