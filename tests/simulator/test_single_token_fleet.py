"""A fleet whose every answer is one token (the planner's embedding-rerank-service inputs:
a mean output of 1) decodes nothing: the planner's "Simulate this fleet" page says so in the
panel's words, "nothing is decoded, so there is no TPOT", rather than "p99 TPOT 0 ms"."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from planner.forms import DEFAULTS, CapacityForm, plan_query

# The plan /planner/capacity/?question=embedding-rerank-service links to.
QUESTION = "embedding-rerank-service"


@pytest.fixture
def simulate_url(client, bank_loaded) -> str:
    page = client.get(reverse("planner:capacity"), {"question": QUESTION}).content.decode()
    href = re.search(r'id="plan-simulate" href="([^"]+)"', page)[1]
    return html.unescape(href)


def test_the_planners_single_token_fleet_is_simulated_without_a_tpot(client, simulate_url):
    assert "out_len=1&" in simulate_url
    response = client.get(simulate_url)
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert "nothing is decoded, so there is no TPOT" in page
    verdict = re.search(r'<p class="sim-verdict"><strong>([^<]+)<', page)[1]
    assert verdict.startswith("Holds the SLO at 20 QPS"), verdict
    assert "TPOT" not in verdict and "nothing decoded" in verdict, verdict
    # Neither the table nor a chart gives a TPOT: there is none to give.
    assert "p99 TPOT" not in page, re.findall(r".{60}p99 TPOT.{20}", page)
    assert "p50 / p99 latency (ms)" in page and "p99 latency over time" in page


def test_a_fleet_that_decodes_keeps_its_tpot(client, content_loaded):
    query = plan_query(CapacityForm(initial=DEFAULTS))
    page = html.unescape(client.get(f"{reverse('simulator:page')}?{query}").content.decode())
    assert "nothing is decoded" not in page
    assert "p99 TPOT over time" in page and re.search(r"p99 TPOT \d+ ms", page)
