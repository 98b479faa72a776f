"""Request clean-up that every view relies on."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, QueryDict


def _without_nul(data: QueryDict) -> QueryDict | None:
    """A copy of `data` with NUL characters removed from every key and value, or None when
    there are none."""
    if not any("\x00" in key or any("\x00" in v for v in values) for key, values in data.lists()):
        return None
    clean = QueryDict(mutable=True, encoding=data.encoding)
    for key, values in data.lists():
        clean.setlist(key.replace("\x00", ""), [v.replace("\x00", "") for v in values])
    clean._mutable = False
    return clean


def strip_nul_characters(get_response):
    """Drop NUL characters from the query string and form fields before any view sees them.

    PostgreSQL refuses them in text columns (a 500 on save), no answer or question needs one,
    and a paste from a binary file is the usual source. Removing them loses nothing a reader
    could see; an uploaded file is checked where it is read (it says which line)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        for name in ("GET", "POST"):
            clean = _without_nul(getattr(request, name))
            if clean is not None:
                setattr(request, name, clean)
        return get_response(request)

    return middleware


def refuse_oversized_bodies(get_response):
    """Refuse a request whose body is larger than settings.MAX_REQUEST_BODY_BYTES, by its
    Content-Length, before anything reads it.

    Django's DATA_UPLOAD_MAX_MEMORY_SIZE does not count uploaded files: a multipart POST of
    any size, to any address and signed out, was read whole and spooled to a temporary file
    on disk (the NUL filter reads every form, before CSRF is checked). A body without a
    Content-Length is never read by Django. The refusal is Django's own for a body too large
    (RequestDataTooBig: the 400 page that says so)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # Django reads such a body as empty
        if length > settings.MAX_REQUEST_BODY_BYTES:
            raise RequestDataTooBig("Request body exceeded settings.MAX_REQUEST_BODY_BYTES.")
        return get_response(request)

    return middleware
