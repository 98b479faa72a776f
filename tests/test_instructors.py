"""The instructor permission: granted by command or group, 404 for everyone else."""

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.management import CommandError, call_command
from django.http import Http404
from django.test import RequestFactory

from accounts.instructors import instructor_required, is_instructor


@instructor_required
def _authoring_view(request):
    return "reached"


@pytest.mark.django_db
def test_grant_instructor_command_grants_and_revokes(capsys):
    user = User.objects.create_user("ines", password="x-pass-12345")
    assert not is_instructor(user)
    call_command("grant_instructor", "ines")
    assert "ines is now an instructor" in capsys.readouterr().out
    user = User.objects.get(pk=user.pk)
    assert is_instructor(user)
    call_command("grant_instructor", "ines")
    assert "was already" in capsys.readouterr().out
    call_command("grant_instructor", "ines", "--revoke")
    assert not is_instructor(User.objects.get(pk=user.pk))


@pytest.mark.django_db
def test_grant_instructor_names_an_unknown_user():
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("grant_instructor", "nobody")


@pytest.mark.django_db
def test_instructor_required_is_404_for_everyone_else_signed_in():
    request = RequestFactory().get("/author/")
    request.user = AnonymousUser()
    signed_out = _authoring_view(request)  # sent to sign in, and back here
    assert signed_out.status_code == 302 and signed_out["Location"].endswith("?next=/author/")
    request.user = User.objects.create_user("carl", password="x-pass-12345")
    with pytest.raises(Http404):
        _authoring_view(request)
    call_command("grant_instructor", "carl")
    request.user = User.objects.get(username="carl")
    assert _authoring_view(request) == "reached"


@pytest.mark.django_db
def test_the_header_links_author_and_review_for_instructors_only(client):
    user = User.objects.create_user("hana", password="x-pass-12345")
    client.force_login(user)
    page = client.get("/history/").content.decode()
    assert 'href="/author/"' not in page and 'href="/review/"' not in page
    call_command("grant_instructor", "hana")
    page = client.get("/history/").content.decode()
    assert 'href="/author/"' in page and 'href="/review/"' in page
    client.logout()
    assert 'href="/author/"' not in client.get("/").content.decode()


@pytest.mark.django_db
def test_a_refused_assignment_keeps_the_instructors_note(client, content_loaded):
    from django.urls import reverse

    from accounts.instructors import instructor_grant

    teacher = User.objects.create_user("teacher", password="x-pass-12345")
    instructor_grant(teacher)
    learner = User.objects.create_user("learner", password="x-pass-12345")
    client.force_login(teacher)
    url = reverse("drills:instructor_assign", args=[learner.pk])
    # A question unpublished since the page loaded: the refusal must not lose the note.
    response = client.post(url, {"what": "question:gone-away", "note": "Do this by Friday"})
    assert response.status_code == 422
    page = response.content.decode()
    assert "No published question" in page
    assert 'value="Do this by Friday"' in page
    response = client.post(url, {"what": "drill:nope", "note": "again"})
    assert response.status_code == 422 and 'value="again"' in response.content.decode()
