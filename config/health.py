from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """200 {"status": "ok", "database": "ok"} when the app can query its database, else 503."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        return JsonResponse(
            {"status": "error", "database": "unreachable", "detail": type(exc).__name__},
            status=503,
        )
    return JsonResponse({"status": "ok", "database": "ok"})
