"""`{{ check.verdict|napkin_verdict }}`: a napkin-math verdict as the candidate reads it
("Round it", not not_rounded), from the checker's own list (planner.engine.checker)."""

from django import template

from planner.engine.checker import VERDICT_LABELS

register = template.Library()

# A quantity left empty at submit is stored as "unchecked" (practice.napkin.submission_checks).
NOT_CHECKED = "Not checked"


@register.filter
def napkin_verdict(verdict) -> str:
    if not verdict or verdict == "unchecked":
        return NOT_CHECKED
    return VERDICT_LABELS.get(str(verdict), str(verdict))
