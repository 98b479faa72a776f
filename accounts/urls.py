from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

# The password pages' templates are named apart from registration/password_change_*.html:
# django.contrib.admin, installed first, ships templates by those names, and they would win
# (the admin's look and header, linking to an admin the candidate cannot enter).
urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("session/", views.session_state, name="session_state"),
    path("login/", views.login_view, name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path(
        "password/",
        views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "password/done/",
        auth_views.PasswordChangeDoneView.as_view(template_name="accounts/password_changed.html"),
        name="password_change_done",
    ),
]
