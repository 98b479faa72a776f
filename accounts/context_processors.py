"""What every page's header needs to know about the signed-in user's roles."""

from django.utils.functional import SimpleLazyObject

from accounts.instructors import is_instructor


def roles(request) -> dict:
    """`is_instructor` for the header's Author and Review links, asked only when a page
    renders it (one query, and none for a signed-out visitor)."""
    return {"is_instructor": SimpleLazyObject(lambda: is_instructor(request.user))}
