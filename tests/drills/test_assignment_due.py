"""An assignment may have a due date, a UTC day (the site's time zone): set in the assign
form (today at the earliest, a year ahead at the latest; anything else refused at the field,
the rest of the form kept), shown to the candidate beside the assignment and on the
instructor's list, "Overdue" in words once the day is past."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from drills import selectors, services
from drills.models import Assignment, DrillItem
from tests.drills.factories import fix_drills_clock, given_html

# A Monday; the clock the drills read is fixed at it.
NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
TODAY = date(2026, 12, 7)


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch):
    fix_drills_clock(monkeypatch, NOW)


def assign(client, instructor, candidate, due: str, what: str = "drill:ttft", note: str = ""):
    client.force_login(instructor)
    return client.post(
        f"/drills/instructor/candidates/{candidate.pk}/assign/",
        {"what": what, "note": note, "due": due},
    )


# ---------------------------------------------------------------------------------------------
# Reading and checking a due date


def test_a_due_date_is_read_as_a_utc_day_from_today_to_a_year_ahead(db):
    assert services.due_date_parse("") is None
    assert services.due_date_parse("  ") is None
    assert services.due_date_parse("2026-12-10") == date(2026, 12, 10)
    assert services.due_date_parse(" 2026-12-07 ") == TODAY  # today is allowed
    last = date(2027, 12, 7)  # the same day next year, and no later
    assert services.due_date_parse(last.isoformat()) == last
    with pytest.raises(services.DueDateError, match="at most a year ahead, by Dec 7, 2027"):
        services.due_date_parse("2027-12-08")
    assert services.a_year_after(date(2028, 2, 29)) == date(2029, 2, 28)
    # Late on the 7th in New York is already the 8th in UTC: the 7th is then past.
    late = datetime(2026, 12, 8, 1, 0, tzinfo=UTC)
    with pytest.raises(services.DueDateError, match="in the past"):
        services.due_date_parse("2026-12-07", now=late)


@pytest.mark.parametrize(
    "text",
    [
        "tomorrow",
        "20261210",  # ISO's basic form: fromisoformat reads it, a date field never sends it
        "2026-W50-4",
        "2026-12-10T00:00",
        "١٢٠٢-١٢-١٠",  # other scripts' digits
        "99999-01-01",
        "9" * 10_000,
        "2026-12-10\x00",
        "-2026-12-10",
    ],
)
def test_anything_but_a_day_is_refused_in_a_sentence(db, text):
    with pytest.raises(services.DueDateError, match="year-month-day"):
        services.due_date_parse(text)


@pytest.mark.parametrize("text", ["2026-13-01", "2026-02-30", "2027-02-29", "0000-01-01"])
def test_a_day_written_right_that_is_no_day_says_so(db, text):
    """Written as the field asks, so the message is not "write it year-month-day"."""
    with pytest.raises(services.DueDateError, match=f"{text} is no day of the calendar"):
        services.due_date_parse(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("2026-12-06", "Sun Dec 6, 2026 is in the past: choose today (UTC) or a later day"),
        ("1970-01-01", "Thu Jan 1, 1970 is in the past"),
        ("2027-12-08", "A due date is at most a year ahead, by Dec 7, 2027"),
        ("9999-12-31", "A due date is at most a year ahead"),
    ],
)
def test_a_day_past_or_absurdly_far_is_refused(db, text, words):
    with pytest.raises(services.DueDateError) as refused:
        services.due_date_parse(text)
    assert words in str(refused.value)


def test_the_service_stores_a_due_date_and_refuses_a_past_one(instructor, candidate):
    assignment = services.assignment_create(
        instructor=instructor, candidate=candidate, kind="ttft", due_on=date(2026, 12, 10)
    )
    assignment.refresh_from_db()
    assert assignment.due_on == date(2026, 12, 10)
    with pytest.raises(services.DueDateError):
        services.assignment_create(
            instructor=instructor, candidate=candidate, kind="n_inst", due_on=date(2026, 12, 1)
        )
    assert Assignment.objects.count() == 1


def test_due_words_say_today_a_weekday_a_year_and_overdue():
    assert selectors.due_words(None, TODAY) == ("", False)
    assert selectors.due_words(TODAY, TODAY) == ("Due today, Mon Dec 7", False)
    assert selectors.due_words(date(2026, 12, 10), TODAY) == ("Due Thu Dec 10", False)
    assert selectors.due_words(date(2027, 1, 4), TODAY) == ("Due Mon Jan 4, 2027", False)
    assert selectors.due_words(date(2026, 12, 6), TODAY) == (
        "Overdue: it was due Sun Dec 6",
        True,
    )


def test_the_candidates_open_assignments_carry_their_due_date(instructor, candidate):
    services.assignment_create(
        instructor=instructor, candidate=candidate, kind="ttft", due_on=date(2026, 12, 10)
    )
    [view] = selectors.assignments_open(user=candidate)
    assert (view.due, view.overdue) == ("Due Thu Dec 10", False)
    [view] = selectors.assignments_open(user=candidate, now=NOW + timedelta(days=4))
    assert (view.due, view.overdue) == ("Overdue: it was due Thu Dec 10", True)


# ---------------------------------------------------------------------------------------------
# The pages


def test_the_form_offers_a_date_field_bounded_by_today_and_a_year(instructor, candidate, client):
    client.force_login(instructor)
    html = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    field = html.split('id="assign-due"')[1].split(">")[0]
    assert 'name="due"' in field and 'min="2026-12-07"' in field and 'max="2027-12-07"' in field
    assert '<label for="assign-due">Due by (optional)</label>' in html
    assert "The end of that day, UTC" in html


def test_an_assignment_due_shows_its_date_to_the_candidate_and_the_instructor(
    instructor, candidate, client
):
    response = assign(client, instructor, candidate, "2026-12-10", note="Before Thursday")
    assert response.status_code == 302
    assert Assignment.objects.get().due_on == date(2026, 12, 10)
    page = client.get(response["Location"]).content.decode()
    assert "Assigned 5 drills: TTFT from prefill to learner (due Thu Dec 10)." in page
    given = page.split('data-testid="given"')[1].split("</ul>")[0]
    assert 'Not started. <span class="due">Due Thu Dec 10</span>' in given
    client.force_login(candidate)
    for url in ("/", "/drills/", "/drills/progress/"):
        html = client.get(url).content.decode()
        assert (
            '“<bdi class="assignment-note">Before Thursday</bdi>”. '
            '<span class="due">Due Thu Dec 10.</span>'
        ) in html


def test_an_assignment_without_a_date_shows_none(instructor, candidate, client):
    assign(client, instructor, candidate, "")
    assert Assignment.objects.get().due_on is None
    client.force_login(candidate)
    assert 'class="due' not in client.get("/drills/").content.decode()
    assert 'class="due' not in given_html(client, instructor, candidate)


def test_an_overdue_assignment_says_so_in_words_on_both_sides(instructor, candidate, client):
    Assignment.objects.create(  # made a week ago, due two days ago
        instructor=instructor,
        candidate=candidate,
        kind="ttft",
        created_at=NOW - timedelta(days=7),
        due_on=date(2026, 12, 5),
    )
    client.force_login(candidate)
    for url in ("/", "/drills/", "/drills/progress/"):
        html = client.get(url).content.decode()
        assert '<span class="due due-overdue">Overdue: it was due Sat Dec 5.</span>' in html
    given = given_html(client, instructor, candidate)
    assert 'class="given given-overdue"' in given
    assert "Overdue: it was due Sat Dec 5" in given


def test_an_assignment_done_or_withdrawn_is_no_longer_marked_overdue(instructor, candidate, client):
    done = Assignment.objects.create(
        instructor=instructor,
        candidate=candidate,
        kind="ttft",
        created_at=NOW - timedelta(days=7),
        due_on=date(2026, 12, 5),
    )
    drill_set = services.drill_set_start(user=candidate, kind="ttft", now=NOW - timedelta(days=6))
    DrillItem.objects.filter(drill_set=drill_set).update(verdict="correct", answered_at=NOW)
    Assignment.objects.create(
        instructor=instructor,
        candidate=candidate,
        kind="n_inst",
        created_at=NOW - timedelta(days=7),
        due_on=date(2026, 12, 5),
        withdrawn_at=NOW - timedelta(days=3),
    )
    given = given_html(client, instructor, candidate)
    assert "Overdue" not in given and "due-overdue" not in given
    assert "5 of 5 answered, 5 right" in given and "Withdrawn Dec 4" in given
    assert done.pk  # kept, done


@pytest.mark.parametrize(
    ("due", "words"),
    [
        ("2026-12-06", "Sun Dec 6, 2026 is in the past"),
        ("2999-01-01", "A due date is at most a year ahead"),
        ("next thursday", "A due date is a day written year-month-day"),
        ("2026-02-30", "2026-02-30 is no day of the calendar"),
        ("9" * 5000, "A due date is a day written year-month-day"),
    ],
)
def test_a_bad_due_date_is_refused_at_its_field_keeping_the_rest(
    instructor, candidate, client, due, words
):
    response = assign(client, instructor, candidate, due, what="drill:ttft", note="Try it")
    assert response.status_code == 422
    html = response.content.decode()
    assert f'<p class="field-errors" id="assign-due-error">{words}' in html
    field = html.split('id="assign-due"')[1].split(">")[0]
    assert 'aria-invalid="true"' in field and "autofocus" in field
    assert 'aria-describedby="assign-due-error assign-due-help"' in field
    assert f'value="{due[:30]}"' in field  # what was typed, cut to a field's worth
    assert '<option value="drill:ttft" selected>' in html and 'value="Try it"' in html
    select = html.split('id="assign-what"')[1].split(">")[0]
    assert "aria-invalid" not in select  # the choice was fine
    assert not Assignment.objects.exists()
