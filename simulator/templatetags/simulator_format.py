"""The simulator's figures in its templates, rounded as its verdicts round them."""

from __future__ import annotations

from django import template

from simulator.engine import goodput_text, qps_text

register = template.Library()


@register.filter
def goodput(share: float | None) -> str:
    """A run's goodput share as its verdict writes it ("99.9%"): a run that lost a request
    never reads 100%."""
    return "—" if share is None else goodput_text(float(share))


@register.filter
def qps(value: float | None) -> str:
    """A load as the verdict writes it ("0.001", "12.5"): a light load never reads 0.0."""
    return "" if value is None else qps_text(float(value))
