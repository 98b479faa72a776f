"""Mock-interview URLs, included under /mock/."""

from django.urls import include, path

from mocks import views as mock_views

# A follow-up's answer box inside a mock: its autosave and its submission.
follow_up_patterns = [
    path("draft/", mock_views.follow_up_draft, name="mock_follow_up_draft"),
    path("submit/", mock_views.follow_up_submit, name="mock_follow_up_submit"),
]

# The interviewer's page and what it posts.
interview_patterns = [
    path("", mock_views.interview_page, name="mock_interview"),
    path("events/", mock_views.interview_events, name="mock_interview_events"),
    path("nudge/", mock_views.interview_nudge, name="mock_nudge"),
    path("ask/", mock_views.interview_ask, name="mock_ask"),
    path("score/<slug:step>/", mock_views.interview_score, name="mock_score"),
    path("communication/", mock_views.interview_communication, name="mock_communication"),
    path("feedback/<slug:step>/", mock_views.interview_feedback, name="mock_feedback"),
]

# Everything under one mock session.
session_patterns = [
    path("", mock_views.mock_session, name="mock_session"),
    path("panel/", mock_views.candidate_panel, name="mock_panel"),
    path("follow-ups/<str:follow_up>/", include(follow_up_patterns)),
    path("start-alone/", mock_views.start_alone, name="mock_start_alone"),
    path("invite/", mock_views.invite_new, name="mock_invite_new"),
    path("invite/revoke/", mock_views.invite_revoke, name="mock_invite_revoke"),
    path("join/<str:token>/", mock_views.mock_join, name="mock_join"),
    path("end/", mock_views.session_end, name="mock_end"),
    path("interview/", include(interview_patterns)),
    path("report/", mock_views.mock_report_page, name="mock_report"),
    path("report.md", mock_views.mock_report_markdown, name="mock_report_md"),
    path("share/", mock_views.share_new, name="mock_share_new"),
    path("share/revoke/", mock_views.share_revoke, name="mock_share_revoke"),
    path("replay/", mock_views.mock_replay, name="mock_replay"),
]

urlpatterns = [
    path("start/<slug:slug>/", mock_views.mock_start, name="mock_start"),
    path("shared/<str:token>/", mock_views.mock_shared, name="mock_shared"),
    path("<int:session_id>/", include(session_patterns)),
]
