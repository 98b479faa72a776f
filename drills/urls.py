from django.urls import include, path

from drills import views

app_name = "drills"

set_patterns = [
    path("", views.drill_set_page, name="set"),
    path("drills/<int:position>/answer/", views.drill_answer, name="answer"),
]

candidate_patterns = [
    path("", views.instructor_candidate, name="instructor_candidate"),
    path("assign/", views.instructor_assign, name="instructor_assign"),
    path(
        "assignments/<int:assignment_id>/withdraw/",
        views.instructor_withdraw,
        name="instructor_withdraw",
    ),
]

urlpatterns = [
    path("", views.drills_index, name="index"),
    path("sets/", views.drill_set_start, name="set_start"),
    path("sets/<int:set_id>/", include(set_patterns)),
    path("progress/", views.progress_page, name="progress"),
    path("progress.csv", views.progress_export, name="progress_csv"),
    path("assignments/<int:assignment_id>/start/", views.assignment_start, name="assignment_start"),
    path("instructor/", views.instructor_candidates, name="instructor_candidates"),
    path("instructor/candidates/<int:candidate_id>/", include(candidate_patterns)),
]
