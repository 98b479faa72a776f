"""The drill kinds that practise the concepts a page names."""

from __future__ import annotations

from django import template

from drills import engine

register = template.Library()


@register.filter
def drills_for(concepts) -> list[engine.DrillKind]:
    """The available drill kinds whose concept is one of `concepts` (each with a slug), in
    the order of the concepts."""
    slugs = [c.slug for c in concepts or ()]
    kinds = [k for k in engine.KINDS.values() if k.available and k.concept in slugs]
    return sorted(kinds, key=lambda k: slugs.index(k.concept))
