"""Per-request lookups without the ORM's compiler: the session, the user and the attempt.

`config.rows.get_row` must return exactly the instance the ORM returns (every field, after the
database's converters: datetimes, JSON, booleans, foreign keys), on SQLite and PostgreSQL, and
the session store and the auth backend built on it must keep Django's rules: an expired or
signed-out session is gone, an inactive user is signed out.
"""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db.models import F, Model
from django.test import Client
from django.utils import timezone

from interview import flow
from interview.models import Attempt, Grade, Question, StepAnswer
from config.rows import get_row
from config.sessions import SessionStore


def field_values(instance: Model) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


@pytest.fixture
def candidate(db):
    return User.objects.create_user("rows", password="rows-Passphrase-1", email="r@example.org")


@pytest.fixture
def attempt(candidate, content_loaded):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    return flow.attempt_start(user=candidate, revision=revision)


def test_get_row_returns_what_the_orm_returns_field_for_field(attempt, candidate):
    answer = flow.answer_open(attempt=attempt, step_key="clarify")
    answer = flow.draft_save(
        answer=answer, text="p99 TTFT 500 ms", fields={"qps_peak": "50"}, base_version=0
    )
    submission = flow.step_submit(
        answer=answer, text="p99 TTFT 500 ms", fields={"qps_peak": "50"}, base_version=1
    ).submission
    flow.submission_grade(submission_id=submission.pk)
    candidate.refresh_from_db()  # last_login and friends as stored
    cases = [
        (User, {"pk": candidate.pk}),
        (Attempt, {"pk": attempt.pk, "user_id": candidate.pk}),
        (StepAnswer, {"attempt_id": attempt.pk, "step_key": "clarify", "follow_up_id": ""}),
        (Grade, {"pk": Grade.objects.filter(submission=submission).latest("pk").pk}),
    ]
    for model, equals in cases:
        fast = get_row(model, **equals)
        slow = model.objects.get(**equals)
        assert type(fast) is model
        assert field_values(fast) == field_values(slow), model.__name__
        assert fast._state.adding is False and fast._state.db == slow._state.db
    # The converters ran: aware datetimes and decoded JSON, not the database's raw values.
    row = get_row(StepAnswer, attempt_id=attempt.pk, step_key="clarify", follow_up_id="")
    assert row.fields == {"qps_peak": "50"}
    assert timezone.is_aware(row.updated_at)
    assert get_row(User, pk=candidate.pk).is_active is True


def test_get_row_finds_nothing_for_another_users_attempt_or_a_missing_row(attempt, candidate):
    stranger = User.objects.create_user("stranger", password="stranger-Passphrase-1")
    assert get_row(Attempt, pk=attempt.pk, user_id=stranger.pk) is None
    assert get_row(Attempt, pk=attempt.pk + 1000, user_id=candidate.pk) is None
    assert get_row(Attempt, pk=attempt.pk, user=candidate) == attempt  # an instance for an FK


def test_get_row_refuses_a_lookup_that_matches_several_rows(attempt, candidate):
    flow.attempt_start(user=candidate, revision=attempt.revision)
    with pytest.raises(Attempt.MultipleObjectsReturned):
        get_row(Attempt, user_id=candidate.pk)


def test_the_session_store_drops_an_expired_session(db):
    store = SessionStore()
    store["seen"] = True
    store.create()
    assert SessionStore(store.session_key).load() == {"seen": True}
    Session.objects.filter(session_key=store.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    expired = SessionStore(store.session_key)
    assert expired.load() == {}
    assert expired.session_key is None  # the next save starts a new session, as Django's does
    assert SessionStore("no-such-session-key-0000000000000").load() == {}


def test_a_signed_out_session_cookie_no_longer_signs_anyone_in(candidate):
    client = Client()
    signed_in = client.post(
        "/accounts/login/", {"username": "rows", "password": "rows-Passphrase-1"}
    )
    assert signed_in.status_code == 302
    cookie = client.cookies["sessionid"].value
    assert client.get("/history/").status_code == 200
    client.post("/accounts/logout/")
    replay = Client()
    replay.cookies["sessionid"] = cookie
    response = replay.get("/history/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_deactivated_user_is_signed_out_on_the_next_request(candidate):
    client = Client()
    client.force_login(candidate)
    assert client.get("/history/").status_code == 200
    User.objects.filter(pk=candidate.pk).update(is_active=False)
    response = client.get("/history/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_update_where_writes_what_a_queryset_update_writes(attempt):
    from config.rows import update_where

    answer = flow.answer_open(attempt=attempt, step_key="estimate")
    twin = flow.answer_open(attempt=attempt, step_key="architecture")
    when = timezone.now()
    fields = {"worksheet": "W = 7.6e9 * 2 B", "checks": {"tpot": {"verdict": "correct"}}}
    matched = update_where(
        StepAnswer,
        {"text": "ünïcode ✓ and 'quotes'", "fields": fields, "updated_at": when},
        add={"version": 1, "seconds_spent": 7},
        pk=answer.pk,
        version=0,
    )
    StepAnswer.objects.filter(pk=twin.pk, version=0).update(
        text="ünïcode ✓ and 'quotes'",
        fields=fields,
        updated_at=when,
        version=F("version") + 1,
        seconds_spent=F("seconds_spent") + 7,
    )
    assert matched == 1
    ours, theirs = StepAnswer.objects.get(pk=answer.pk), StepAnswer.objects.get(pk=twin.pk)
    for name in ("text", "fields", "updated_at", "version", "seconds_spent", "row_version"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.fields == fields and ours.version == 1 and ours.seconds_spent == 7
    # A guard that no longer holds (a stale tab's base version) matches nothing, writes nothing.
    stale = update_where(StepAnswer, {"text": "stale"}, add={"version": 1}, pk=answer.pk, version=0)
    assert stale == 0
    assert StepAnswer.objects.get(pk=answer.pk).text == "ünïcode ✓ and 'quotes'"


def test_an_id_no_column_can_hold_matches_nothing(attempt, candidate):
    from config.rows import update_where

    for huge in (2**63, 10**30, -(2**63) - 1):
        assert get_row(Attempt, pk=huge, user_id=candidate.pk) is None
        assert update_where(StepAnswer, {"text": "x"}, pk=huge) == 0
    client = Client()
    client.force_login(candidate)
    response = client.get(f"/attempts/{10**30}/steps/clarify/")
    assert response.status_code == 404
    assert client.get(f"/attempts/{attempt.pk}/steps/clarify/").status_code == 200
