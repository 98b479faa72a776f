"""A napkin Check of a worksheet name whose own line has an error says so, as the worksheet
beside it does, instead of calling a name the candidate can see defined "unknown"."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from practice import napkin
from practice import services as flow
from practice.services import FlowError
from questions.models import Question

pytestmark = pytest.mark.django_db

WORKSHEET = "W = P * b_w in GB\nflops = (2 * P_lin * n_in) / (tok in TFLOP\nt = flops / F"


@pytest.fixture
def attempt(bank_loaded):
    user = User.objects.create_user("broken-line", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="structured-extraction-api").current_revision
    return flow.attempt_start(user=user, revision=revision)


def check(attempt, quantity: str, expression: str) -> str:
    with pytest.raises(FlowError) as refused:
        napkin.quantity_verdict(
            attempt=attempt, quantity_id=quantity, expression=expression, worksheet=WORKSHEET
        )
    return str(refused.value)


def test_a_name_whose_line_failed_is_named_with_its_line(attempt):
    # The Check said "Unknown name 'flops' at column 1." while the worksheet showed flops
    # defined on line 2 with an error.
    message = check(attempt, "flops_cold", "flops")
    assert "Unknown name" not in message
    assert "'flops' has no value: its line in your worksheet (line 2) has an error" in message


def test_a_name_that_depends_on_a_failed_line_is_named_too(attempt):
    message = check(attempt, "ttft_cold", "t in ms")
    assert "'t' has no value: its line in your worksheet (line 3) has an error" in message


def test_a_name_never_defined_is_still_unknown(attempt):
    assert "Unknown name 'nothing_here'" in check(attempt, "flops_cold", "nothing_here")


def test_a_name_refused_as_a_unit_is_named_with_its_line_not_read_as_the_unit(attempt):
    # `h = ...` is refused (h is an hour); checking `h` then said "wrong unit: your answer
    # is time", reading the name as the unit its line could not define.
    with pytest.raises(FlowError) as refused:
        napkin.quantity_verdict(
            attempt=attempt,
            quantity_id="flops_cold",
            expression="h",
            worksheet="W = P * b_w in GB\nh = 2 * P_lin",
        )
    assert "'h' has no value: its line in your worksheet (line 2) has an error" in str(
        refused.value
    )
