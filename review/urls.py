"""URLs of the grader-trust pages, under /review/ (review.views)."""

from django.urls import include, path

from review import views as review_views

app_name = "review"

# The pages about one question's grading, by its slug.
question_patterns = [
    path("queue/", review_views.review_queue, name="queue"),
    path("calibration/", review_views.calibration_page, name="calibration"),
    path("calibration/<slug:step>/", review_views.calibration_page, name="calibration_step"),
    path("calibration-load/", review_views.calibration_load_shipped, name="calibration_load"),
    path("items/", review_views.item_stats_page, name="items"),
]

submission_patterns = [
    path("", review_views.review_submission, name="submission"),
    path("dispute/", review_views.submission_dispute, name="dispute"),
    path("wrong-ideas/remove/", review_views.wrong_idea_remove, name="wrong_idea_remove"),
    path("wrong-ideas/restore/", review_views.wrong_idea_restore, name="wrong_idea_restore"),
]

urlpatterns = [
    path("", review_views.review_index, name="index"),
    path("<slug:slug>/", include(question_patterns)),
    path("submissions/<int:submission_id>/", include(submission_patterns)),
    path("grades/<int:grade_id>/", review_views.grade_audit, name="grade"),
]
