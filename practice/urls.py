from django.urls import path

from practice import attempt_views as practice_views
from practice import diagram_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("questions/<slug:slug>/", views.question_detail, name="question"),
    path("questions/<slug:slug>/steps/<slug:step>/", views.step_detail, name="step"),
    path("questions/<slug:slug>/start/", practice_views.attempt_start, name="attempt_start"),
    path("concepts/", views.concept_list, name="concepts"),
    path("concepts/<slug:slug>/", views.concept_page, name="concept"),
    path("history/", practice_views.history, name="history"),
    path("grader/", views.grader_status_page, name="grader_status"),
    path("diagram/preview/", diagram_views.diagram_preview, name="diagram_preview"),
    path("attempts/<int:attempt_id>/", practice_views.attempt_resume, name="attempt"),
    path(
        "attempts/<int:attempt_id>/scorecard/",
        practice_views.attempt_scorecard,
        name="attempt_scorecard",
    ),
    path("attempts/<int:attempt_id>/finish/", practice_views.attempt_finish, name="attempt_finish"),
    path("attempts/<int:attempt_id>/check/", practice_views.quantity_check, name="attempt_check"),
    path(
        "attempts/<int:attempt_id>/worksheet/",
        practice_views.worksheet_evaluate,
        name="attempt_worksheet",
    ),
    path(
        "attempts/<int:attempt_id>/submissions/<int:submission_id>/feedback/",
        practice_views.submission_feedback,
        name="submission_feedback",
    ),
    path(
        "attempts/<int:attempt_id>/submissions/<int:submission_id>/self-check/",
        practice_views.submission_self_check,
        name="submission_self_check",
    ),
    path(
        "attempts/<int:attempt_id>/steps/<slug:step>/",
        practice_views.attempt_step,
        name="attempt_step",
    ),
    path(
        "attempts/<int:attempt_id>/steps/<slug:step>/draft/",
        practice_views.draft_autosave,
        name="attempt_draft",
    ),
    path(
        "attempts/<int:attempt_id>/steps/<slug:step>/submit/",
        practice_views.step_submit,
        name="attempt_submit",
    ),
    path(
        "attempts/<int:attempt_id>/steps/<slug:step>/follow-ups/<slug:follow_up>/",
        practice_views.attempt_step,
        name="attempt_follow_up",
    ),
    path(
        "attempts/<int:attempt_id>/steps/<slug:step>/follow-ups/<slug:follow_up>/draft/",
        practice_views.draft_autosave,
        name="attempt_draft_follow_up",
    ),
    path(
        "attempts/<int:attempt_id>/steps/<slug:step>/follow-ups/<slug:follow_up>/submit/",
        practice_views.step_submit,
        name="attempt_submit_follow_up",
    ),
]
