"""The candidate's side of problem reports (signed-in candidates, on their own attempts)."""

from django.urls import path

from authoring import report_views

urlpatterns = [
    path(
        "attempts/<int:attempt_id>/steps/<slug:step>/",
        report_views.problem_report,
        name="problem_report",
    ),
]
