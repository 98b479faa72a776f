"""The site's error pages that need more than a template: Django renders its 400 page without
the request, so the header said "Log in" to a signed-in instructor and no link led back."""

from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def _page_came_from(request: HttpRequest) -> str:
    """The path of the page the request was sent from (its Referer), on this site, or "".

    Only the path and query are kept, never the host, so the link cannot lead off the site;
    the request's own host is not asked for, since a refused Host header is one cause of a 400."""
    parts = urlsplit(request.META.get("HTTP_REFERER", ""))
    path = parts.path
    if not path.startswith("/") or path.startswith("//") or "\\" in path:
        return ""
    return path + (f"?{parts.query}" if parts.query else "")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request that could not be read (too large, or malformed): the site's page, with the
    header of whoever is signed in and a link back to the page the form was on."""
    return render(request, "400.html", {"came_from": _page_came_from(request)}, status=400)
