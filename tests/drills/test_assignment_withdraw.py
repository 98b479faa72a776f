"""An instructor withdraws an assignment they gave that the candidate has not done (started
or not): it leaves the candidate's pages and stays on the instructor's list, marked
withdrawn, and what the candidate did of it stays theirs. Only the instructor who gave it may
(anyone else gets a 404), and one done or withdrawn already meanwhile is refused in a
sentence, never a server error."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User

from accounts.instructors import instructor_grant
from drills import selectors, services
from drills.models import Assignment, DrillItem, DrillSet
from tests.drills.conftest import PASSWORD
from tests.drills.factories import fix_drills_clock, given_html

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch):
    fix_drills_clock(monkeypatch, NOW)


def give(instructor, candidate, **fields) -> Assignment:
    """Five TTFT drills, unless `fields` say what else."""
    return services.assignment_create(
        instructor=instructor, candidate=candidate, **({"kind": "ttft"} | fields)
    )


def withdraw_url(assignment: Assignment) -> str:
    return (
        f"/drills/instructor/candidates/{assignment.candidate_id}/assignments/"
        f"{assignment.pk}/withdraw/"
    )


def finish_set(candidate, kind: str, at) -> DrillSet:
    """A set of `kind` started from /drills/ (not the assignment's button), every drill
    answered."""
    drill_set = services.drill_set_start(user=candidate, kind=kind, now=at)
    DrillItem.objects.filter(drill_set=drill_set).update(verdict="correct", answered_at=at)
    return drill_set


@pytest.fixture
def colleague(db):
    user = User.objects.create_user("colleague", password=PASSWORD)
    instructor_grant(user)
    return user


# ---------------------------------------------------------------------------------------------
# The service


def test_withdrawing_marks_it_keeps_it_and_stops_offering_it(instructor, candidate):
    assignment = give(instructor, candidate, note="Prefill first")
    later = NOW + timedelta(hours=1)
    withdrawn = services.assignment_withdraw(
        instructor=instructor, candidate=candidate, assignment_id=assignment.pk, now=later
    )
    assert withdrawn.withdrawn_at == later
    assignment.refresh_from_db()  # kept, marked
    assert assignment.withdrawn_at == later and assignment.started_at is None
    assert selectors.assignments_open(user=candidate) == []
    assert selectors.candidate_summaries().object_list[0].open_assignments == 0
    [given] = selectors.assignments_given(candidate=candidate, viewer=instructor)
    assert given.status == "Withdrawn Dec 7" and not given.withdrawable


@pytest.mark.parametrize("who", ["colleague", "candidate", "nobody"])
def test_only_the_instructor_who_gave_it_may_withdraw_it(instructor, candidate, colleague, who):
    assignment = give(instructor, candidate)
    someone = {"colleague": colleague, "candidate": candidate, "nobody": User()}[who]
    with pytest.raises(Assignment.DoesNotExist):
        services.assignment_withdraw(
            instructor=someone, candidate=candidate, assignment_id=assignment.pk
        )
    assignment.refresh_from_db()
    assert assignment.withdrawn_at is None


def test_an_assignment_of_another_candidate_is_not_found(instructor, candidate):
    other = User.objects.create_user("other")
    assignment = give(instructor, other)
    with pytest.raises(Assignment.DoesNotExist):
        services.assignment_withdraw(
            instructor=instructor, candidate=candidate, assignment_id=assignment.pk
        )


def test_one_withdrawn_already_is_refused_and_keeps_its_first_moment(instructor, candidate):
    assignment = give(instructor, candidate)
    services.assignment_withdraw(
        instructor=instructor, candidate=candidate, assignment_id=assignment.pk
    )
    with pytest.raises(services.WithdrawRefused) as refused:
        services.assignment_withdraw(
            instructor=instructor,
            candidate=candidate,
            assignment_id=assignment.pk,
            now=NOW + timedelta(days=1),
        )
    assert (refused.value.reason, refused.value.when) == ("withdrawn", NOW)
    assignment.refresh_from_db()
    assert assignment.withdrawn_at == NOW


def test_work_started_and_left_undone_is_withdrawn_and_stays_the_candidates(instructor, candidate):
    """The way to call off, or to change, work the candidate started and left: the set they
    began stays theirs; the assignment leaves their pages."""
    assignment = services.assignment_start(assignment=give(instructor, candidate))
    services.assignment_withdraw(
        instructor=instructor, candidate=candidate, assignment_id=assignment.pk
    )
    assignment.refresh_from_db()
    assert assignment.withdrawn_at is not None and assignment.drill_set is not None
    assert DrillSet.objects.filter(pk=assignment.drill_set_id, user=candidate).exists()
    assert selectors.assignments_open(user=candidate) == []


def test_a_withdrawn_assignment_cannot_be_started(instructor, candidate):
    assignment = give(instructor, candidate)
    services.assignment_withdraw(
        instructor=instructor, candidate=candidate, assignment_id=assignment.pk
    )
    with pytest.raises(services.AssignmentError, match="withdrew"):
        services.assignment_start(assignment=assignment)
    assignment.refresh_from_db()
    assert assignment.started_at is None and not DrillSet.objects.exists()


def test_the_same_work_can_be_assigned_again_once_withdrawn(instructor, candidate):
    first = give(instructor, candidate)
    with pytest.raises(services.AlreadyAssigned):
        give(instructor, candidate)
    services.assignment_withdraw(instructor=instructor, candidate=candidate, assignment_id=first.pk)
    second = give(instructor, candidate)
    assert [v.assignment for v in selectors.assignments_open(user=candidate)] == [second]


# ---------------------------------------------------------------------------------------------
# The pages


def test_the_button_withdraws_it_from_every_candidate_page(instructor, candidate, client):
    assignment = give(instructor, candidate, note="Prefill first")
    client.force_login(candidate)
    for page in ("/", "/drills/", "/drills/progress/"):
        assert "<bdi>teacher</bdi> assigned you" in client.get(page).content.decode()

    given = given_html(client, instructor, candidate)
    assert f'action="{withdraw_url(assignment)}"' in given
    assert "<summary>Withdraw" in given  # the first press only opens the confirmation
    assert "Yes, withdraw 5 drills: TTFT from prefill" in given
    response = client.post(withdraw_url(assignment))
    assert response.status_code == 302
    assert response["Location"] == f"/drills/instructor/candidates/{candidate.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert (
        "Withdrew 5 drills: TTFT from prefill from learner: it no longer shows on their pages."
    ) in page
    given = page.split('data-testid="given"')[1].split("</ul>")[0]
    assert "5 drills: TTFT from prefill (Dec 7): Withdrawn Dec 7" in given
    assert withdraw_url(assignment) not in given

    client.force_login(candidate)
    for page in ("/", "/drills/", "/drills/progress/"):
        assert "assigned you" not in client.get(page).content.decode()


def test_a_click_on_a_page_opened_before_the_withdrawal_says_so(instructor, candidate, client):
    assignment = give(instructor, candidate)
    services.assignment_withdraw(
        instructor=instructor, candidate=candidate, assignment_id=assignment.pk
    )
    client.force_login(candidate)
    response = client.post(f"/drills/assignments/{assignment.pk}/start/")
    assert (response.status_code, response["Location"]) == (302, "/drills/")
    assert "Your instructor withdrew that assignment" in client.get("/drills/").content.decode()
    assert not DrillSet.objects.exists()


def test_a_colleagues_assignment_shows_who_gave_it_and_no_button(
    instructor, candidate, colleague, client
):
    assignment = give(colleague, candidate)
    given = given_html(client, instructor, candidate)
    assert "(Dec 7, by <bdi>colleague</bdi>): Not started" in given
    assert withdraw_url(assignment) not in given and "Withdraw" not in given


def test_anyone_but_the_giver_gets_404_and_nothing_changes(
    instructor, candidate, colleague, client
):
    assignment = give(instructor, candidate)
    url = withdraw_url(assignment)
    response = client.post(url)  # signed out: to sign in, nothing withdrawn
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    for someone in (colleague, candidate, User.objects.create_user("peer")):
        client.force_login(someone)
        assert client.post(url).status_code == 404
    assignment.refresh_from_db()
    assert assignment.withdrawn_at is None


@pytest.mark.parametrize(
    "path",
    [
        "{candidate}/assignments/{other}/withdraw/",  # another candidate's, under this one
        "{candidate}/assignments/999999/withdraw/",
        "{candidate}/assignments/99999999999999999999999999/withdraw/",
        "{other_candidate}/assignments/{assignment}/withdraw/",
        "999999/assignments/{assignment}/withdraw/",
    ],
)
def test_a_wrong_or_huge_id_is_404(instructor, candidate, client, path):
    other_candidate = User.objects.create_user("other")
    assignment = give(instructor, candidate)
    other = give(instructor, other_candidate)
    client.force_login(instructor)
    url = "/drills/instructor/candidates/" + path.format(
        candidate=candidate.pk,
        other_candidate=other_candidate.pk,
        assignment=assignment.pk,
        other=other.pk,
    )
    assert client.post(url).status_code == 404
    assert not Assignment.objects.filter(withdrawn_at__isnull=False).exists()


def test_withdraw_takes_a_post_only(instructor, candidate, client):
    assignment = give(instructor, candidate)
    client.force_login(instructor)
    assert client.get(withdraw_url(assignment)).status_code == 405
    assignment.refresh_from_db()
    assert assignment.withdrawn_at is None


def test_withdrawn_twice_says_it_was_already(instructor, candidate, client):
    assignment = give(instructor, candidate)
    client.force_login(instructor)
    client.post(withdraw_url(assignment))
    response = client.post(withdraw_url(assignment), follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    assert (
        "5 drills: TTFT from prefill was already withdrawn (Dec 7, 10:00 UTC): nothing changed."
    ) in html
    assert "message-error" in html


def test_one_the_candidate_started_since_the_page_opened_is_withdrawn(
    instructor, candidate, client
):
    assignment = give(instructor, candidate)
    client.force_login(instructor)
    page = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    assert withdraw_url(assignment) in page  # the instructor's page, opened before the click
    services.assignment_start(assignment=assignment)
    response = client.post(withdraw_url(assignment), follow=True)
    assert response.status_code == 200
    assignment.refresh_from_db()
    assert assignment.withdrawn_at is not None
    assert "Withdrawn" in response.content.decode()


def test_one_the_candidate_did_from_the_drills_page_is_refused(instructor, candidate, client):
    assignment = give(instructor, candidate)
    finish_set(candidate, "ttft", NOW + timedelta(minutes=30))
    client.force_login(instructor)
    html = client.post(withdraw_url(assignment), follow=True).content.decode()
    assert (
        "learner already did 5 drills: TTFT from prefill (Dec 7, 10:30 UTC), so there is "
        "nothing to withdraw: nothing changed."
    ) in html
    assignment.refresh_from_db()
    assert assignment.withdrawn_at is None


def test_a_set_begun_for_an_assignment_withdrawn_since_is_the_candidates_own(
    instructor, candidate, client
):
    """Withdrawn, the assignment leaves every candidate page, its set's page included: the
    set no longer says who assigned it, and finishing it announces no assignment done. A
    stale Start on it is told of the withdrawal instead of reopening the set."""
    assignment = services.assignment_start(assignment=give(instructor, candidate, note="Go"))
    set_url = f"/drills/sets/{assignment.drill_set_id}/"
    client.force_login(candidate)
    assert "Assigned by" in client.get(set_url).content.decode()
    services.assignment_withdraw(
        instructor=instructor, candidate=candidate, assignment_id=assignment.pk
    )
    page = client.get(set_url).content.decode()
    assert "Assigned by" not in page and "“Go”" not in page
    assert selectors.assignment_of_set(assignment.drill_set) is None

    stale = client.post(
        f"/drills/assignments/{assignment.pk}/start/", HTTP_REFERER="http://testserver/drills/"
    )
    assert stale.status_code == 302 and stale["Location"] == "/drills/"
    told = client.get("/drills/").content.decode()
    assert "Your instructor withdrew that assignment" in told


def test_the_instructors_list_shows_the_note_and_a_drill_assignment_done(
    instructor, candidate, client
):
    assignment = services.assignment_start(
        assignment=give(instructor, candidate, note="Prefill first")
    )
    assignment.drill_set.items.update(verdict="correct", answered_at=NOW)
    client.force_login(instructor)
    html = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    given = html.split('data-testid="given"')[1].split("</ul>")[0]
    assert "Done: 5 of 5 answered, 5 right" in given
    assert "Note: “<bdi>Prefill first</bdi>”" in given
