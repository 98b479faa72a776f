"""Instructors see each candidate's progress per concept (the candidate's own figures) and
assign a drill set or a question; the candidate sees it on the home, drills and progress
pages and starts it in one click. Nobody else reaches the instructor pages or the
assignment."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from accounts.instructors import instructor_grant
from drills import selectors, services
from drills.models import Assignment, DrillSet
from tests.conftest import at_once
from tests.drills.conftest import PASSWORD
from tests.drills.factories import graded_submission


@pytest.fixture
def candidate(content_loaded):
    """A candidate whose architecture answer was graded low: the concepts it links are weak."""
    user = User.objects.create_user("learner", password=PASSWORD)
    graded_submission(
        user=user, at=timezone.now() - timedelta(days=1), step="architecture", grades={"llm": 0.2}
    )
    graded_submission(
        user=user, at=timezone.now() - timedelta(days=1), step="clarify", grades={"llm": 0.9}
    )
    return user


def assign(client, instructor, candidate, what: str, note: str = ""):
    client.force_login(instructor)
    return client.post(
        f"/drills/instructor/candidates/{candidate.pk}/assign/", {"what": what, "note": note}
    )


# ---------------------------------------------------------------------------------------------
# Who reaches the instructor pages


def test_candidates_get_404_and_visitors_sign_in_on_every_instructor_page(candidate, client):
    other = User.objects.create_user("peer", password=PASSWORD)
    urls = ["/drills/instructor/", f"/drills/instructor/candidates/{other.pk}/"]
    for url in urls:  # signed out: to sign in, and back
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(candidate)
    for url in urls:
        assert client.get(url).status_code == 404
    response = client.post(
        f"/drills/instructor/candidates/{other.pk}/assign/", {"what": "drill:ttft"}
    )
    assert response.status_code == 404
    assert not Assignment.objects.exists()


def test_an_instructor_reaches_the_pages_but_not_another_instructor_as_a_candidate(
    instructor, candidate, client
):
    colleague = User.objects.create_user("colleague", password=PASSWORD)
    instructor_grant(colleague)
    client.force_login(instructor)
    assert client.get("/drills/instructor/").status_code == 200
    assert client.get(f"/drills/instructor/candidates/{candidate.pk}/").status_code == 200
    assert client.get(f"/drills/instructor/candidates/{colleague.pk}/").status_code == 404
    response = client.post(
        f"/drills/instructor/candidates/{colleague.pk}/assign/", {"what": "drill:ttft"}
    )
    assert response.status_code == 404
    assert not Assignment.objects.exists()


# ---------------------------------------------------------------------------------------------
# What instructors see


def test_the_list_shows_each_candidates_weakest_concepts_with_their_own_figures(
    instructor, candidate, client
):
    client.force_login(instructor)
    html = client.get("/drills/instructor/").content.decode()
    assert 'data-candidate="learner"' in html
    assert 'data-candidate="teacher"' not in html  # instructors are not candidates
    own = selectors.progress(user=candidate)
    weak = [r for r in own.concepts if r.url and r.overall.mean < selectors.WEAK_BELOW]
    assert weak, "the low architecture grade makes weak concepts"
    row = html.split('data-candidate="learner"')[1].split("</tr>")[0]
    for r in weak[: selectors.WEAKEST_SHOWN]:
        assert (
            f'data-concept="{r.key}" data-mean="{r.overall.mean}" data-count="{r.overall.count}"'
        ) in row
        assert r.title in row
    strong = [r for r in own.concepts if r.overall.mean >= selectors.WEAK_BELOW]
    assert all(f'data-concept="{r.key}"' not in row for r in strong)


def test_the_candidates_list_costs_the_same_queries_for_a_full_page_as_for_one(
    instructor, candidate, client
):
    """Each candidate's figures are read for the whole page at once (progress_many), not a
    progress read per row: a cohort grows, the page must not slow with it."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/drills/instructor/").status_code == 200
        return len(captured)

    client.force_login(instructor)
    services.drill_set_start(user=candidate)
    one = queries()
    when = timezone.now() - timedelta(days=2)
    for i in range(selectors.CANDIDATES_PER_PAGE - 1):
        other = User.objects.create_user(f"peer{i}")
        graded_submission(user=other, at=when, step="architecture", grades={"llm": 0.3})
        drill_set = services.drill_set_start(user=other)
        item = drill_set.items.first()
        services.drill_item_answer(item=item, answer="1 GB", now=when)
    full = queries()
    assert full <= one, f"{one} queries for 1 candidate, {full} for a page of them"
    html = client.get("/drills/instructor/").content.decode()
    row = html.split('data-candidate="peer7"')[1].split("</tr>")[0]
    own = selectors.progress(user=User.objects.get(username="peer7"))
    assert own.verdict_count == 1 and own.drill_count == 1
    weak = [r for r in own.concepts if r.url and r.overall.mean < selectors.WEAK_BELOW]
    for r in weak[: selectors.WEAKEST_SHOWN]:
        assert f'data-concept="{r.key}" data-mean="{r.overall.mean}"' in row


def test_the_candidate_page_shows_every_concept_week_by_week(instructor, candidate, client):
    client.force_login(instructor)
    html = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    assert 'id="chart-concepts"' in html
    for r in selectors.progress(user=candidate).concepts:
        assert r.title in html


# ---------------------------------------------------------------------------------------------
# Assigning, and the candidate's one click


def test_both_progress_pages_list_the_weakest_concepts_and_the_candidates_names_questions(
    instructor, candidate, client
):
    """The candidate's own page names the questions that use each weak concept; the
    instructor's page lists the same concepts and assigns questions through its form."""
    weakest = selectors.progress(user=candidate).weakest
    assert any(w.questions for w in weakest)
    client.force_login(candidate)
    own = client.get("/drills/progress/").content.decode().split('data-testid="weakest"')[1]
    own = own.split("</section>")[0]
    client.force_login(instructor)
    theirs = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    theirs = theirs.split('data-testid="weakest"')[1].split("</section>")[0]
    for w in weakest:
        assert f'<a href="{w.url}">{w.title}</a>' in own
        assert f'<a href="{w.url}">{w.title}</a>' in theirs
    assert "Questions that use it" in own
    assert "Questions that use it" not in theirs


def test_an_assigned_drill_set_shows_on_home_drills_and_progress_and_starts_in_one_click(
    instructor, candidate, client
):
    response = assign(client, instructor, candidate, "drill:ttft", note="Prefill, then TTFT")
    assert response.status_code == 302
    assignment = Assignment.objects.get(candidate=candidate)
    assert (assignment.kind, assignment.instructor) == ("ttft", instructor)

    client.force_login(candidate)
    start_url = f"/drills/assignments/{assignment.pk}/start/"
    for page in ("/", "/drills/", "/drills/progress/"):
        html = client.get(page).content.decode()
        assert (
            "<bdi>teacher</bdi> assigned you 5 drills: TTFT from prefill: "
            '“<bdi class="assignment-note">Prefill, then TTFT</bdi>”'
        ) in html
        assert f'action="{start_url}"' in html

    response = client.post(start_url)
    drill_set = DrillSet.objects.get(user=candidate)
    assert response.status_code == 302 and response["Location"] == f"/drills/sets/{drill_set.pk}/"
    assert [i.kind for i in drill_set.items.all()] == ["ttft"] * 5
    assignment.refresh_from_db()
    assert assignment.drill_set == drill_set and assignment.started_at is not None
    # Started: offered as a link back to its set; a second click opens the same set, not
    # another one.
    home = client.get("/").content.decode()
    assert start_url not in home
    assert f'href="/drills/sets/{drill_set.pk}/">Continue the 5 drills' in home
    assert client.post(start_url)["Location"] == f"/drills/sets/{drill_set.pk}/"
    assert DrillSet.objects.filter(user=candidate).count() == 1


def test_assign_says_what_was_assigned(instructor, candidate, client):
    response = assign(client, instructor, candidate, "drill:ttft")
    page = client.get(response["Location"]).content.decode()
    assert "Assigned 5 drills: TTFT from prefill to learner." in page


def test_a_kind_already_open_is_not_assigned_twice_and_the_page_says_since_when(
    instructor, candidate, client
):
    """The same form sent twice (Enter pressed twice) gave the candidate two identical
    assignments, offered twice on their pages."""
    client.get(assign(client, instructor, candidate, "drill:ttft")["Location"])
    first = Assignment.objects.get()
    response = assign(client, instructor, candidate, "drill:ttft", note="Again")
    assert response.status_code == 302
    assert Assignment.objects.get() == first
    page = client.get(response["Location"]).content.decode()
    since = timezone.localtime(first.created_at)
    assert (
        f"5 drills: TTFT from prefill is already assigned to learner, open since "
        f"{since:%b} {since.day}, {since:%H:%M} UTC: not assigned again."
    ) in page
    assert "Assigned 5 drills" not in page
    client.force_login(candidate)
    for url in ("/", "/drills/"):
        assert client.get(url).content.decode().count("<bdi>teacher</bdi> assigned you") == 1


def test_a_question_already_open_is_not_assigned_twice(instructor, candidate, client):
    assign(client, instructor, candidate, "question:long-context-rag")
    response = assign(client, instructor, candidate, "question:long-context-rag")
    assert Assignment.objects.count() == 1
    page = client.get(response["Location"]).content.decode()
    assert "is already assigned to learner" in page
    # The same form again with nothing new: no word on changing it.
    assert "withdraw it and assign it again" not in page


def test_a_new_note_for_work_already_open_is_told_how_to_change_it(instructor, candidate, client):
    """A second assign of open work with a new note (or due date) does not change the open
    one: its giver is told the way to, since only they may withdraw it."""
    assign(client, instructor, candidate, "question:long-context-rag")
    response = assign(client, instructor, candidate, "question:long-context-rag", note="By Friday")
    page = client.get(response["Location"]).content.decode()
    assert "not assigned again. To give it another due date or note, withdraw it" in page
    assert Assignment.objects.get().note == ""
    colleague = User.objects.create_user("colleague", password=PASSWORD)
    instructor_grant(colleague)
    client.force_login(colleague)
    response = assign(client, colleague, candidate, "question:long-context-rag", note="Mine")
    page = client.get(response["Location"]).content.decode()
    assert "is already assigned to learner" in page
    assert "withdraw it and assign it again" not in page  # not theirs to withdraw


def test_a_kind_started_and_not_done_is_not_assigned_again_until_done(
    instructor, candidate, client
):
    """Started and left half done is still outstanding: a second copy would list the same
    work twice on the candidate's pages. Once done, it can be assigned again."""
    assign(client, instructor, candidate, "drill:ttft")
    first = services.assignment_start(assignment=Assignment.objects.get())
    response = assign(client, instructor, candidate, "drill:ttft", note="Again")
    assert Assignment.objects.count() == 1
    page = client.get(response["Location"]).content.decode()
    assert "is already assigned to learner, open since" in page
    assert ", started " in page and "and not done yet: not assigned again." in page
    # Started and undone can still be withdrawn: the way to change its due date or note.
    assert "withdraw it and assign it again" in page
    assert len(selectors.assignments_open(user=candidate)) == 1

    first.drill_set.items.update(verdict="correct")
    assign(client, instructor, candidate, "drill:ttft")
    assert Assignment.objects.count() == 2
    assert len(selectors.assignments_open(user=candidate)) == 1


@pytest.mark.django_db(transaction=True)
def test_two_assigns_at_once_add_one_assignment(monkeypatch):
    """Two posts of the form at the same moment: each reads the candidate's open work before
    either writes, unless the candidate is locked for the check and the write."""
    teacher = User.objects.create_user("teacher")
    learner = User.objects.create_user("learner")
    real_clock = services.clock

    def slow_clock():
        # Between reading the open assignments and writing the new one: room for the other.
        time.sleep(0.3)
        return real_clock()

    monkeypatch.setattr(services, "clock", slow_clock)

    def post():
        return services.assignment_create(instructor=teacher, candidate=learner, kind="ttft")

    outcomes = at_once(post, post)
    assert sorted(type(o).__name__ for o in outcomes) == ["AlreadyAssigned", "Assignment"]
    assert Assignment.objects.filter(candidate=learner).count() == 1


def test_the_instructor_sees_how_far_an_assigned_set_got(instructor, candidate, client):
    assign(client, instructor, candidate, "drill:n_inst")
    assignment = services.assignment_start(assignment=Assignment.objects.get())
    item = assignment.drill_set.items.get(position=1)
    services.drill_item_answer(item=item, answer="1")
    client.force_login(instructor)
    html = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    given = html.split('data-testid="given"')[1].split("</ul>")[0]
    item.refresh_from_db()
    right = int(item.verdict == "correct")
    assert f"1 of 5 answered, {right} right" in given


def test_an_assigned_question_opens_in_one_click(instructor, candidate, client):
    assert assign(client, instructor, candidate, "question:long-context-rag").status_code == 302
    assignment = Assignment.objects.get(candidate=candidate)
    client.force_login(candidate)
    html = client.get("/").content.decode()
    assert "<bdi>teacher</bdi> assigned you" in html and "Open the question" in html
    response = client.post(f"/drills/assignments/{assignment.pk}/start/")
    assert response.status_code == 302
    assert response["Location"] == "/questions/long-context-rag/"
    assignment.refresh_from_db()
    assert assignment.started_at is not None and assignment.drill_set is None


def test_someone_elses_assignment_is_404_and_stays_unstarted(instructor, candidate, client):
    assign(client, instructor, candidate, "drill:weights")
    assignment = Assignment.objects.get()
    other = User.objects.create_user("nosy", password=PASSWORD)
    client.force_login(other)
    assert client.post(f"/drills/assignments/{assignment.pk}/start/").status_code == 404
    assert "assigned you" not in client.get("/drills/").content.decode()
    assignment.refresh_from_db()
    assert assignment.started_at is None
    assert not DrillSet.objects.exists()


@pytest.mark.parametrize(
    ("what", "words"),
    [
        ("", "Choose a drill set or a question"),
        ("drill:nope", "Unknown drill kind"),
        ("question:no-such-question", "No published question"),
    ],
)
def test_a_bad_assignment_is_refused_with_a_sentence(instructor, candidate, client, what, words):
    response = assign(client, instructor, candidate, what)
    assert response.status_code == 422
    assert words in response.content.decode()
    assert not Assignment.objects.exists()


def test_an_assignment_is_drills_or_a_question_never_both(instructor, candidate):
    from django.db import IntegrityError

    from questions.models import Question

    with pytest.raises(IntegrityError):
        Assignment.objects.create(
            instructor=instructor,
            candidate=candidate,
            kind="ttft",
            question=Question.objects.get(slug="chat-api-50qps"),
            created_at=timezone.now(),
        )


def test_an_assigned_question_since_unpublished_is_not_offered_and_cannot_be_opened(
    instructor, candidate, client
):
    """It was offered as "assigned you a question", and its one click marked it started and
    opened a 404."""
    from questions.models import Question

    assign(client, instructor, candidate, "question:long-context-rag")
    assignment = Assignment.objects.get()
    Question.objects.filter(slug="long-context-rag").update(current_revision=None)
    client.force_login(candidate)
    for page in ("/", "/drills/", "/drills/progress/"):
        assert "assigned you" not in client.get(page).content.decode()
    response = client.post(f"/drills/assignments/{assignment.pk}/start/")
    assert (response.status_code, response["Location"]) == (302, "/drills/")
    assert "no longer published" in client.get("/drills/").content.decode()
    assignment.refresh_from_db()
    assert assignment.started_at is None
    client.force_login(instructor)
    html = client.get(f"/drills/instructor/candidates/{candidate.pk}/").content.decode()
    given = html.split('data-testid="given"')[1].split("</ul>")[0]
    assert "“long-context-rag”" in given and "no longer published" in given


def test_an_assigned_drill_kind_since_withdrawn_is_not_offered_and_cannot_be_started(
    instructor, candidate, client, monkeypatch
):
    """Starting it was a server error."""
    from drills import engine

    assign(client, instructor, candidate, "drill:ttft")
    assignment = Assignment.objects.get()
    kinds = {k: v for k, v in engine.KINDS.items() if k != "ttft"}
    monkeypatch.setattr(engine, "KINDS", kinds)
    monkeypatch.setattr(engine, "AVAILABLE", tuple(kinds))
    client.force_login(candidate)
    assert "assigned you" not in client.get("/drills/").content.decode()
    response = client.post(f"/drills/assignments/{assignment.pk}/start/")
    assert (response.status_code, response["Location"]) == (302, "/drills/")
    assert "no longer offered" in client.get("/drills/").content.decode()
    assignment.refresh_from_db()
    assert assignment.started_at is None and not DrillSet.objects.exists()


def test_the_candidates_list_pages_with_the_sites_page_links(client, instructor, candidate):
    for i in range(selectors.CANDIDATES_PER_PAGE):
        User.objects.create_user(f"peer{i:02d}")
    client.force_login(instructor)
    first = client.get("/drills/instructor/").content.decode()
    total = selectors.CANDIDATES_PER_PAGE + 1
    assert f"Page 1 of 2 · {total} candidates" in first
    assert 'href="?page=2" rel="next">Next →</a>' in first
    second = client.get("/drills/instructor/?page=2").content.decode()
    assert 'href="?page=1" rel="prev">← Previous</a>' in second
