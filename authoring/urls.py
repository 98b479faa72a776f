"""Every authoring URL: instructors only (404 for everyone else; tests walk this list)."""

from django.urls import path

from authoring import views

app_name = "authoring"

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.question_create, name="question_create"),
    path("questions/<slug:slug>/", views.question_edit, name="question"),
    path("questions/<slug:slug>/save/", views.question_save, name="question_save"),
    path("questions/<slug:slug>/preview/", views.question_preview, name="question_preview"),
    path("questions/<slug:slug>/publish/", views.question_publish, name="question_publish"),
    path("questions/<slug:slug>/upload/", views.question_upload, name="question_upload"),
    path("questions/<slug:slug>/download/", views.question_download, name="question_download"),
    path("questions/<slug:slug>/try/", views.question_try, name="question_try"),
    path(
        "questions/<slug:slug>/revisions/<int:number>/",
        views.revision_detail,
        name="revision",
    ),
    path(
        "questions/<slug:slug>/revisions/<int:number>/download/",
        views.revision_download,
        name="revision_download",
    ),
    path("reports/<int:report_id>/close/", views.report_close, name="report_close"),
]
