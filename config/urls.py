from django.contrib import admin
from django.urls import include, path

from config import errors, health

handler400 = errors.bad_request

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
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
