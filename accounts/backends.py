"""Password sign-in, with the per-request user lookup read through `config.rows`.

Authentication, permissions and the active-user rule are Django's `ModelBackend`; only
`get_user`, run on every signed-in request, skips the ORM's query compiler.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from config.rows import get_row


class AccountBackend(ModelBackend):
    def get_user(self, user_id):
        user = get_row(get_user_model(), pk=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
