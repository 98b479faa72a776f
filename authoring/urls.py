"""Every authoring URL: instructors only (404 for everyone else; tests walk this list)."""

from django.urls import path

from authoring import views

app_name = "authoring"

# The same editor serves question files and concept notes.
EDITOR_ACTIONS = [
    ("", views.editor, ""),
    ("save/", views.editor_save, "_save"),
    ("preview/", views.editor_preview, "_preview"),
    ("publish/", views.editor_publish, "_publish"),
    ("upload/", views.editor_upload, "_upload"),
    ("download/", views.editor_download, "_download"),
]

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.create, name="create"),
    *[
        path(f"questions/<slug:slug>/{suffix}", view, {"kind": "question"}, name=f"question{name}")
        for suffix, view, name in EDITOR_ACTIONS
    ],
    *[
        path(f"concepts/<slug:slug>/{suffix}", view, {"kind": "concept"}, name=f"concept{name}")
        for suffix, view, name in EDITOR_ACTIONS
    ],
    path("questions/<slug:slug>/try/", views.question_try, name="question_try"),
    path(
        "questions/<slug:slug>/revisions/<int:number>/",
        views.revision_detail,
        name="revision",
    ),
    path(
        "questions/<slug:slug>/revisions/<int:number>/restore/",
        views.revision_restore,
        name="revision_restore",
    ),
    path(
        "questions/<slug:slug>/revisions/<int:number>/download/",
        views.revision_download,
        name="revision_download",
    ),
    path("reports/<int:report_id>/close/", views.report_close, name="report_close"),
    path("reports/<int:report_id>/test/", views.report_add_test, name="report_add_test"),
]
