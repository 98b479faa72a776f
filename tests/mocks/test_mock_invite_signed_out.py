"""A signed-out person who opens an invite link is told they were invited to interview a
candidate, with a log-in and a sign-up link that both come back to the join page (a bare
log-in form said nothing of it)."""

from urllib.parse import quote

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from mocks import services as mock
from questions.models import Question

INVITED = "You were invited to interview a candidate"


def test_the_invite_link_signed_out_says_why_to_log_in(content_loaded):
    candidate = User.objects.create(username="candidate")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    session = mock.mock_session_start(user=candidate, revision=revision, mode="human")
    join = reverse(
        "mock_join", kwargs={"session_id": session.pk, "token": mock.invite_token(session)}
    )
    anon = Client()
    response = anon.get(join)
    assert response.status_code == 200
    html = response.content.decode()
    assert INVITED in html and session.attempt.revision.title not in html
    assert f'href="{reverse("login")}?next={quote(join, safe="/")}"' in html
    assert f'href="{reverse("signup")}?next={quote(join, safe="/")}"' in html
    # A join posted signed out (a form kept open past a sign-out) goes to log in, and back.
    posted = anon.post(join)
    assert posted.status_code == 302 and posted["Location"].startswith(reverse("login"))

    User.objects.create_user(username="visitor", password="a long pass phrase 1")
    signed_in = anon.post(
        reverse("login"), {"username": "visitor", "password": "a long pass phrase 1", "next": join}
    )
    assert signed_in.status_code == 302 and signed_in["Location"] == join
