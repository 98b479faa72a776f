"""/history/ pages: a bounded number of attempts a page, trends over a bounded window, and a
query count that does not grow with the number of attempts."""

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from practice.models import Attempt, Grade, StepAnswer, Submission
from questions.models import QuestionRevision

PAGE, WINDOW = 20, 30


@pytest.fixture
def candidate(client, content_loaded, settings):
    settings.HISTORY_PAGE_SIZE, settings.HISTORY_TREND_WINDOW = PAGE, WINDOW
    user = User.objects.create_user("cand", password="cand-Passphrase-1")
    client.force_login(user)
    return user


def _attempts(user, n: int) -> list[Attempt]:
    """n attempts, each with a graded architecture answer scoring its number / 100."""
    revision = QuestionRevision.objects.first()
    made = []
    for i in range(n):
        attempt = Attempt.objects.create(user=user, revision=revision)
        answer = StepAnswer.objects.create(attempt=attempt, step_key="architecture", text="x")
        submission = Submission.objects.create(
            answer=answer, number=1, text="x", draft_version=1, grade_status="done"
        )
        Grade.objects.create(
            submission=submission,
            grader="self",  # the candidate's self-check: the offline matcher never scores
            score=(i % 100) / 100,
            points=[{"id": "gateway", "verdict": "miss"}],
        )
        made.append(attempt)
    return made


def _queries(client, page: int = 1) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("history"), {"page": page}).status_code == 200
    return len(queries)


def test_a_page_holds_at_most_the_page_size_newest_first(client, candidate):
    made = _attempts(candidate, 45)
    first = client.get(reverse("history")).context
    assert len(first["rows"]) == PAGE
    assert first["rows"][0]["attempt"] == made[-1]
    last = client.get(reverse("history"), {"page": 3}).context
    assert [r["attempt"] for r in last["rows"]] == list(reversed(made[:5]))
    html = client.get(reverse("history"), {"page": 2}).content.decode()
    assert "Page 2 of 3" in html and 'href="?page=3"' in html and 'href="?page=1"' in html


def test_trends_and_missed_points_read_only_the_recent_window(client, candidate):
    _attempts(candidate, 45)
    context = client.get(reverse("history")).context
    (architecture,) = [t for t in context["trends"] if t["key"] == "architecture"]
    assert len(architecture["series"]) == WINDOW
    assert architecture["series"][-1] == 0.44  # the newest attempt last on the line
    assert context["missed"][0]["count"] == WINDOW


def test_the_query_count_does_not_grow_with_the_number_of_attempts(client, candidate):
    _attempts(candidate, 3)
    few = _queries(client)
    _attempts(candidate, 60)
    assert _queries(client) == few
    assert _queries(client, page=3) == few


def test_most_missed_counts_each_attempts_scored_answer_not_its_superseded_submissions(
    client, candidate
):
    """A point missed in a first submission and hit in the resubmission that scores the step
    is not "missed"; a point missed in both is missed once in that attempt, not twice."""
    revision = QuestionRevision.objects.first()
    attempt = Attempt.objects.create(user=candidate, revision=revision)
    answer = StepAnswer.objects.create(attempt=attempt, step_key="architecture", text="x")
    for number, score, gateway in ((1, 0.1, "miss"), (2, 0.9, "hit")):
        submission = Submission.objects.create(
            answer=answer, number=number, text="x", draft_version=number, grade_status="done"
        )
        Grade.objects.create(
            submission=submission,
            grader="self",
            score=score,
            points=[{"id": "gateway", "verdict": gateway}, {"id": "queue", "verdict": "miss"}],
        )
    missed = {m["id"]: m["count"] for m in client.get(reverse("history")).context["missed"]}
    assert missed == {"queue": 1}


def test_a_trends_latest_figure_from_an_earlier_attempt_is_called_the_latest_scored(
    client, candidate
):
    """The newest attempt's answer waits for its self-check: the trend's last figure is an
    earlier attempt's, and read "latest 2%" as if it were the newest's."""
    older = _attempts(candidate, 3)
    assert Grade.objects.filter(submission__answer__attempt=older[-1]).get().score == 0.02
    html = " ".join(client.get(reverse("history")).content.decode().split())
    assert "latest 2%" in html and "latest scored" not in html
    newest = Attempt.objects.create(user=candidate, revision=older[0].revision)
    answer = StepAnswer.objects.create(attempt=newest, step_key="architecture", text="x")
    submission = Submission.objects.create(
        answer=answer, number=1, text="x", draft_version=1, grade_status="done"
    )
    Grade.objects.create(submission=submission, grader="rubric", score=0.9, points=[])
    html = " ".join(client.get(reverse("history")).content.decode().split())
    assert "latest 2%" not in html
    assert "latest scored 2%, from an earlier attempt</p>" in html


def test_a_revisions_text_and_front_matter_are_read_once_not_once_a_row(client, candidate):
    """Each row names its question; the revision's stored text and parsed front matter (some
    170 KB each) are read in one query for the revisions the page shows, not with every row."""
    _attempts(candidate, 25)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("history")).status_code == 200
    sql = [q["sql"] for q in queries.captured_queries]
    assert not [q for q in sql if '"source_text"' in q]
    assert len([q for q in sql if '"interview_questionrevision"."spec"' in q]) == 1
