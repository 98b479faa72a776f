from django.http import HttpResponse
from django.urls import include, path


def minimal(request):
    """The floor: a Django view that does nothing, measured in the same run as the pages."""
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("__bench__/minimal", minimal),
    path("", include("studio.urls")),
]
