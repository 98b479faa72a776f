from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_safe

from accounts.instructors import signed_in_again
from accounts.usernames import username_look_alike
from rate_limits import LimitExceeded, address_client, check_hourly_rate


class FocusFirstError:
    """A form whose refused submit puts the cursor on the first field in error, not on the
    field Django autofocuses, so a keyboard user lands on what to fix. Django files every
    new password's errors under its confirmation, and both boxes come back empty: the
    password is typed first, so `confirmations` sends its error to the password box."""

    confirmations = {"password2": "password1", "new_password2": "new_password1"}

    def full_clean(self) -> None:
        super().full_clean()
        first = next((name for name in self.fields if name in self.errors), None)
        first = self.confirmations.get(first, first)
        if first is not None:
            for field in self.fields.values():
                field.widget.attrs.pop("autofocus", None)
            self.fields[first].widget.attrs["autofocus"] = True


class SignupForm(FocusFirstError, UserCreationForm):
    """Django's sign-up form (NFKC usernames, case-insensitive uniqueness, the password
    validators), refusing also a name that would pass for an existing one."""

    class Meta(UserCreationForm.Meta):
        fields = ("username",)

    def clean_username(self) -> str:
        username = super().clean_username()
        if username and username_look_alike(username):
            raise ValidationError(
                "That name looks the same as an account that already exists (some of its "
                "letters are look-alikes from another alphabet). Please choose another.",
                code="look_alike",
            )
        return username


def _next_path(request: HttpRequest) -> str:
    """The `next` the form or link names, when it is a path on this site; else "".

    A view name or a bare word is not a URL: redirected to as it is, the browser would take it
    relative to the log-in page's address, and the visitor would land on a 404.
    """
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not next_url.startswith("/") or not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return ""
    return next_url


@require_http_methods(["GET", "HEAD", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and sign in; then go where the visitor was heading."""
    next_url = _next_path(request)
    if request.user.is_authenticated:
        return HttpResponseRedirect(next_url or reverse("home"))
    if request.method == "POST":
        # Every try counts, before the form runs: each can cost a password hash and a row,
        # and a failed form is as cheap to send as a good one.
        try:
            check_hourly_rate(
                client=address_client(request),
                action="sign-up",
                per_hour=settings.SIGNUPS_PER_ADDRESS_PER_HOUR,
            )
        except LimitExceeded:
            response = render(
                request,
                "registration/signup_throttled.html",
                {"per_hour": settings.SIGNUPS_PER_ADDRESS_PER_HOUR},
                status=429,
            )
            response["Retry-After"] = "3600"
            return response
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return HttpResponseRedirect(next_url or reverse("home"))
    return render(request, "registration/signup.html", {"form": form, "next": next_url})


@require_safe
@never_cache
def session_state(request: HttpRequest) -> JsonResponse:
    """Whether this browser is signed in, and the CSRF token for its current session.

    A practice page whose session expired lets the candidate sign in again in another tab;
    signing in rotates the CSRF token, so the page asks here for the new one before saving.
    """
    return JsonResponse(
        {"signed_in": request.user.is_authenticated, "csrf_token": get_token(request)}
    )


class LoginForm(AuthenticationForm):
    """Django's log-in form, refusing a name longer than any account's.

    Django's form sets the field's max_length after the field is built, so it never checks
    it: a longer name would go on to authenticate, and axes' record of the failure (a 255
    character column) is more than PostgreSQL stores."""

    def __init__(self, request=None, *args, **kwargs):
        super().__init__(request, *args, **kwargs)
        field = self.fields["username"]
        field.validators.append(MaxLengthValidator(field.max_length))


class LoginView(auth_views.LoginView):
    """Django's log-in form, going on to `next` only when it is a path on this site."""

    form_class = LoginForm

    def get_redirect_url(self) -> str:
        return _next_path(self.request)

    def form_valid(self, form) -> HttpResponse:
        response = super().form_valid(form)
        # A form posted after the session expired (accounts.instructors.sign_in_again): say
        # that nothing was done; the page it came from opens again, its form filled in where
        # the view kept the fields.
        unsent = signed_in_again(self.request, going_to=response.url)
        if unsent:
            messages.warning(
                self.request, f"You were signed out, so {unsent}: please send the form again."
            )
        return response


@sensitive_post_parameters()
@csrf_protect
@never_cache
def login_view(request: HttpRequest) -> HttpResponse:
    """Django's log-in view, behind a lock-out check that runs before the form, so a locked-out
    guess never reaches the password hasher or axes' bookkeeping (a locked-out address is
    refused earlier still, by accounts.lockout.AddressLockoutMiddleware)."""
    if request.method == "POST":
        credentials = {"username": request.POST.get("username", "")}
        if AxesProxyHandler.is_locked(request, credentials):
            return render(request, "registration/locked_out.html", status=429)
    return LoginView.as_view()(request)


class LogoutView(auth_views.LogoutView):
    """Django's log-out, which is a POST. A GET (a typed or bookmarked address) would get a
    blank 405: a signed-in visitor gets the log-out button instead, anyone else the home page.

    The POST always redirects, to `next` only when it is a path on this site: Django's own
    redirected to a bare word as it was (relative to this page: a 404), and rendered the
    admin's "Logged out" page when `next` named this page itself."""

    http_method_names = ["get", "head", "post", "options"]

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        logout(request)
        return HttpResponseRedirect(_next_path(request) or reverse("home"))

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return HttpResponseRedirect(reverse("home"))
        return render(request, "accounts/log_out.html")


class PasswordChangeForm(FocusFirstError, auth_forms.PasswordChangeForm):
    """Django's change-password form, focusing the field to fix after a refused submit."""


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's change-password page, with the old password's wrong guesses counted per account
    as log-in counts them: Django checks it with no limit, so anyone at a signed-in browser
    could try passwords there without end. After LOCKOUT_LIMITS[0] wrong ones the page is
    paused for axes' cool-off; a mistyped new password is no guess and does not count."""

    template_name = "accounts/password_change.html"
    form_class = PasswordChangeForm

    def _key(self) -> str:
        return f"password-change:wrong-old:{self.request.user.pk}"

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if cache.get(self._key(), 0) >= settings.LOCKOUT_LIMITS[0]:
            return render(
                request, settings.AXES_LOCKOUT_TEMPLATE, {"password_change": True}, status=429
            )
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form) -> HttpResponse:
        if form.has_error("old_password", "password_incorrect"):
            cool_off = int(settings.AXES_COOLOFF_TIME * 3600)
            if not cache.add(self._key(), 1, cool_off):
                try:
                    cache.incr(self._key())
                except ValueError:  # expired between add and incr
                    cache.add(self._key(), 1, cool_off)
        return super().form_invalid(form)
