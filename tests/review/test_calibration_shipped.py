"""The calibration page offers the labelled set that ships with a question, so a new install
does not start with an empty page: one click loads it and the offline grader is measured."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from accounts.instructors import instructor_grant
from grading.calibration import read_labels
from questions.models import Question
from review.calibration_sets import shipped_labels
from review.models import CalibrationLabel, CalibrationRun

SLUG = "chat-api-50qps"


@pytest.fixture
def instructor_client(client, content_loaded):
    user = User.objects.create_user("teacher")
    instructor_grant(user)
    client.force_login(user)
    return client


def test_a_new_install_is_offered_the_shipped_set_and_loading_it_measures_the_graders(
    instructor_client, settings
):
    url = reverse("review:calibration_step", args=[SLUG, "architecture"])
    shipped = read_labels(
        (settings.CONTENT_DIR / "calibration" / f"{SLUG}.jsonl").read_text(encoding="utf-8")
    )[0]
    in_step = sum(e.step == "architecture" for e in shipped)
    assert in_step >= 12

    page = instructor_client.get(url).content.decode()
    assert "Load the shipped labelled set" in page
    assert f"{in_step} answers for this step are not in the calibration set" in page
    assert not CalibrationRun.objects.exists()

    response = instructor_client.post(
        reverse("review:calibration_load", args=[SLUG]), {"step": "architecture"}, follow=True
    )
    page = response.content.decode()
    assert f"{len(shipped)} new answers and 0 updated, across its" in page
    question = Question.objects.get(slug=SLUG)
    assert CalibrationLabel.objects.filter(question=question).count() == len(shipped)
    run = CalibrationRun.objects.get(question=question, step_key="architecture", grader="rubric")
    assert run.n == in_step
    assert "Load the shipped labelled set" not in page  # nothing left to load
    # Loading again changes nothing but the count of updated labels.
    again = instructor_client.post(reverse("review:calibration_load", args=[SLUG]), follow=True)
    assert f"0 new answers and {len(shipped)} updated, across its" in again.content.decode()
    assert CalibrationLabel.objects.filter(question=question).count() == len(shipped)


def test_the_load_is_for_instructors_only(client, content_loaded):
    client.force_login(User.objects.create_user("candidate"))
    response = client.post(reverse("review:calibration_load", args=[SLUG]))
    assert response.status_code == 404
    assert not CalibrationLabel.objects.exists()


def test_a_shipped_set_that_no_longer_fits_the_rubric_is_refused_with_its_reason(
    content_loaded, settings, tmp_path
):
    (tmp_path / "calibration").mkdir()
    (tmp_path / "calibration" / f"{SLUG}.jsonl").write_text(
        '{"question": "chat-api-50qps", "step": "architecture", "answer": "x", '
        '"labels": {"no-such-point": "hit"}}\n'
    )
    settings.CONTENT_DIR = tmp_path
    from review.calibration_sets import CalibrationError

    with pytest.raises(CalibrationError, match="no-such-point"):
        shipped_labels(question=Question.objects.get(slug=SLUG))


def test_the_shipped_sets_file_is_named_outside_brackets(instructor_client):
    """A code path inside brackets, "(`content/...jsonl`)", read as if spaced out: the
    code's padded background sits between each bracket and the path."""
    url = reverse("review:calibration_step", args=[SLUG, "architecture"])
    page = instructor_client.get(url).content.decode()
    path = f"<code>content/calibration/{SLUG}.jsonl</code>"
    assert f"a labelled set, in {path}." in page
    assert f"({path})" not in page


def test_the_step_tabs_say_why_napkin_math_has_none(instructor_client):
    """The tabs skip the second step of five without a word."""
    url = reverse("review:calibration_step", args=[SLUG, "architecture"])
    page = " ".join(instructor_client.get(url).content.decode().split())
    assert 'href="/review/chat-api-50qps/calibration/estimate/"' not in page
    assert "No tab for Napkin math: most of its score (60%) is the calculator's check" in page
