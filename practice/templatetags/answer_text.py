"""`{{ text|controls_shown }}`: a candidate's text as someone else reads it (a reviewer, an
interviewer), its bidirectional controls shown rather than obeyed
(questionbank.rendering.direction_controls_shown)."""

from django import template

from questionbank.rendering import direction_controls_shown

register = template.Library()


@register.filter
def controls_shown(text) -> str:
    return direction_controls_shown(str(text)) if text else text
