"""The site's error pages that need more than a template: Django renders its 400 page without
the request, so the header said "Log in" to a signed-in instructor and no link led back."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.referer import referer_path


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request that could not be read (too large, or malformed): the site's page, with the
    header of whoever is signed in and a link back to the page the form was on."""
    return render(
        request, "400.html", {"came_from": referer_path(request, check_host=False)}, status=400
    )
