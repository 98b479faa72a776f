"""A Submit of an SLO card holding a figure it cannot read ("abc", "2^1000", "1e9999") is
refused with a 422 naming the fields, and nothing is lost: the card is saved as typed (the
autosave is never refused for it), and no submission is made. A mock's end, which submits the
answers as they stand, still submits such a card; its review says "Not read"."""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

import re

import pytest

from practice import services as flow
from practice.models import StepAnswer, Submission
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    attempt,
    candidate,
    client_in,
    step_url,
)

CARD = {"base_version": 0, "text": "", "qps_kind": "peak", "e2e_p99_ms": "2 s"}


def refused_beside_submit(html: str) -> str:
    found = re.search(r'<div id="submit-refused"[^>]*>(.*?)</div>', html, re.S)
    return found[1] if found else ""


@pytest.mark.parametrize("typed", ["abc", "2^1000", "1e9999"])
def test_a_submit_with_a_figure_not_read_is_refused_and_the_card_saved(
    client_in, attempt, typed, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client_in.post(
            step_url(attempt, "clarify", "submit"),
            {**CARD, "ttft_p99_ms": typed, "peak_qps": "fifty"},
            htmx=True,
        )
    assert response.status_code == 422
    body = response.content.decode()
    told = refused_beside_submit(body)
    assert "cannot read Peak load, p99 TTFT" in told
    # The focus goes to the first field not read, in the card's order.
    assert 'data-focus="card-peak_qps"' in told
    # Nothing lost: the card is saved as typed, and the status says saved.
    fields = StepAnswer.objects.get(attempt=attempt, step_key="clarify").fields
    assert fields["ttft_p99_ms"] == typed and fields["peak_qps"] == "fifty"
    assert "Draft saved" in body and "<strong>Not saved.</strong>" not in body
    assert Submission.objects.count() == 0 and queued == []


def test_the_refusal_names_the_load_as_the_card_labels_it(client_in, attempt):
    response = client_in.post(
        step_url(attempt, "clarify", "submit"),
        {**CARD, "qps_kind": "mean", "peak_qps": "lots"},
        htmx=True,
    )
    assert response.status_code == 422
    assert "cannot read Mean load. Correct or clear it" in response.content.decode()


def test_the_autosave_of_a_figure_not_read_is_not_refused(client_in, attempt):
    response = client_in.post(
        step_url(attempt, "clarify", "draft"), {**CARD, "ttft_p99_ms": "abc"}, htmx=True
    )
    assert response.status_code == 200
    assert "Draft saved at" in response.content.decode()


def test_without_javascript_the_page_says_why_and_focuses_the_field(client_in, attempt):
    response = client_in.post(step_url(attempt, "clarify", "submit"), {**CARD, "tpot_p99_ms": "x"})
    assert response.status_code == 422
    page = response.content.decode()
    assert "cannot read p99 TPOT" in page
    field = re.search(r'<input[^>]*id="card-tpot_p99_ms"[^>]*>', page)[0]
    assert "autofocus" in field and 'value="x"' in field
    # The page holds the saved draft's version: the next post is not refused as stale.
    answer = StepAnswer.objects.get(attempt=attempt, step_key="clarify")
    assert f'name="base_version" id="base-version" value="{answer.version}"' in page
    response = client_in.post(
        step_url(attempt, "clarify", "submit"),
        {**CARD, "base_version": answer.version, "tpot_p99_ms": "40 ms"},
    )
    assert response.status_code == 302
    assert Submission.objects.get().fields["tpot_p99_ms"] == "40 ms"


def test_a_card_whose_figures_read_is_submitted(client_in, attempt):
    response = client_in.post(
        step_url(attempt, "clarify", "submit"), {**CARD, "ttft_p99_ms": "300 ms"}, htmx=True
    )
    assert response.status_code == 200
    assert Submission.objects.count() == 1


def test_a_mocks_end_submits_the_card_as_it_stands(client_in, attempt):
    answer = StepAnswer.objects.create(
        attempt=attempt, step_key="clarify", text="", version=1, fields={"ttft_p99_ms": "abc"}
    )
    outcome = flow.step_submit(
        answer=answer, text="", fields=answer.fields, base_version=1,
        enforce_limits=False, as_it_stands=True,
    )  # fmt: skip
    assert outcome.created
