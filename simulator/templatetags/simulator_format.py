"""The simulator's figures in its templates, rounded as its verdicts round them."""

from __future__ import annotations

from django import template

from simulator.engine import goodput_text

register = template.Library()


@register.filter
def goodput(share: float | None) -> str:
    """A run's goodput share as its verdict writes it ("99.9%"): a run that lost a request
    never reads 100%."""
    return "—" if share is None else goodput_text(float(share))
