"""The planner's refusals name an input as the form labels it, never by the engine's argument
(overhead_gib, prompt_spread, tp), and count tokens in words that agree with the count."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from planner.engine import PlanError
from planner.engine.capacity import check_prompt
from planner.forms import DEFAULTS, CapacityForm, plan_query


def _query(**changed: object) -> str:
    form = CapacityForm(initial={**DEFAULTS, **changed})
    return plan_query(form)


def _field_message(page: str, name: str) -> str:
    block = re.search(rf'id="id_{name}_errors"[^>]*>(.*?)</div>', page, re.S)[1]
    return html.unescape(re.sub(r"<[^>]+>", "", block)).strip()


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("overhead_gib", "0.0001", "Non-KV overhead per GPU must be 0 or at least 0.001"),
        ("prompt_spread", "0.0001", "Prompt length spread must be 0 or at least 0.001"),
        ("tp", "3", "Tensor parallelism must divide"),
    ],
)
def test_a_refusal_names_the_field_as_the_form_labels_it(client, name, value, says):
    response = client.get(f"{reverse('planner:capacity')}?{_query(**{name: value})}")
    message = _field_message(response.content.decode(), name)
    assert message.startswith(says), message
    assert re.search(rf"\b{name}\b", message) is None, message


def test_the_simulate_page_names_the_field_as_the_planner_does(client, content_loaded):
    query = _query(overhead_gib="0.0001")
    page = html.unescape(client.get(f"{reverse('simulator:page')}?{query}").content.decode())
    assert "Non-KV overhead per GPU must be 0 or at least 0.001" in page
    assert "overhead_gib" not in re.search(r'id="sim-error">([^<]+)<', page)[1]


def test_one_token_is_said_in_the_singular():
    with pytest.raises(PlanError) as refused:
        check_prompt(context=1, out_len=1, prompt_len=1, prefix_len=None)
    assert str(refused.value) == (
        "A mean prompt of 1 token and a mean output of 1 token do not fit in a context of 1 token."
    )
    with pytest.raises(PlanError) as refused:
        check_prompt(context=8192, out_len=256, prompt_len=2, prefix_len=3)
    assert str(refused.value).startswith(
        "A shared prefix of 3 tokens is longer than the mean prompt of 2 tokens"
    )


def test_the_form_says_one_token_in_the_singular():
    form = CapacityForm({**DEFAULTS, "context": "1", "out_len": "1", "prompt_len": "1"})
    assert not form.is_valid()
    assert form.errors["prompt_len"] == [
        "A mean prompt of 1 token and a mean output of 1 token do not fit in a context of 1 token."
    ]


def test_a_huge_number_in_other_digits_is_told_to_use_the_digits_0_to_9():
    """Only a number written in the digits 0-9 is out of range; other scripts' digits are
    told what every planner box says of them."""
    form = CapacityForm(data={"context": "١e400"})
    form.is_valid()
    assert form.errors["context"] == ["Use the digits 0–9."]
    form = CapacityForm(data={"context": "1e400"})
    form.is_valid()
    assert "less than or equal to" in form.errors["context"][0]
