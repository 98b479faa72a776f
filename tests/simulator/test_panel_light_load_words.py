"""The panel's lead sentence says a light load as the verdict and the cost line do: a run at
0.001 QPS is "at 0.001 QPS", not "at 0.0 QPS"."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from practice import services as flow
from questions.models import Question
from simulator.templatetags.simulator_format import qps
from tests.simulator.bank import open_reference


@pytest.fixture
def candidate(content_loaded, client):
    user = User.objects.create_user("light", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    attempt = flow.attempt_start(user=user, revision=revision)
    open_reference(attempt)
    client.force_login(user)
    return client, attempt


@pytest.mark.parametrize(
    ("load", "text"),
    [(0.001, "0.001"), (0.0125, "0.0125"), (12.5, "12.5"), (50.0, "50"), (400, "400")],
)
def test_a_load_reads_with_its_significant_figures(load, text):
    assert qps(load) == text


def test_the_panel_says_a_light_load_it_ran(candidate):
    client, attempt = candidate
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    post = {"scenario": "baseline", "prediction": "It holds.", "qps": "0.001"}
    response = client.post(url, post)
    assert response.status_code == 200, response.content.decode()
    page = html.unescape(response.content.decode())
    lead = re.search(r"A discrete-event simulation of your fleet: ([^<]+)", page)[1]
    assert " at 0.001 QPS behind " in lead, lead
    assert "0.0 QPS" not in page
