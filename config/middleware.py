"""Request clean-up that every view relies on."""

import inspect

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import Resolver404, resolve


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


def explain_wrong_method(get_response):
    """Give a 405 without a body the site's page: an address that only takes a form (a
    Start, a drill's seed, a preview) is met by a visit when someone copies or reloads the
    address of a page a form answered, and Django's answer is a blank white page.

    The page links to the nearest address above this one that a visit opens, if there is
    one. An htmx request gets the bare answer: requests.js tells its failure in place."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if response.status_code != 405 or response.content or getattr(request, "htmx", False):
            return response
        page = render(request, "405.html", {"up": _page_above(request.path_info)}, status=405)
        page["Allow"] = response.get("Allow", "")
        return page

    return middleware


def _page_above(path: str) -> str | None:
    """The nearest address above `path`, segment by segment, whose view answers a visit."""
    parts = [p for p in path.split("/") if p]
    while parts:
        parts.pop()
        candidate = "/" + "/".join(parts) + ("/" if parts else "")
        try:
            match = resolve(candidate)
        except Resolver404:
            continue
        if _answers_get(match.func):
            return candidate
    return None


def _answers_get(view) -> bool:
    """Whether `view` takes a GET. A class-based view says so by a get method it lists; a function
    view limited by require_http_methods (require_POST, require_safe) holds its list of
    methods in that wrapper's closure, under however many decorators wrap it."""
    view_class = getattr(view, "view_class", None)
    if view_class is not None:  # View.dispatch wants the name listed and a handler
        return "get" in view_class.http_method_names and hasattr(view_class, "get")
    while view is not None:
        try:
            methods = inspect.getclosurevars(view).nonlocals.get("request_method_list")
        except TypeError:  # not a Python function (a builtin, a callable object)
            return True
        if methods is not None:
            return "GET" in methods
        view = getattr(view, "__wrapped__", None)
    return True
