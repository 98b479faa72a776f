"""Who may author questions and review grades: members of the "instructors" group.

Granted from the admin (add the user to the group) or with `manage.py grant_instructor`.
Every authoring and review view is wrapped in `instructor_required`, which answers 404 (not
403) to everyone else, so the authoring URLs do not even show that they exist.
"""

from functools import wraps

from django.contrib.auth.models import Group
from django.http import Http404

INSTRUCTORS_GROUP = "instructors"


def is_instructor(user) -> bool:
    """True for a signed-in, active member of the instructors group (superusers included)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return user.groups.filter(name=INSTRUCTORS_GROUP).exists()


def instructor_grant(user) -> bool:
    """Add `user` to the instructors group; False when they were in it already."""
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    if user.groups.filter(pk=group.pk).exists():
        return False
    user.groups.add(group)
    return True


def instructor_revoke(user) -> bool:
    """Remove `user` from the instructors group; False when they were not in it."""
    group = Group.objects.filter(name=INSTRUCTORS_GROUP).first()
    if group is None or not user.groups.filter(pk=group.pk).exists():
        return False
    user.groups.remove(group)
    return True


def instructor_required(view):
    """A view only instructors reach; everyone else (signed out included) gets 404."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not is_instructor(request.user):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return wrapped
