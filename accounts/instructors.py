"""Who may author questions and review grades: members of the "instructors" group.

Granted from the admin (add the user to the group) or with `manage.py grant_instructor`.
Every authoring and review view is wrapped in `instructor_required`, which answers 404 (not
403) to every signed-in user but instructors, so the instructor URLs do not show that they
exist to candidates, and sends a signed-out visitor to sign in: an editor left open past the
end of its session comes back after signing in.
"""

from functools import wraps

from django.conf import settings
from django.contrib.auth.models import Group
from django.contrib.auth.views import redirect_to_login
from django.http import Http404
from django.shortcuts import resolve_url

from accounts.referer import referer_path

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


def _signed_out_next(request) -> str:
    """Where signing in leads back to: the page asked for, or for a form sent from a page (a
    Publish, a Save, a Try) that page, since the form's own address answers only a POST."""
    if request.method in ("GET", "HEAD"):
        return request.get_full_path()
    return referer_path(request) or resolve_url(settings.LOGIN_REDIRECT_URL)


# The session keys that carry, through signing in, what a form posted signed out did not do,
# and the fields it had filled in, for the page it was sent from.
UNSENT_SESSION_KEY = "signed_out_unsent"
KEPT_FORM_SESSION_KEY = "signed_out_form"
# A kept field is what a person typed in a small form: past this it is a script's.
KEPT_FIELD_MAX_CHARS = 2000


def sign_in_again(request, *, unsent: str = "", keep: tuple[str, ...] = ()):
    """The redirect to sign in for a signed-out request, with ?next= as `_signed_out_next`
    says. For a form posted signed out, `unsent` says what was not done ("nothing was
    assigned"): the page after signing in says so (accounts.views.LoginView). The posted
    fields named in `keep` are held for that page to fill its form in again
    (`signed_out_form`), so a choice and a note typed are not lost with the session."""
    back = _signed_out_next(request)
    if request.method == "POST":
        if unsent:
            request.session[UNSENT_SESSION_KEY] = unsent
        if keep:
            request.session[KEPT_FORM_SESSION_KEY] = {
                "path": back,
                "fields": {k: request.POST.get(k, "")[:KEPT_FIELD_MAX_CHARS] for k in keep},
            }
    return redirect_to_login(back)


def signed_in_again(request, *, going_to: str) -> str:
    """After signing in: what a form posted signed out did not do ("nothing was assigned"),
    or "" (once). Its kept fields stay only for the page the sign-in goes on to, which fills
    its form with them; going elsewhere drops them, so they never wait in the session for
    a later visit, or for whoever signs in next on this browser."""
    kept = request.session.get(KEPT_FORM_SESSION_KEY)
    if isinstance(kept, dict) and kept.get("path") != going_to:
        del request.session[KEPT_FORM_SESSION_KEY]
    return request.session.pop(UNSENT_SESSION_KEY, "")


def signed_out_form(request) -> dict[str, str]:
    """The fields of a form this page sent while signed out (`sign_in_again`'s `keep`), once:
    taken from the session as the page fills its form with them. {} for any other page."""
    kept = request.session.get(KEPT_FORM_SESSION_KEY)
    if not isinstance(kept, dict) or kept.get("path") != request.get_full_path():
        return {}
    del request.session[KEPT_FORM_SESSION_KEY]
    fields = kept.get("fields")
    return {str(k): str(v) for k, v in fields.items()} if isinstance(fields, dict) else {}


def signin_required(view=None, *, unsent: str = "", keep: tuple[str, ...] = ()):
    """`login_required` for every view, forms' POST-only addresses included: signing in leads
    back to the page the form was sent from (`sign_in_again`), not to the address that
    answers only a POST (a 405 after signing in)."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not getattr(request.user, "is_authenticated", False):
                return sign_in_again(request, unsent=unsent, keep=keep)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator(view) if view is not None else decorator


def instructor_required(view=None, *, unsent: str = "", keep: tuple[str, ...] = ()):
    """A view only instructors reach: a signed-out visitor is sent to sign in, with ?next=
    back to the page (`signin_required`), so an instructor whose session ended mid-edit signs
    in and finds the page again, where the editor offers back what the server never
    received; every other user gets 404."""

    def decorator(view):
        @signin_required(unsent=unsent, keep=keep)
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not is_instructor(request.user):
                raise Http404("No such page.")
            return view(request, *args, **kwargs)

        return wrapped

    return decorator(view) if view is not None else decorator
