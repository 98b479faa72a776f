"""Mock-interview URLs, included under /mock/."""

from django.urls import path

from mocks import views as mock_views

urlpatterns = [
    path("start/<slug:slug>/", mock_views.mock_start, name="mock_start"),
    path("shared/<str:token>/", mock_views.mock_shared, name="mock_shared"),
    path("<int:session_id>/", mock_views.mock_session, name="mock_session"),
    path("<int:session_id>/panel/", mock_views.candidate_panel, name="mock_panel"),
    path(
        "<int:session_id>/follow-ups/<str:follow_up>/draft/",
        mock_views.follow_up_draft,
        name="mock_follow_up_draft",
    ),
    path(
        "<int:session_id>/follow-ups/<str:follow_up>/submit/",
        mock_views.follow_up_submit,
        name="mock_follow_up_submit",
    ),
    path("<int:session_id>/start-alone/", mock_views.start_alone, name="mock_start_alone"),
    path("<int:session_id>/invite/", mock_views.invite_new, name="mock_invite_new"),
    path("<int:session_id>/invite/revoke/", mock_views.invite_revoke, name="mock_invite_revoke"),
    path("<int:session_id>/join/<str:token>/", mock_views.mock_join, name="mock_join"),
    path("<int:session_id>/end/", mock_views.session_end, name="mock_end"),
    path("<int:session_id>/interview/", mock_views.interview_page, name="mock_interview"),
    path(
        "<int:session_id>/interview/events/",
        mock_views.interview_events,
        name="mock_interview_events",
    ),
    path("<int:session_id>/interview/nudge/", mock_views.interview_nudge, name="mock_nudge"),
    path("<int:session_id>/interview/ask/", mock_views.interview_ask, name="mock_ask"),
    path(
        "<int:session_id>/interview/score/<slug:step>/",
        mock_views.interview_score,
        name="mock_score",
    ),
    path(
        "<int:session_id>/interview/communication/",
        mock_views.interview_communication,
        name="mock_communication",
    ),
    path(
        "<int:session_id>/interview/feedback/<slug:step>/",
        mock_views.interview_feedback,
        name="mock_feedback",
    ),
    path("<int:session_id>/report/", mock_views.mock_report_page, name="mock_report"),
    path("<int:session_id>/report.md", mock_views.mock_report_markdown, name="mock_report_md"),
    path("<int:session_id>/share/", mock_views.share_new, name="mock_share_new"),
    path("<int:session_id>/share/revoke/", mock_views.share_revoke, name="mock_share_revoke"),
    path("<int:session_id>/replay/", mock_views.mock_replay, name="mock_replay"),
]
