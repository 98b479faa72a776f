from django.urls import include, path

from practice import attempt_views as practice_views
from practice import diagram_views, views

question_patterns = [
    path("", views.question_detail, name="question"),
    path("steps/<slug:step>/", views.step_detail, name="step"),
    path("start/", practice_views.attempt_start, name="attempt_start"),
]

# A follow-up's answer box is served by the same views as its step's.
follow_up_patterns = [
    path("", practice_views.attempt_step, name="attempt_follow_up"),
    path("draft/", practice_views.draft_autosave, name="attempt_draft_follow_up"),
    path("submit/", practice_views.step_submit, name="attempt_submit_follow_up"),
]

step_patterns = [
    path("", practice_views.attempt_step, name="attempt_step"),
    path("draft/", practice_views.draft_autosave, name="attempt_draft"),
    path("submit/", practice_views.step_submit, name="attempt_submit"),
    path("follow-ups/<slug:follow_up>/", include(follow_up_patterns)),
]

submission_patterns = [
    path("feedback/", practice_views.submission_feedback, name="submission_feedback"),
    path("self-check/", practice_views.submission_self_check, name="submission_self_check"),
]

attempt_patterns = [
    path("", practice_views.attempt_resume, name="attempt"),
    path("scorecard/", practice_views.attempt_scorecard, name="attempt_scorecard"),
    path("finish/", practice_views.attempt_finish, name="attempt_finish"),
    path("check/", practice_views.quantity_check, name="attempt_check"),
    path("worksheet/", practice_views.worksheet_evaluate, name="attempt_worksheet"),
    path("submissions/<int:submission_id>/", include(submission_patterns)),
    path("steps/<slug:step>/", include(step_patterns)),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("questions/<slug:slug>/", include(question_patterns)),
    path("concepts/", views.concept_list, name="concepts"),
    path("concepts/<slug:slug>/", views.concept_page, name="concept"),
    path("history/", practice_views.history, name="history"),
    path("grader/", views.grader_status_page, name="grader_status"),
    path("diagram/preview/", diagram_views.diagram_preview, name="diagram_preview"),
    path("attempts/<int:attempt_id>/", include(attempt_patterns)),
]
