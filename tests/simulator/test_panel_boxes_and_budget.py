"""The load-test panel's boxes and what its runs cost: a box left blank or typed in another
script's digits is told, never run as a figure the candidate cannot see; a run is charged the
CPU time it takes, and the panel says so before the run."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import services as flow
from questions.models import Question
from simulator.models import SimulationRun
from tests.simulator.bank import open_reference

PREDICTION = "Nine replicas at 72% still hold p99 TTFT under 300 ms."


@pytest.fixture
def candidate(content_loaded, client):
    user = User.objects.create_user("boxes", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    open_reference(attempt)  # the panel offers the reference fleet once its steps are in
    client.force_login(user)
    return client, attempt


def run(client, attempt, **boxes):
    post = {"scenario": "baseline", "prediction": PREDICTION, **boxes}
    return client.post(reverse("simulator:run", kwargs={"attempt_id": attempt.pk}), post)


def error_of(response) -> str:
    return html.unescape(re.search(r'id="sim-error">([^<]+)<', response.content.decode())[1])


@pytest.mark.parametrize(
    ("box", "words"),
    [
        ("replicas", "Type the number of replicas: a whole number from 1 to 64."),
        ("qps", "Type the load in QPS: a number from 0.001 to 400."),
    ],
)
def test_a_box_left_blank_is_told_not_run_as_the_default(candidate, box, words):
    client, attempt = candidate
    response = run(client, attempt, **{"replicas": "10", "qps": "50", box: ""})
    assert response.status_code == 422
    assert error_of(response) == words
    # The emptied box stays empty, beside the message, rather than showing the default again.
    assert re.search(rf'id="sim-{box}" name="{box}"[^>]* value=""', response.content.decode())
    assert not SimulationRun.objects.exists()


def test_both_boxes_are_required_in_the_browser_too(candidate):
    client, attempt = candidate
    page = client.get(reverse("simulator:panel", kwargs={"attempt_id": attempt.pk}))
    for box in ("replicas", "qps"):
        tag = re.search(rf'<input [^>]*id="sim-{box}"[^>]*>', page.content.decode())[0]
        assert " required" in tag


@pytest.mark.parametrize(
    ("box", "typed", "words"),
    [
        ("replicas", "２", "The number of replicas must be a whole number from 1 to 64: use"),
        ("qps", "５０", "The load (QPS) must be a number from 0.001 to 400: use the digits"),
        ("qps", "٥٠", "The load (QPS) must be a number from 0.001 to 400: use the digits"),
    ],
)
def test_digits_of_another_script_are_refused_as_the_worksheet_refuses_them(
    candidate, box, typed, words
):
    client, attempt = candidate
    response = run(client, attempt, **{box: typed})
    assert response.status_code == 422
    assert error_of(response).startswith(words)
    assert "use the digits 0–9" in error_of(response)
    assert not SimulationRun.objects.exists()


def test_the_panel_says_what_a_run_costs_before_it_runs(candidate, settings):
    settings.CPU_SECONDS_PER_MINUTE = 5
    client, attempt = candidate
    page = client.get(reverse("simulator:panel", kwargs={"attempt_id": attempt.pk}))
    said = html.unescape(re.search(r'id="sim-cost">([^<]+)<', page.content.decode())[1])
    assert "charged the server time it takes, from your share of 5 s a minute" in said
    assert "from 250 QPS a run simulates the most, 60,000 requests" in said
    # After a run, what it took: the figure for the next run at that size.
    response = run(client, attempt, replicas="10", qps="50")
    said = html.unescape(re.search(r'id="sim-cost">([^<]+)<', response.content.decode())[1])
    cpu_s = SimulationRun.objects.get().design["cpu_s"]
    assert cpu_s > 0
    took = re.search(r"Your last run, 10 replicas at 50 QPS, took ([\d.]+) s\.", said)
    assert float(took[1]) == cpu_s
