"""`{% drills_next %}`: what to practise next and what is due, for a page that does not load
drills itself (the home page). Nothing for a signed-out visitor."""

from django import template

from drills import selectors, services

register = template.Library()

# The home page lists the soonest due this many; the drills page lists them all. A candidate
# with a dozen concepts due would otherwise push the question bank a phone's length down.
DUE_ON_HOME = 6


@register.inclusion_tag("drills/_next.html", takes_context=True)
def drills_next(context) -> dict:
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"hidden": True}
    due = selectors.cards_due(user=user)
    return {
        "recommendation": selectors.recommendation(user=user),
        "due": due[:DUE_ON_HOME],
        "due_more": len(due) - len(due[:DUE_ON_HOME]),
        "assignments": selectors.assignments_open(user=user),
        "set_size": services.SET_SIZE,
        "csrf_token": context.get("csrf_token"),
    }
