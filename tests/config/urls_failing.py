"""The site's URLs plus one view that fails, for the server-error page's test."""

from django.urls import path

from config.urls import urlpatterns as site


def failing(request):
    raise RuntimeError("a bug in a view")


urlpatterns = [path("failing/", failing), *site]
