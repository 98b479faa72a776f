from django.urls import path

from drills import views

app_name = "drills"
urlpatterns = [
    path("", views.drills_index, name="index"),
    path("sets/", views.drill_set_start, name="set_start"),
    path("sets/<int:set_id>/", views.drill_set_page, name="set"),
    path("sets/<int:set_id>/drills/<int:position>/answer/", views.drill_answer, name="answer"),
    path("progress/", views.progress_page, name="progress"),
    path("progress.csv", views.progress_export, name="progress_csv"),
    path("assignments/<int:assignment_id>/start/", views.assignment_start, name="assignment_start"),
    path("instructor/", views.instructor_candidates, name="instructor_candidates"),
    path(
        "instructor/candidates/<int:candidate_id>/",
        views.instructor_candidate,
        name="instructor_candidate",
    ),
    path(
        "instructor/candidates/<int:candidate_id>/assign/",
        views.instructor_assign,
        name="instructor_assign",
    ),
]
