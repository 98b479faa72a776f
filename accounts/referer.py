"""The page a request was sent from (its Referer), as a path of this site to lead back to:
where signing in again leads (`instructors.sign_in_again`), and where a refused form goes
back to."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def referer_path(request: HttpRequest, *, check_host: bool = True) -> str:
    """The path and query of the page `request` was sent from, when it is on this site; ""
    otherwise. Only the path and query are kept, never the host, and never a path a browser
    reads as another host ("//host", "/\\host"), so a redirect to it cannot leave the site.

    `check_host`: the Referer's host must be the request's own. Off for a page answering a
    request that could not be read (a refused Host header is one cause of a 400), where only
    the path is kept anyway."""
    referer = request.META.get("HTTP_REFERER", "")
    if check_host and not url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return ""
    parts = urlsplit(referer)
    path = parts.path
    if not path.startswith("/") or path.startswith("//") or "\\" in path:
        return ""
    return path + (f"?{parts.query}" if parts.query else "")
