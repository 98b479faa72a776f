"""An assignment started and not done yet stays on the candidate's pages, with its note, its
due date and a way back to the work (its set, its question's page), until the work is done
however it was done; a set started from an assignment says whose it is and, once answered,
that the assignment is done. A note's direction marks cannot reorder the page's own words,
and a Start pressed after a withdrawal goes back to the page it came from."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from drills import selectors, services
from drills.models import Assignment, DrillItem
from tests.drills.factories import finish_attempt, fix_drills_clock, revision_of

# A Monday; the clock the drills read is fixed at it.
NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
TOMORROW = date(2026, 12, 8)
SLUG = "long-context-rag"
PAGES = ("/", "/drills/", "/drills/progress/")


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch):
    fix_drills_clock(monkeypatch, NOW)


def give(instructor, candidate, **fields) -> Assignment:
    """Five TTFT drills due tomorrow with a note, unless `fields` say otherwise."""
    return services.assignment_create(
        instructor=instructor,
        candidate=candidate,
        **({"kind": "ttft", "note": "Prefill first", "due_on": TOMORROW} | fields),
    )


def assigned_part(html: str) -> str:
    return html.split('data-testid="assignments"')[1].split("</ul>")[0]


# ---------------------------------------------------------------------------------------------
# Started and not done: still listed, with the way back


def test_a_question_opened_and_not_done_stays_listed_with_its_note_and_due_date(
    instructor, candidate, client
):
    """One click on "Open the question" took it off every page: the note and the due date
    were shown nowhere, though nothing was done."""
    assignment = give(instructor, candidate, kind="", question_slug=SLUG)
    client.force_login(candidate)
    start = client.post(f"/drills/assignments/{assignment.pk}/start/")
    assert start["Location"] == f"/questions/{SLUG}/"
    for page in PAGES:
        part = assigned_part(client.get(page).content.decode())
        assert '“<bdi class="assignment-note">Prefill first</bdi>”' in part
        assert "Due tomorrow" in part or "Due Tue Dec 8." in part
        assert f'href="/questions/{SLUG}/">Continue the question' in part
        assert "/start/" not in part  # a link back to the work, not a second start
    assert [v.action for v in selectors.assignments_open(user=candidate)] == [
        "Continue the question"
    ]

    finish_attempt(candidate, SLUG, NOW + timedelta(hours=1))
    assert selectors.assignments_open(user=candidate) == []
    for page in PAGES:
        assert 'data-testid="assignments"' not in client.get(page).content.decode()


def test_the_assigned_questions_page_says_who_set_it_with_the_note_and_due_date(
    instructor, candidate, client
):
    """The question's page is where the work is done; it said nothing of the assignment."""
    instructor.first_name = "‮Ada"  # a name's direction mark stays inside its <bdi>
    instructor.save()
    assignment = give(instructor, candidate, kind="", question_slug=SLUG, due_on=NOW.date())
    client.force_login(candidate)
    client.post(f"/drills/assignments/{assignment.pk}/start/")
    page = client.get(f"/questions/{SLUG}/").content.decode()
    assert page.count('data-testid="assigned"') == 1
    assigned = page.split('data-testid="assigned">')[1].split("</p>")[0]
    assert assigned == (
        'Assigned by <bdi>‮Ada</bdi>: “<bdi class="assignment-note">Prefill first</bdi>”. '
        '<span class="due">Due today, Mon Dec 7.</span>'
    )
    other_slug = "chat-api-50qps"
    assert 'data-testid="assigned"' not in client.get(f"/questions/{other_slug}/").content.decode()
    client.force_login(User.objects.create_user("someone-else"))
    assert 'data-testid="assigned"' not in client.get(f"/questions/{SLUG}/").content.decode()

    client.force_login(candidate)
    finish_attempt(candidate, SLUG, NOW + timedelta(hours=1))
    assert 'data-testid="assigned"' not in client.get(f"/questions/{SLUG}/").content.decode()


def test_a_withdrawn_assignment_leaves_its_questions_page(instructor, candidate, client):
    assignment = give(instructor, candidate, kind="", question_slug=SLUG)
    client.force_login(candidate)
    assert 'data-testid="assigned"' in client.get(f"/questions/{SLUG}/").content.decode()
    services.assignment_withdraw(
        instructor=instructor, candidate=candidate, assignment_id=assignment.pk
    )
    assert 'data-testid="assigned"' not in client.get(f"/questions/{SLUG}/").content.decode()


def test_a_drill_set_started_and_half_answered_stays_listed_with_how_far_it_got(
    instructor, candidate, client
):
    assignment = give(instructor, candidate)
    client.force_login(candidate)
    client.post(f"/drills/assignments/{assignment.pk}/start/")
    assignment.refresh_from_db()
    drill_set = assignment.drill_set
    DrillItem.objects.filter(drill_set=drill_set, position__lte=2).update(
        verdict="correct", answered_at=NOW
    )
    for page in PAGES:
        part = assigned_part(client.get(page).content.decode())
        assert '“<bdi class="assignment-note">Prefill first</bdi>”.' in part
        assert "Started: 2 of 5 answered." in part and "Due Tue Dec 8." in part
        assert f'href="/drills/sets/{drill_set.pk}/">Continue the 5 drills' in part

    DrillItem.objects.filter(drill_set=drill_set).update(verdict="correct", answered_at=NOW)
    assert selectors.assignments_open(user=candidate) == []


def test_the_instructors_list_counts_a_started_one_as_open_until_done(instructor, candidate):
    assignment = services.assignment_start(assignment=give(instructor, candidate))
    summary = selectors.candidate_summaries().object_list[0]
    assert summary.open_assignments == 1
    assignment.drill_set.items.update(verdict="correct")
    assert selectors.candidate_summaries().object_list[0].open_assignments == 0


def test_started_assignments_cost_no_more_queries_than_unstarted_ones(instructor, candidate):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            views = selectors.assignments_open(user=candidate)
        assert views
        return len(captured)

    give(instructor, candidate)
    give(instructor, candidate, kind="", question_slug=SLUG)
    one = queries()
    for a in Assignment.objects.all():
        services.assignment_start(assignment=a)
    give(instructor, candidate, kind="kv_per_token")
    give(instructor, candidate, kind="", question_slug="chat-api-50qps")
    many = queries()
    assert len(selectors.assignments_open(user=candidate)) == 4
    assert many <= one, f"{one} queries for two assignments, {many} for four, two started"


# ---------------------------------------------------------------------------------------------
# A note's direction marks


def test_direction_marks_are_taken_out_of_a_note(instructor, candidate):
    assignment = give(instructor, candidate, note="\u202eread this\u202c \u2067x\u2069 ")
    assert assignment.note == "read this x"


def test_the_note_and_who_gave_it_are_isolated_on_every_candidate_page(
    instructor, candidate, client
):
    instructor.first_name = "דנה"
    instructor.save()
    give(instructor, candidate, note="שלום 42")
    client.force_login(candidate)
    for page in PAGES:
        part = assigned_part(client.get(page).content.decode())
        assert "<bdi>דנה</bdi> assigned you" in part
        assert '“<bdi class="assignment-note">שלום 42</bdi>”.' in part


# ---------------------------------------------------------------------------------------------
# A Start pressed after the assignment was withdrawn


def test_a_start_after_a_withdrawal_goes_back_to_its_page_with_the_rest_below(
    instructor, candidate, client
):
    """It was a 410 page at the POST's address that said the rest of the assignments were
    below, listed none, and posted again on a reload."""
    gone = give(instructor, candidate)
    give(instructor, candidate, kind="", question_slug=SLUG, note="Still here")
    services.assignment_withdraw(instructor=instructor, candidate=candidate, assignment_id=gone.pk)
    client.force_login(candidate)
    for page in ("/", "/drills/progress/"):
        response = client.post(
            f"/drills/assignments/{gone.pk}/start/", headers={"referer": f"http://testserver{page}"}
        )
        assert (response.status_code, response["Location"]) == (302, page)
        html = client.get(page).content.decode()
        said = html.index("Your instructor withdrew that assignment")
        assert said < html.index('data-testid="assignments"')
        assert "Still here" in assigned_part(html)
    # From another site, a path of this site that a browser reads as another host, or none:
    # the drills page.
    for referer in ("https://evil.example/", "http://testserver//evil.example/x", ""):
        response = client.post(
            f"/drills/assignments/{gone.pk}/start/", headers={"referer": referer}
        )
        assert response["Location"] == "/drills/", referer
    assert not gone.__class__.objects.get(pk=gone.pk).drill_set_id


# ---------------------------------------------------------------------------------------------
# The set page of an assignment


def test_an_assigned_set_says_whose_it_is_and_when_it_is_due(instructor, candidate, client):
    assignment = give(instructor, candidate, due_on=NOW.date())
    client.force_login(candidate)
    location = client.post(f"/drills/assignments/{assignment.pk}/start/")["Location"]
    html = client.get(location).content.decode()
    assert (
        'Assigned by <bdi>teacher</bdi>: “<bdi class="assignment-note">Prefill first</bdi>”. '
        '<span class="due">Due today, Mon Dec 7.</span>'
    ) in html
    # A set started from /drills/ says nothing of it.
    other = services.drill_set_start(user=candidate, kind="ttft", now=NOW)
    assert 'data-testid="assigned"' not in client.get(f"/drills/sets/{other.pk}/").content.decode()


def test_answering_the_last_drill_of_an_assigned_set_says_the_assignment_is_done(
    instructor, candidate, client
):
    assignment = services.assignment_start(assignment=give(instructor, candidate))
    drill_set = assignment.drill_set
    DrillItem.objects.filter(drill_set=drill_set, position__lte=4).update(
        verdict="correct", answered_at=NOW
    )
    client.force_login(candidate)
    response = client.post(
        f"/drills/sets/{drill_set.pk}/drills/5/answer/", {"answer": "1 ms"},
        headers={"HX-Request": "true"},
    )  # fmt: skip
    html = response.content.decode()
    done = "Assignment done: 5 drills: TTFT from prefill, from <bdi>teacher</bdi>. Set done."
    assert done in html
    assert 'data-testid="assigned"' not in html  # no due date for work done


def test_the_scorecard_of_the_attempt_that_did_an_assigned_question_says_so(
    instructor, candidate, client
):
    give(instructor, candidate, kind="", question_slug=SLUG)
    earlier = finish_attempt(candidate, SLUG, NOW - timedelta(days=2))  # before it was given
    attempt = finish_attempt(candidate, SLUG, NOW + timedelta(hours=1))
    client.force_login(candidate)
    html = client.get(f"/attempts/{attempt.pk}/scorecard/").content.decode()
    title = revision_of(SLUG).title
    assert f"Assignment done: {title}, from <bdi>teacher</bdi>." in html
    html = client.get(f"/attempts/{earlier.pk}/scorecard/").content.decode()
    assert "Assignment done" not in html


def test_started_or_not_the_newest_is_listed_first(instructor, candidate):
    older = give(instructor, candidate, kind="kv_per_token")
    services.assignment_start(assignment=older)
    Assignment.objects.filter(pk=older.pk).update(created_at=NOW - timedelta(days=3))
    newer = give(instructor, candidate)
    oldest = give(instructor, candidate, kind="", question_slug=SLUG)
    Assignment.objects.filter(pk=oldest.pk).update(created_at=NOW - timedelta(days=5))
    views = selectors.assignments_open(user=candidate)
    assert [v.assignment.pk for v in views] == [newer.pk, older.pk, oldest.pk]


@pytest.mark.parametrize("due_on", [None, date(2026, 12, 10)])
def test_a_sentence_with_a_note_ends_once_with_or_without_a_due_date(
    instructor, candidate, client, due_on
):
    give(instructor, candidate, note="Prefill first", due_on=due_on)
    client.force_login(candidate)
    sentence = (
        client.get("/drills/").content.decode().split('class="sentence"')[1].split("</span>")[0]
    )
    assert '“<bdi class="assignment-note">Prefill first</bdi>”.' in sentence


@pytest.mark.parametrize("note", ["Prefill first.", "Why is TTFT so long?", "Go!"])
def test_a_note_that_ends_its_own_sentence_gets_no_second_full_stop(
    instructor, candidate, client, note
):
    drills = give(instructor, candidate, note=note)
    question = give(instructor, candidate, kind="", question_slug=SLUG, note=note)
    client.force_login(candidate)
    set_url = client.post(f"/drills/assignments/{drills.pk}/start/")["Location"]
    quoted = f'“<bdi class="assignment-note">{note}</bdi>”'
    for url in ("/drills/", set_url, f"/questions/{question.question.slug}/"):
        page = client.get(url).content.decode()
        assert quoted in page, url
        assert f"{quoted}." not in page, url
