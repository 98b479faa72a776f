"""The progress page's figures are the verdicts stored: each submission's primary verdict
(instructor, else model, else self-check; never the keyword matcher), self-checked and
mock-interview verdicts counted as such, drills by the checker's verdict."""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User

from drills import selectors, services
from drills.models import DrillItem, DrillSet
from mocks.models import MockSession
from practice.models import Attempt, Grade
from tests.drills.factories import graded_submission, revision_of

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)  # a Wednesday
THIS_WEEK = NOW - timedelta(days=1)
LAST_WEEK = NOW - timedelta(days=8)
PRIORITY = ["instructor", "llm", "self"]  # written out here, apart from the code under test


@pytest.fixture
def history(content_loaded):
    """A candidate's verdicts of every sort, and some that must not count."""
    user = User.objects.create_user("progress-candidate", password="a-long-Passphrase-42")
    graded_submission(
        user=user, at=LAST_WEEK, step="architecture", grades={"rubric": 0.3, "llm": 0.8}
    )
    graded_submission(
        user=user, at=LAST_WEEK, step="architecture", grades={"rubric": 0.9, "self": 0.5}
    )
    graded_submission(
        user=user, at=THIS_WEEK, step="clarify", grades={"llm": 0.2, "instructor": 0.9}
    )
    graded_submission(user=user, at=THIS_WEEK, step="estimate", grades={"self": 0.25})
    ended = Attempt.objects.create(user=user, revision=revision_of())
    MockSession.objects.create(
        attempt=ended, mode="app", total_minutes=45, started_at=THIS_WEEK, ended_at=THIS_WEEK
    )
    graded_submission(
        user=user, at=THIS_WEEK, step="architecture", attempt=ended, grades={"llm": 0.4}
    )
    # Not counted: the matcher alone, a running mock interview, a preview, another candidate.
    graded_submission(user=user, at=THIS_WEEK, step="bottlenecks", grades={"rubric": 1.0})
    running = Attempt.objects.create(user=user, revision=revision_of())
    MockSession.objects.create(attempt=running, mode="app", total_minutes=45, started_at=THIS_WEEK)
    graded_submission(
        user=user, at=THIS_WEEK, step="bottlenecks", attempt=running, grades={"llm": 0.0}
    )
    preview = Attempt.objects.create(user=user, revision=revision_of(), is_preview=True)
    graded_submission(
        user=user, at=THIS_WEEK, step="tradeoffs", attempt=preview, grades={"llm": 0.0}
    )
    other = User.objects.create_user("other-candidate", password="a-long-Passphrase-42")
    graded_submission(user=other, at=THIS_WEEK, step="tradeoffs", grades={"llm": 0.0})
    # Drills: two right and a known mistake this week.
    drill_set = DrillSet.objects.create(user=user, created_at=THIS_WEEK)
    for position, verdict in enumerate(("correct", "correct", "known_mistake"), start=1):
        DrillItem.objects.create(drill_set=drill_set, user=user, position=position,
                                 kind="kv_per_token", seed=position, fingerprint=str(position),
                                 answer="1", verdict=verdict, answered_at=THIS_WEEK)  # fmt: skip
    return user


def expected_step_cells(user) -> dict[tuple[str, datetime.date], dict]:
    """The figures, straight from the Grade rows."""
    by_sub = defaultdict(dict)
    for g in Grade.objects.filter(submission__answer__attempt__user=user).select_related(
        "submission__answer__attempt"
    ):
        by_sub[g.submission_id][g.grader] = g
    cells: dict = defaultdict(lambda: {"scores": [], "self": 0, "mock": 0})
    for grades in by_sub.values():
        attempt = next(iter(grades.values())).submission.answer.attempt
        mock = MockSession.objects.filter(attempt=attempt).first()
        if attempt.is_preview or (mock and mock.ended_at is None):
            continue
        grader = next((p for p in PRIORITY if p in grades), None)
        if grader is None:
            continue
        sub = grades[grader].submission
        day = sub.submitted_at.date()
        cell = cells[(sub.answer.step_key, day - timedelta(days=day.weekday()))]
        cell["scores"].append(grades[grader].score)
        cell["self"] += grader == "self"
        cell["mock"] += mock is not None
    return {
        key: {"mean": round(sum(c["scores"]) / len(c["scores"]), 3), "count": len(c["scores"]),
              "self": c["self"], "mock": c["mock"]}
        for key, c in cells.items()
    }  # fmt: skip


def test_each_step_cell_holds_the_stored_primary_verdicts(history):
    data = selectors.progress(user=history, now=NOW)
    got = {
        (row.key, cell.week): {"mean": cell.mean, "count": cell.count,
                               "self": cell.self_checked, "mock": cell.mock}
        for row in data.steps
        for cell in row.cells
        if cell.count
    }  # fmt: skip
    assert got == expected_step_cells(history)
    # Spelled out for this history: the instructor over the model, the model over the
    # matcher, the self-check when nothing else graded, the ended mock interview marked.
    monday = (THIS_WEEK - timedelta(days=THIS_WEEK.weekday())).date()
    assert got[("clarify", monday)] == {"mean": 0.9, "count": 1, "self": 0, "mock": 0}
    assert got[("estimate", monday)] == {"mean": 0.25, "count": 1, "self": 1, "mock": 0}
    assert got[("architecture", monday)] == {"mean": 0.4, "count": 1, "self": 0, "mock": 1}
    last_monday = monday - timedelta(weeks=1)
    assert got[("architecture", last_monday)] == {"mean": 0.65, "count": 2, "self": 1, "mock": 0}


def test_the_page_draws_the_same_figures_and_marks_self_checks_and_mocks(
    history, client, monkeypatch
):
    monkeypatch.setattr(selectors, "clock", lambda: NOW)
    client.force_login(history)
    html = client.get("/drills/progress/").content.decode()
    chart = html.split('id="chart-steps"')[1].split("</svg>")[0]
    cells = re.findall(
        r'data-mean="([\d.]*)" data-count="(\d+)" data-self="(\d+)" data-mock="(\d+)"', chart
    )
    drawn = sorted((float(m), int(c), int(s), int(k)) for m, c, s, k in cells if int(c))
    weekly = [(c["mean"], c["count"], c["self"], c["mock"])
              for c in expected_step_cells(history).values()]  # fmt: skip
    # Each row's overall cell beside its weeks: architecture has 3 verdicts in all.
    overall = [(round((0.8 + 0.5 + 0.4) / 3, 3), 3, 1, 1), (0.9, 1, 0, 0), (0.25, 1, 1, 0)]
    assert drawn == sorted(weekly + overall)
    assert ">S</text>" in chart and ">M</text>" in chart


def test_each_cell_prints_its_mean_as_a_percentage(history, client, monkeypatch):
    """The cells printed a bare 0 or 90, with no unit."""
    monkeypatch.setattr(selectors, "clock", lambda: NOW)
    client.force_login(history)
    html = client.get("/drills/progress/").content.decode()
    chart = html.split('id="chart-steps"')[1].split("</svg>")[0]
    printed = re.findall(
        r'<text(?: class="pg-top-text")? x="[^"]*" y="[^"]*" text-anchor="middle">([^<]*)<', chart
    )
    assert "90%" in printed and "25%" in printed  # clarify and estimate this week
    assert all(p.endswith("%") for p in printed), printed


def test_drills_count_by_the_checkers_verdict_in_their_row_and_their_concept(history):
    data = selectors.progress(user=history, now=NOW)
    kv = next(r for r in data.drills if r.key == "kv_per_token")
    assert (kv.overall.count, kv.overall.mean, kv.overall.drills) == (3, round(2 / 3, 3), 3)
    concept = next(r for r in data.concepts if r.key == "kv-wall")
    assert concept.overall.drills == 3


def test_weakest_concepts_link_their_note_and_the_questions_that_use_them(history):
    data = selectors.progress(user=history, now=NOW)
    assert data.weakest
    for weak in data.weakest:
        assert weak.url == f"/concepts/{weak.slug}/"
        assert weak.mean < selectors.WEAK_BELOW
        assert all(url.startswith("/questions/") for _, url in weak.questions)


def test_a_weakest_concept_names_a_few_questions_and_counts_the_rest(bank_loaded, client):
    """With the whole bank, one weak concept listed every question that uses it, up to 17
    titles in one run-on paragraph."""
    from django.utils import timezone

    user = User.objects.create_user("weak", password="a-long-Passphrase-42")
    graded_submission(user=user, at=timezone.now() - timedelta(days=1), step="architecture",
                      grades={"llm": 0.1})  # fmt: skip
    weakest = selectors.progress(user=user).weakest
    many = next(w for w in weakest if len(w.questions) > selectors.QUESTIONS_SHOWN + 1)
    client.force_login(user)
    html = client.get("/drills/progress/").content.decode()
    listed = html.split('data-testid="weakest"')[1].split(f'<a href="{many.url}">', 1)[1]
    listed = listed.split("</ul>")[0]
    assert listed.count('href="/questions/') == selectors.QUESTIONS_SHOWN
    for title, url in many.questions[: selectors.QUESTIONS_SHOWN]:
        assert f'<a href="{url}">{title}</a>' in listed
    more = len(many.questions) - selectors.QUESTIONS_SHOWN
    assert f'and <a href="{many.url}">{more} more questions</a> on its note' in listed


def test_the_csv_export_has_every_counted_verdict_and_drill(history, client):
    client.force_login(history)
    response = client.get("/drills/progress.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    sources = sorted(r["source"] for r in rows)
    assert sources == ["drill"] * 3 + ["mock"] + ["question"] * 4
    labels = {r["verdict_by"] for r in rows if r["source"] != "drill"}
    assert labels == {"Model-graded", "Self-checked", "Instructor-reviewed"}


def test_the_csv_export_is_in_the_order_things_happened(history, client):
    """Every verdict came before every drill, whenever each was made."""
    user = history
    drill_set = DrillSet.objects.create(user=user, created_at=LAST_WEEK)
    DrillItem.objects.create(drill_set=drill_set, user=user, position=1, kind="weights", seed=9,
                             fingerprint="early", answer="1", verdict="wrong",
                             answered_at=LAST_WEEK - timedelta(days=1))  # fmt: skip
    client.force_login(user)
    response = client.get("/drills/progress.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    whens = [datetime.fromisoformat(r["when"]) for r in rows]
    assert whens == sorted(whens)
    assert rows[0]["source"] == "drill" and rows[-1]["source"] == "drill"


def test_a_missed_concept_becomes_a_card_and_is_due(content_loaded):
    user = User.objects.create_user("concept-candidate", password="a-long-Passphrase-42")
    revision = revision_of()
    step = revision.question_spec.step("architecture")
    point = next(p for p in step.rubric if p.concepts)
    points = [{"id": p.id, "verdict": "miss" if p.id == point.id else "hit"} for p in step.rubric]
    graded_submission(user=user, at=NOW, step="architecture", grades={"llm": 0.3},
                      points=points)  # fmt: skip
    assert services.concept_cards_sync(user=user) == 1
    assert services.concept_cards_sync(user=user) == 0  # each verdict reviews once
    due = selectors.cards_due(user=user, now=NOW + timedelta(minutes=5))
    assert {d.card.key for d in due} >= {f"concept:{slug}" for slug in point.concepts}


def test_the_grading_hook_reads_verdicts_into_concept_cards_once_each(content_loaded):
    from drills.hooks import DrillHooks
    from drills.models import Card

    user = User.objects.create_user("hooked", password="a-long-Passphrase-42")
    step = revision_of().question_spec.step("architecture")
    point = next(p for p in step.rubric if p.concepts)
    missed = [{"id": p.id, "verdict": "miss"} for p in step.rubric]
    submission = graded_submission(
        user=user, at=NOW, step="architecture", grades={"llm": 0.1}, points=missed
    )
    DrillHooks().submission_graded(submission)
    key = f"concept:{point.concepts[0]}"
    assert Card.objects.get(user=user, key=key).reviews == 1
    # A self-check under the model's grade is no new verdict; an instructor's review is,
    # and it re-rates the attempt's one review of the card in the model's place.
    Grade.objects.create(submission=submission, grader="self", score=1.0, points=[])
    assert services.concept_cards_sync(user=user) == 0
    Grade.objects.create(submission=submission, grader="instructor", score=1.0, points=[])
    assert services.concept_cards_sync(user=user) == 1
    card = Card.objects.get(user=user, key=key)
    assert (card.reviews, card.lapses) == (1, 0)


def test_an_answer_waiting_for_its_self_check_comes_first(content_loaded):
    """No model graded it and the candidate has not rated it: it has no score until they do,
    and the home page sent them to a question they had not tried instead."""
    user = User.objects.create_user("self-checker", password="a-long-Passphrase-42")
    rated = graded_submission(user=user, at=NOW, step="clarify", grades={"rubric": 0.4})
    Grade.objects.create(submission=rated, grader="self", score=0.5, points=[])
    waiting = graded_submission(
        user=user,
        at=NOW + timedelta(minutes=5),
        step="architecture",
        grades={"rubric": 0.4},
        attempt=rated.answer.attempt,
    )
    rec = selectors.recommendation(user=user, now=NOW)
    attempt = waiting.answer.attempt
    assert rec.url == f"/attempts/{attempt.pk}/steps/architecture/#self-check"
    assert rec.action == "Rate your answer"
    assert "your answer to Architecture" in rec.sentence
    assert f"“{attempt.revision.title}”" in rec.sentence
    # Rated, it is done: the recommendation moves on.
    Grade.objects.create(submission=waiting, grader="self", score=0.7, points=[])
    assert selectors.recommendation(user=user, now=NOW).action != "Rate your answer"
    # A model's grade scores it as well; so does nothing in a mock still running.
    graded_submission(user=user, at=NOW, step="bottlenecks", grades={"rubric": 0.2, "llm": 0.6},
                      attempt=attempt)  # fmt: skip
    running = Attempt.objects.create(user=user, revision=attempt.revision)
    MockSession.objects.create(attempt=running, mode="app", total_minutes=45, started_at=NOW)
    graded_submission(user=user, at=NOW, step="clarify", grades={"rubric": 0.2}, attempt=running)
    assert selectors.recommendation(user=user, now=NOW).action != "Rate your answer"


def test_a_completed_self_check_reads_into_the_concept_cards_at_once(
    content_loaded, django_capture_on_commit_callbacks
):
    # Only the grading worker synced the cards: a self-check's missed concepts were not due
    # until the next drill set started or another step was graded.
    from drills.models import Card
    from practice.models import Submission
    from practice.self_check import self_check_save

    user = User.objects.create_user("rater", password="a-long-Passphrase-42")
    step = revision_of().question_spec.step("architecture")
    point = next(p for p in step.rubric if p.concepts)
    submission = graded_submission(user=user, at=NOW, step="architecture", grades={"rubric": 0.2})
    Submission.objects.filter(pk=submission.pk).update(grade_status="done")
    submission.refresh_from_db()
    ratings = {p.id: "not" for p in step.rubric}
    with django_capture_on_commit_callbacks(execute=True):
        self_check_save(submission=submission, ratings=ratings, wrong_ideas={}, base_version=0)
    keys = set(Card.objects.filter(user=user).values_list("key", flat=True))
    assert {f"concept:{slug}" for slug in point.concepts} <= keys


def test_the_due_list_says_what_clears_a_concept(content_loaded, client, monkeypatch):
    # A concept stayed "due" however often its note was read: only a graded answer that
    # uses it reviews the card, and the list did not say so.
    from fsrs import Rating

    from drills.models import Card

    user = User.objects.create_user("reader", password="a-long-Passphrase-42")
    concept = revision_of().question_spec.step("architecture").concepts[0]
    services.card_review(user=user, key=f"concept:{concept}", source=Card.Source.CONCEPT,
                         rating=Rating.Again, now=NOW)  # fmt: skip
    monkeypatch.setattr(selectors, "clock", lambda: NOW + timedelta(minutes=5))
    client.force_login(user)
    page = " ".join(client.get("/").content.decode().split())
    assert "read the note" in page
    assert "A concept: a graded answer that uses it, in a later attempt at any question." in page
    assert "reading alone does not clear it" in page


def test_the_due_help_is_short_sentences(content_loaded, client, monkeypatch):
    """It was one sentence of 45 words, with a semicolon and a colon inside."""
    from fsrs import Rating

    from drills.models import Card

    user = User.objects.create_user("reader", password="a-long-Passphrase-42")
    services.card_review(user=user, key="drill:ttft", source=Card.Source.DRILL,
                         rating=Rating.Again, now=NOW)  # fmt: skip
    monkeypatch.setattr(selectors, "clock", lambda: NOW + timedelta(minutes=5))
    client.force_login(user)
    html = client.get("/drills/").content.decode()
    help_html = html.split('class="muted due-help"')[1].split("</div>")[0]
    text = " ".join(re.sub(r"<[^>]+>", " ", help_html).split())
    assert "A drill kind: a set of its drills answered right." in text
    sentences = [s for s in re.split(r"(?<=[.:;])\s", text) if s]
    assert max(len(s.split()) for s in sentences) <= 16, sentences


def test_a_step_with_its_own_check_counts_the_score_its_scorecard_shows(
    content_loaded, client, monkeypatch
):
    """Progress printed napkin math at the self-ratings alone (75%) while the scorecard blends
    in the number checker, and clarify likewise without the SLO card's check."""
    from practice.scoring import attempt_scored_submissions, best_per_part, step_scores

    user = User.objects.create_user("blended-candidate", password="a-long-Passphrase-42")
    attempt = Attempt.objects.create(user=user, revision=revision_of())
    graded_submission(
        user=user, at=THIS_WEEK, step="estimate", attempt=attempt,
        grades={"self": 0.75, "checker": 0.6},
    )  # fmt: skip
    graded_submission(
        user=user, at=THIS_WEEK, step="clarify", attempt=attempt,
        grades={"self": 0.75, "slo": 0.25},
    )  # fmt: skip
    scorecard = step_scores(best_per_part(attempt_scored_submissions(attempt.pk)))
    # Worked by hand: 60:40 checker to ratings, and half each for the SLO card.
    assert scorecard["estimate"] == 0.66 and scorecard["clarify"] == 0.5
    data = selectors.progress(user=user, now=NOW)
    for row in data.steps:
        if row.key in ("estimate", "clarify"):
            assert row.overall.mean == scorecard[row.key], row.key
            assert row.overall.self_checked == 1  # still a self-check, marked as such
    monkeypatch.setattr(selectors, "clock", lambda: NOW)
    client.force_login(user)
    chart = client.get("/drills/progress/").content.decode().split('id="chart-steps"')[1]
    means = set(re.findall(r'data-mean="([\d.]+)"', chart.split("</svg>")[0]))
    assert {"0.66", "0.5"} <= means and "0.75" not in means
    response = client.get("/drills/progress.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert {(r["step"], r["score"], r["verdict_by"]) for r in rows} == {
        ("estimate", "0.660", "Self-checked + Napkin-math checks"),
        ("clarify", "0.500", "Self-checked + SLO card check"),
    }
