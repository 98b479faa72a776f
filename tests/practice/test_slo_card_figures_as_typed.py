"""The SLO card says a figure it cannot read at the field, while the candidate works: the
autosave's answer carries the server's own sentence beside each such field, the same words
the submitted card lists under "Not read"; the text stays as typed and is saved."""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

import re

import pytest
from django.utils.html import escape

from practice.models import StepAnswer
from practice.slo import parse_number
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    attempt,
    candidate,
    client_in,
    step_url,
)


def message_at(html: str, name: str) -> str | None:
    """The text of a card field's message element, None when hidden or absent."""
    found = re.search(
        rf'<p class="field-errors card-figure-error" id="card-{name}-error"([^>]*)>([^<]*)</p>',
        html,
    )
    if found is None or " hidden" in found[1]:
        return None
    return found[2]


def why(text: str, unit: str) -> str:
    with pytest.raises(ValueError) as refused:
        parse_number(text, unit)
    return str(refused.value)


@pytest.mark.parametrize(
    ("name", "unit", "typed"),
    [
        ("ttft_p99_ms", "ms", "fast"),
        ("ttft_p99_ms", "ms", "1e400"),
        ("tpot_p99_ms", "ms", "-5 ms"),
        ("peak_qps", "QPS", "٥٠"),
        ("context_length", "tok", "８ｋ"),
    ],
)
def test_the_autosave_says_why_a_figure_is_not_read_at_its_field(
    client_in, attempt, name, unit, typed
):
    response = client_in.post(
        step_url(attempt, "clarify", "draft"),
        {"base_version": 0, "text": "", "qps_kind": "peak", name: typed, "e2e_p99_ms": "2 s"},
        htmx=True,
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "Draft saved at" in body
    assert message_at(body, name) == escape(why(typed, unit))
    assert 'hx-swap-oob="true"' in body.split(f'id="card-{name}-error"')[1].split(">")[0]
    assert message_at(body, "e2e_p99_ms") is None  # read: its message goes (swapped in hidden)
    # Saved as typed.
    assert StepAnswer.objects.get(step_key="clarify").fields[name] == typed
    # The page drawn from the draft marks the field and points it at the message.
    page = client_in.get(step_url(attempt, "clarify")).content.decode()
    assert message_at(page, name) == escape(why(typed, unit))
    field = re.search(rf'<input [^>]*id="card-{name}"[^>]*>', page)[0]
    assert 'aria-invalid="true"' in field
    assert f'aria-describedby="card-{name}-error"' in field
    other = re.search(r'<input [^>]*id="card-e2e_p99_ms"[^>]*>', page)[0]
    assert "aria-invalid" not in other


def test_a_refused_autosave_still_says_it(client_in, attempt):
    """Another tab's newer draft refuses this tab's save; what it says of the figure typed here
    holds all the same."""
    url = step_url(attempt, "clarify", "draft")
    client_in.post(url, {"base_version": 0, "text": "one", "qps_kind": "peak"}, htmx=True)
    client_in.post(url, {"base_version": 1, "text": "two", "qps_kind": "peak"}, htmx=True)
    response = client_in.post(
        url, {"base_version": 1, "text": "three", "qps_kind": "peak", "peak_qps": "lots"}, htmx=True
    )
    assert response.status_code == 409
    assert message_at(response.content.decode(), "peak_qps") == escape(why("lots", "QPS"))


def test_only_the_card_step_answers_with_card_messages(client_in, attempt):
    response = client_in.post(
        step_url(attempt, "architecture", "draft"),
        {"base_version": 0, "text": "A gateway.", "peak_qps": "lots"},
        htmx=True,
    )
    assert response.status_code == 200
    assert "card-figure-error" not in response.content.decode()


def test_the_submit_says_it_at_the_field_as_the_review_does(
    client_in, attempt, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        response = client_in.post(
            step_url(attempt, "clarify", "submit"),
            {"base_version": 0, "text": "", "qps_kind": "peak", "ttft_p99_ms": "fast"},
            htmx=True,
        )
    # The Submit is refused for it (test_qa_unread_figures_refuse_submit.py), and says why at
    # the field as the autosave does.
    assert response.status_code == 422
    assert message_at(response.content.decode(), "ttft_p99_ms") == escape(why("fast", "ms"))
