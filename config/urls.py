from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.decorators.http import require_safe

from config import errors, health

handler400 = errors.bad_request


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """Pages name their icon (an SVG); a client that asks the old fixed address gets it too.
    Looked up per request, and not a permanent redirect: the stored file's name carries its
    content's hash, and a browser would keep a 301 to it after the icon changes."""
    return redirect(static("img/favicon.svg"))


urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("favicon.ico", favicon),
    path("accounts/", include("accounts.urls")),
    path("planner/", include("planner.urls")),
    path("author/", include("authoring.urls")),
    path("problems/", include("authoring.report_urls")),
    path("review/", include("review.urls")),
    path("mock/", include("mocks.urls")),
    path("drills/", include("drills.urls")),
    path("simulator/", include("simulator.urls")),
    path("admin/", admin.site.urls),
    path("", include("practice.urls")),
]
