"""URLs of the grader-trust pages, under /review/ (review.views)."""

from django.urls import path

from review import views as review_views

app_name = "review"

urlpatterns = [
    path("", review_views.review_index, name="index"),
    path("<slug:slug>/queue/", review_views.review_queue, name="queue"),
    path("<slug:slug>/calibration/", review_views.calibration_page, name="calibration"),
    path(
        "<slug:slug>/calibration/<slug:step>/",
        review_views.calibration_page,
        name="calibration_step",
    ),
    path(
        "<slug:slug>/calibration-load/",
        review_views.calibration_load_shipped,
        name="calibration_load",
    ),
    path("<slug:slug>/items/", review_views.item_stats_page, name="items"),
    path("submissions/<int:submission_id>/", review_views.review_submission, name="submission"),
    path(
        "submissions/<int:submission_id>/dispute/",
        review_views.submission_dispute,
        name="dispute",
    ),
    path("grades/<int:grade_id>/", review_views.grade_audit, name="grade"),
]
