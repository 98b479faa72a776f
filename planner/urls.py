from django.urls import path

from planner import views

app_name = "planner"

urlpatterns = [
    path("", views.worksheet, name="worksheet"),
    path("evaluate/", views.evaluate, name="evaluate"),
    path("capacity/", views.capacity, name="capacity"),
]
