from django.http import HttpResponse
from django.urls import include, path


def minimal(request):
    """The floor: a Django view that does nothing, measured in the same run as the pages."""
    return HttpResponse("ok", content_type="text/plain")


def signed_in_floor(request, attempt_id):
    """What any practice endpoint must do before its own work: load the session and the user,
    and check the attempt is theirs. Reported beside `minimal` to show the floor."""
    from practice.attempt_views import _own_attempt

    if not request.user.is_authenticated:
        return HttpResponse(status=403)
    attempt = _own_attempt(request, attempt_id)
    return HttpResponse(f"ok {attempt.pk}", content_type="text/plain")


urlpatterns = [
    path("__bench__/minimal", minimal),
    path("__bench__/signed-in-floor/<int:attempt_id>", signed_in_floor),
    path("", include("config.urls")),
]
