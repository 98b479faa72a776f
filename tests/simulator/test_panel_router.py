"""The load-test panel's router choice: the candidate runs their design behind any router the
engine runs (simulator.engine.ROUTERS), the default stays the design's (round-robin in a running
mock, which never names the answer's), the result says which router ran and who chose it, and
a router the engine does not run is refused without losing what was typed."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from questions.models import Question
from simulator.engine import ROUTERS
from simulator.models import SimulationRun
from simulator.services import RunRefused, RunSpec, fleet_run
from tests.simulator.bank import open_reference, panel
from tests.simulator.test_reference_fleets import design

SPEC = "spec-decoding-assistant"  # its reference answer runs 8 replicas behind least-loaded
PREDICTION = "Prefix-aware keeps p99 TTFT under 1 s at 3 QPS on 8 replicas."


def run(client, attempt, status: int = 200, **post) -> str:
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    base = {"scenario": "baseline", "prediction": PREDICTION, "replicas": "8", "qps": "3"}
    response = client.post(url, base | post)
    assert response.status_code == status
    return html.unescape(response.content.decode())


def router_options(page: str) -> list[tuple[str, str, bool]]:
    """(value, label, selected) of each option of the panel's router menu."""
    menu = re.search(r'<select id="sim-router" name="router"[^>]*>(.*?)</select>', page, re.S)
    assert menu, "the panel has no router menu"
    return [
        (value, label.strip(), " selected" in attrs)
        for value, attrs, label in re.findall(
            r'<option value="([^"]*)"([^>]*)>([^<]*)</option>', menu.group(1)
        )
    ]


def help_text(page: str) -> str:
    return re.search(r'<p class="help" id="sim-router-help">([^<]*)</p>', page).group(1)


def router_row(page: str) -> str:
    return re.search(r'<dd class="sim-router">([^<]*)</dd>', page).group(1)


def running_mock_attempt(client):
    from mocks import services as mock

    user = User.objects.create_user("mocked", password="a-long-Passphrase-42")
    client.force_login(user)
    revision = Question.objects.get(slug=SPEC).current_revision
    return mock.mock_session_start(user=user, revision=revision, mode="app").attempt


def test_the_panel_offers_every_router_the_engine_runs_the_answers_preselected(start):
    client, begin = start
    attempt = begin(SPEC)
    open_reference(attempt)  # the answer's router is named once the architecture is in
    page = panel(client, attempt)
    options = router_options(page)
    assert [value for value, _, _ in options] == list(ROUTERS)
    assert [value for value, _, selected in options if selected] == ["least-loaded"]
    labels = dict((value, label) for value, label, _ in options)
    assert (labels["least-loaded"], labels["prefix-aware"]) == (
        "least-loaded (default)",
        "prefix-aware",
    )
    assert "The default is the reference answer's router." in help_text(page)


def test_a_chosen_router_runs_and_the_result_says_the_candidate_chose_it(start):
    client, begin = start
    attempt = begin(SPEC)
    ran = run(client, attempt, router="prefix-aware")
    saved = SimulationRun.objects.get(answer__attempt=attempt)
    assert saved.runs[0]["params"]["router"] == "prefix-aware"
    assert (saved.design["router"], saved.design["router_from"]) == ("prefix-aware", "you")
    assert router_row(ran) == "prefix-aware, your choice"
    assert "behind a prefix-aware router (your choice)" in ran
    # Back on the step, the menu keeps the router of the last run, as the boxes keep its fleet.
    options = router_options(panel(client, attempt))
    assert [value for value, _, selected in options if selected] == ["prefix-aware"]


def test_the_scorecards_load_tests_say_which_router_each_ran_and_who_chose_it(start):
    client, begin = start
    attempt = begin(SPEC)
    open_reference(attempt)
    run(client, attempt, router="prefix-aware")
    run(client, attempt)  # left at the reference answer's least-loaded
    client.post(reverse("attempt_finish", args=[attempt.pk]))
    card = client.get(reverse("attempt_scorecard", args=[attempt.pk])).content.decode()
    table = html.unescape(card.split('id="sim-scorecard"')[1].split("</section>")[0])
    said = re.findall(r'<p class="muted sim-router">([^<]*)</p>', table)
    assert sorted(said) == [
        "Router: least-loaded, the reference answer's default",
        "Router: prefix-aware, your choice",
    ]


def test_left_at_its_default_the_result_says_the_reference_answer_chose_the_router(start):
    client, begin = start
    attempt = begin(SPEC)
    open_reference(attempt)
    ran = run(client, attempt)  # no router sent: the form of a page opened before the menu
    assert router_row(ran) == "least-loaded, the reference answer's default"
    saved = SimulationRun.objects.get(answer__attempt=attempt)
    assert saved.runs[0]["params"]["router"] == "least-loaded"
    assert saved.design["router_from"] == "the reference answer"


def test_a_question_whose_answer_names_no_router_defaults_to_the_simulators_round_robin(start):
    client, begin = start
    attempt = begin("first-model-one-gpu")
    page = panel(client, attempt)
    assert ("round-robin", "round-robin (default)", True) in router_options(page)
    assert "The default is the simulator's own." in help_text(page)
    ran = run(client, attempt, replicas="1", qps="1", router="round-robin")
    assert router_row(ran) == "round-robin, the simulator's default"


@pytest.mark.parametrize(
    "value",
    ["random", "round robin", "<script>alert(1)</script>", "x" * 5000],
    ids=["unknown", "misspelt", "markup", "long"],
)
def test_a_router_the_engine_does_not_run_is_refused_keeping_what_was_typed(start, value):
    client, begin = start
    attempt = begin(SPEC)
    url = reverse("simulator:run", kwargs={"attempt_id": attempt.pk})
    post = {"scenario": "baseline", "prediction": PREDICTION, "replicas": "5", "qps": "2.5"}
    response = client.post(url, post | {"router": value})
    assert response.status_code == 422
    assert "<script>" not in response.content.decode()  # what was sent is printed escaped
    page = html.unescape(response.content.decode())
    error = re.search(r'id="sim-error">([^<]*)<', page).group(1)
    assert error.startswith("The router must be round-robin, least-loaded or prefix-aware, not "), (
        error
    )
    assert len(error) < 120  # a long value is cut, not printed whole
    assert re.search(r'id="sim-replicas"[^>]*value="5"', page)
    assert re.search(r'id="sim-qps"[^>]*value="2.5"', page)
    assert PREDICTION in page
    assert re.search(r'<select id="sim-router"[^>]*aria-invalid="true"', page)
    assert not SimulationRun.objects.filter(answer__attempt=attempt).exists()


def test_the_routing_scenario_runs_its_own_two_routers_and_says_so(start):
    client, begin = start
    attempt = begin("first-model-one-gpu")
    ran = run(client, attempt, scenario="routing", replicas="1", qps="1", router="least-loaded")
    saved = SimulationRun.objects.get(answer__attempt=attempt)
    assert [r["params"]["router"] for r in saved.runs] == ["round-robin", "prefix-aware"]
    assert router_row(ran) == "each run's own: this scenario compares two"


def test_a_running_mock_defaults_to_round_robin_and_never_marks_the_answers_router(
    bank_loaded, client
):
    attempt = running_mock_attempt(client)
    page = panel(client, attempt)
    options = router_options(page)
    assert ("round-robin", "round-robin (default)", True) in options
    assert ("least-loaded", "least-loaded", False) in options
    assert "The default is the simulator's own." in help_text(page)
    assert "reference answer" not in page
    ran = run(client, attempt)
    assert router_row(ran) == "round-robin, the simulator's default"
    assert "reference answer" not in ran
    # The candidate's own least-loaded is theirs, not the answer's.
    ran = run(client, attempt, router="least-loaded")
    assert router_row(ran) == "least-loaded, your choice"
    assert "reference answer" not in ran


def test_the_panel_and_the_command_name_and_check_routers_in_one_place():
    from simulator.services import router_named

    assert [router_named(name) for name in ROUTERS] == list(ROUTERS)
    with pytest.raises(RunRefused) as refused:
        router_named("random")
    assert refused.value.field == "router"
    # fleet_run, which the command calls, refuses it in the same words.
    with pytest.raises(RunRefused) as ran:
        fleet_run(design(SPEC), RunSpec(seconds=10, router="random"))
    assert (str(ran.value), ran.value.field) == (str(refused.value), "router")
