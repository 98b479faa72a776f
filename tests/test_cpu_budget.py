"""The calculator's limits bound CPU time per client, not only request counts.

Each evaluation is charged the CPU time it used against CPU_SECONDS_PER_MINUTE per client, in
the shared cache, across the planner and the practice worksheet. The budget is set to a
microsecond here, so the first evaluation spends it whatever this machine's speed, and what
is asserted is the behaviour after it: a 429 with a sentence, and no evaluation.
"""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from practice.models import Attempt
from rate_limits import LimitExceeded, cpu_budget

TINY = 1e-6  # seconds: one evaluation spends it
SPENT = "a few very large calculations, simulations or diagrams"


@pytest.fixture
def tiny_budget(settings, one_rate_window):
    """A budget the first evaluation spends, in one clock minute: a test that crossed into
    the next minute would find its budget whole again and its refusal evaluated."""
    settings.CPU_SECONDS_PER_MINUTE = TINY


def test_the_budget_refuses_once_spent_and_charges_per_client(tiny_budget):
    with cpu_budget(client="addr:10.0.0.1"):
        sum(range(1000))
    with pytest.raises(LimitExceeded), cpu_budget(client="addr:10.0.0.1"):
        pytest.fail("ran after the budget was spent")
    with cpu_budget(client="addr:10.0.0.2"):  # another client has its own budget
        pass


def test_a_generous_budget_lets_many_evaluations_through(settings):
    settings.CPU_SECONDS_PER_MINUTE = 60
    for _ in range(50):
        with cpu_budget(client="user:1"):
            sum(range(1000))


def test_the_public_worksheet_is_refused_once_the_address_spent_its_budget(client, tiny_budget):
    form = {"lines": "W = 7.6e9 * 2 B\nbw = 1008 GB/s\nW / bw in ms"}
    assert client.post("/planner/evaluate/", form).status_code == 200
    refused = client.post("/planner/evaluate/", form)
    assert refused.status_code == 429
    html = refused.content.decode()
    assert SPENT in html and "<math" not in html  # told why, and nothing evaluated
    other = Client(REMOTE_ADDR="10.0.0.9")  # another address is not refused
    assert other.post("/planner/evaluate/", form).status_code == 200


def test_the_capacity_planner_shares_the_budget(client, tiny_budget):
    assert client.post("/planner/evaluate/", {"lines": "2 * 3"}).status_code == 200
    refused = client.get("/planner/capacity/")
    assert refused.status_code == 429
    assert SPENT in refused.content.decode()


def test_the_practice_worksheet_and_checks_share_the_users_budget(
    client, content_loaded, tiny_budget
):
    user = User.objects.create_user("cand", password="cand-Passphrase-1")
    client.force_login(user)
    client.post(reverse("attempt_start", args=["chat-api-50qps"]))
    attempt = Attempt.objects.get()
    worksheet = f"/attempts/{attempt.pk}/worksheet/"
    assert client.post(worksheet, {"worksheet": "x = 2 GB\nx * 3"}).status_code == 200
    refused = client.post(worksheet, {"worksheet": "x = 2 GB\nx * 3"})
    assert refused.status_code == 429 and SPENT in refused.content.decode()
    check = client.post(
        f"/attempts/{attempt.pk}/check/",
        {"quantity": "weights", "expression": "15 GB"},
        headers={"HX-Request": "true"},
    )
    assert check.status_code == 429 and SPENT in check.content.decode()
    # Without JavaScript the same refusal comes back as a message on the step page.
    plain = client.post(
        f"/attempts/{attempt.pk}/check/", {"quantity": "weights", "expression": "15 GB"}
    )
    assert plain.status_code == 302
    page = client.get(plain["Location"])
    assert SPENT in page.content.decode()
    # Signed-in users are charged per user: the planner from this address is still free to a
    # stranger.
    assert Client().post("/planner/evaluate/", {"lines": "2 * 3"}).status_code == 200
