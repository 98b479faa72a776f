from django.urls import path

from simulator import views

app_name = "simulator"

urlpatterns = [
    path("", views.fleet_page, name="page"),
    path("attempt/<int:attempt_id>/panel/", views.panel, name="panel"),
    path("attempt/<int:attempt_id>/run/", views.panel_run, name="run"),
]
