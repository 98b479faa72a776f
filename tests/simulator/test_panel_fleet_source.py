"""Where the load-test panel's fleet comes from, and what it says about it: the candidate's own
napkin-math fleet whichever name the question gives it, the replicas they typed for a run, and
the reference design only when the number is the reference design's."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import services as flow
from questions.models import Question
from tests.simulator.bank import open_reference, panel, replicas_box, submit

PREDICTION = "Four replicas hold the rate but prefill stalls push p99 TPOT over 12 ms."


def check(attempt, quantity_id: str, value: float) -> None:
    estimate = flow.answer_open(attempt=attempt, step_key="estimate")
    flow.quantity_check_store(
        answer=estimate,
        quantity_id=quantity_id,
        check={"answer": str(value), "verdict": "correct", "value": value},
    )


@pytest.mark.parametrize(
    ("slug", "replicas"),
    # structured-extraction-api asks for the fleet as n_gpu at TP 1 (one GPU a replica): the
    # panel ignored it and offered the reference design's 7 replicas as "your fleet".
    # moe-mixtral-serving's design runs TP 2: its n_gpu of 4 is 2 replicas.
    [("structured-extraction-api", 4), ("moe-mixtral-serving", 2)],
)
def test_a_checked_gpu_count_is_the_candidates_fleet_in_replicas_of_tp(start, slug, replicas):
    client, begin = start
    attempt = begin(slug)
    check(attempt, "n_gpu", 4.0)
    page = panel(client, attempt)
    assert replicas_box(page) == str(replicas)
    assert f"{replicas} replicas (your estimate)" in page


def test_without_an_estimate_the_reference_fleet_is_named_in_plain_words(start):
    # With the napkin-math step submitted but no quantity checked, the reference is offered.
    client, begin = start
    attempt = begin("structured-extraction-api")
    submit(attempt, "estimate")
    page = panel(client, attempt)
    assert replicas_box(page) == "7"
    assert "the seed design of structured-extraction-api" not in page
    assert "7 replicas (the reference design, as the capacity planner sizes it)" in page


def test_a_run_on_typed_replicas_is_not_credited_to_the_reference_design(start):
    # A run on 4 typed replicas said "4 replicas (the seed design of ...)": the seed is 7.
    client, begin = start
    attempt = begin("structured-extraction-api")
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    post = {"scenario": "baseline", "prediction": PREDICTION, "replicas": "4", "qps": "24"}
    page = client.post(url, post).content.decode()
    assert "4 replicas (your last run) at 24 QPS" in page
    assert "reference design" not in page


def test_the_panel_opened_again_keeps_the_fleet_of_the_last_run(start):
    # Back on the step after a run on 4 replicas, the boxes showed 7 again beside the 4-replica
    # result, and the next scenario ran on 7 without the candidate asking.
    client, begin = start
    attempt = begin("structured-extraction-api")
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    post = {"scenario": "baseline", "prediction": PREDICTION, "replicas": "4", "qps": "20"}
    assert client.post(url, post).status_code == 200
    page = panel(client, attempt)
    assert replicas_box(page) == "4"
    assert re.search(r'id="sim-qps"[^>]*value="20"', page)
    assert "4 replicas (your last run) at 20 QPS" in page


def running_mock(client, slug: str):
    """A mock interview with the app as interviewer, running, its candidate signed in."""
    from mocks import services as mock

    user = User.objects.create_user("mocked", password="a-long-Passphrase-42")
    client.force_login(user)
    revision = Question.objects.get(slug=slug).current_revision
    return mock.mock_session_start(user=user, revision=revision, mode="app")


def test_a_running_mock_interview_does_not_hand_over_the_reference_fleet(bank_loaded, client):
    # In a mock the napkin checker is withheld so that nothing of the grading leaks, yet the
    # panel offered "7 replicas (the reference design)": the fleet the rubric asks for.
    from mocks import services as mock

    session = running_mock(client, "structured-extraction-api")
    attempt = session.attempt
    page = panel(client, attempt)
    assert replicas_box(page) == ""
    assert "reference design" not in page and "your design's replicas" in page
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    post = {"scenario": "baseline", "prediction": PREDICTION, "qps": "24"}
    refused = client.post(url, post)
    assert refused.status_code == 422
    assert "Type the number of replicas in your design" in refused.content.decode()
    ran = client.post(url, post | {"replicas": "4"})
    assert ran.status_code == 200 and "4 replicas (your last run)" in ran.content.decode()
    # Once the session ends, the panel keeps the fleet of the candidate's last run.
    mock.session_end(session=session, reason="ended early")
    assert "4 replicas (your last run)" in panel(client, attempt)


def test_steps_submitted_during_a_running_mock_open_the_reference_only_once_it_ends(
    bank_loaded, client
):
    from mocks import services as mock

    session = running_mock(client, "chat-api-50qps")
    attempt = session.attempt
    open_reference(attempt)
    page = panel(client, attempt)
    assert replicas_box(page) == "" and "10 replicas" not in page
    assert "prefix-aware (default)" not in page
    mock.session_end(session=session, reason="ended early")
    page = panel(client, attempt)
    assert replicas_box(page) == "10" and "prefix-aware (default)" in page


def test_the_panel_reads_what_it_may_show_once_a_request(start, django_assert_max_num_queries):
    client, begin = start
    attempt = begin("chat-api-50qps")
    open_reference(attempt)
    # The session, the user, the attempt, whether a mock runs, the two steps submitted, the
    # estimate's checks, the last run: not a query per figure the panel decides to show.
    with django_assert_max_num_queries(7):
        page = panel(client, attempt)
    assert replicas_box(page) == "10"


def test_a_run_in_a_running_mock_does_not_spell_out_the_replicas_rate(content_loaded, client):
    # The run's note ("Batch 54: ... reaches the measured knee of 2000 tok/s (7.84 req/s);
    # decode step 9.72 ms") gave a mock's candidate r_inst, a quantity the napkin step grades
    # and the mock withholds.
    from mocks import services as mock

    session = running_mock(client, "chat-api-50qps")
    attempt = session.attempt
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    post = {"scenario": "baseline", "prediction": PREDICTION, "replicas": "10", "qps": "50"}
    ran = client.post(url, post).content.decode()
    assert "Holds the SLO at 50 QPS on 10 replicas" in ran
    assert "req/s" not in ran and "sim-note" not in ran
    mock.session_end(session=session, reason="ended early")
    # Practice after the end shows it once the napkin-math step is submitted, as anywhere.
    assert "(7.84 req/s)" not in panel(client, attempt)
    submit(attempt, "estimate")
    assert "(7.84 req/s)" in panel(client, attempt)


def test_the_load_box_takes_the_least_load_a_run_allows(start):
    # The box said min="0.1", so a browser refused 0.05 QPS that the run accepts (0.001).
    client, begin = start
    page = panel(client, begin("chat-api-50qps"))
    assert re.search(r'id="sim-qps" name="qps" min="0.001" max="400"', page)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (10000.0, "Your estimate comes to 10,000 replicas; this panel simulates 1 to 64."),
        (0.0, "Your estimate comes to 0 replicas, which serve nothing."),
    ],
)
def test_an_estimate_the_panel_cannot_run_is_said_not_swapped_for_the_reference(
    start, value, words
):
    # A checked fleet of 10,000 (or 0) was dropped without a word: "your fleet: 10 replicas
    # (the reference design, ...)", the figure the candidate's estimate got wrong.
    client, begin = start
    attempt = begin("chat-api-50qps")
    check(attempt, "n_inst", value)
    page = panel(client, attempt)
    assert replicas_box(page) == ""
    assert "reference design" not in page and "your design's replicas" in page
    assert words in page
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    refused = client.post(url, {"scenario": "baseline", "prediction": PREDICTION})
    assert refused.status_code == 422
    assert words in refused.content.decode()
    ran = client.post(url, {"scenario": "baseline", "prediction": PREDICTION, "replicas": "12"})
    assert ran.status_code == 200 and "12 replicas (your last run)" in ran.content.decode()
