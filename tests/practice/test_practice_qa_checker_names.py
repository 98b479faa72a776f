"""What a new user met around the napkin checker's words: a Check button whose accessible name
was cut at the thousands separator of "2,500 tokens", raw verdict keys ("not_rounded") on the
scorecard where the live check says "Round it", and an SLO card that took "8k" as 8,000 for a
context of 8,192 without a word."""

# ruff: noqa: F811 - the fixtures imported from test_practice are parameters below

import re

import pytest
from django.urls import reverse

from planner.engine import VERDICTS, evaluate_expression
from planner.engine.checker import VERDICT_LABELS
from practice.models import Attempt, Submission
from practice.services import submission_grade
from questionbank.spec import Quantity
from tests.practice.test_practice import (  # noqa: F401 - fixtures
    attempt,
    candidate,
    client_in,
    napkin_on_the_scorecard,
    step_url,
)

# --- the Check buttons' accessible names ------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "short"),
    [
        ("Streams of 2,500 tokens that fit (every GPU holds its share of each)",
         "Streams of 2,500 tokens that fit"),
        ("Prefill compute of a 2,000-token prompt at TP 4", "Prefill compute of a 2,000-token "
         "prompt at TP 4"),
        ("Tokens a mean stream holds, 2,000 in plus 500 out (a count)",
         "Tokens a mean stream holds"),
        ("Decode TPOT floor with BF16 weights, per token", "Decode TPOT floor with BF16 weights"),
    ],
)  # fmt: skip
def test_a_short_label_is_not_cut_at_a_thousands_separator(label: str, short: str) -> None:
    assert Quantity("q", label, "1", "", 0.05).short_label == short


def test_the_check_buttons_keep_their_thousands(client_in, bank_loaded):
    client_in.post(reverse("attempt_start", args=["tensor-parallel-70b-midrange"]))
    attempt = Attempt.objects.get()
    page = client_in.get(step_url(attempt, "estimate")).content.decode()
    names = re.findall(r'Check<span class="visually-hidden"> ([^<]*)</span>', page)
    assert "Streams of 2,500 tokens that fit" in names
    assert "Prefill compute of a 2,000-token prompt at TP 4" in names
    assert not any(name.endswith(" 2") for name in names), names


# --- one name for each verdict ------------------------------------------------------------------


def test_every_verdict_has_a_name_for_the_candidate() -> None:
    assert set(VERDICT_LABELS) == set(VERDICTS)


def test_the_scorecard_names_the_napkin_verdicts_as_the_live_check_does(
    client_in, attempt, django_capture_on_commit_callbacks
):
    boxes = {
        "expr_tpot_floor": "15 GB",  # wrong unit
        "expr_max_seqs": "12",  # BF16 weights: a known slip
        "expr_n_inst": "floor(qps_peak / (rho * r_inst))",  # rounded the wrong way
        "expr_n_gpu": "10",  # correct
    }  # kv_per_token and r_inst left empty: not checked
    napkin = napkin_on_the_scorecard(client_in, attempt, boxes, django_capture_on_commit_callbacks)
    shown = re.findall(r"<strong>([^<]*)</strong>", napkin)
    assert sorted(shown) == sorted(
        ["Wrong unit", "Not checked", "A known slip", "Not checked", "Round it", "Correct"]
    )
    assert "<strong>Round it</strong> · <code>floor(qps_peak / (rho * r_inst))</code>" in napkin


# --- how the SLO card read a figure -------------------------------------------------------------


def submit_card(client_in, attempt, context_length: str, capture) -> str:
    with capture(execute=False):
        client_in.post(
            step_url(attempt, "clarify", "submit"),
            {"base_version": 0, "text": "", "qps_kind": "peak", "context_length": context_length},
            htmx=True,
        )
    submission_grade(submission_id=Submission.objects.get().pk)
    page = client_in.get(step_url(attempt, "clarify")).content.decode()
    return page.split('class="slo-review"')[1].split("</ul>")[0]


def test_the_card_says_how_8k_was_read_where_the_brief_says_8192(
    client_in, attempt, django_capture_on_commit_callbacks
):
    review = submit_card(client_in, attempt, "8k", django_capture_on_commit_callbacks)
    # The worksheet's and the planner's own note on that figure, word for word.
    (note,) = evaluate_expression("8k").notes
    assert note == "8k reads as 8,000; for a power of two such as 8,192 write 8Ki."
    assert f"Pinned: Context length: {note}" in review


@pytest.mark.parametrize("typed", ["8Ki", "8,192", "8192 tok"])
def test_a_card_figure_read_as_the_brief_gets_no_note(
    client_in, attempt, django_capture_on_commit_callbacks, typed
):
    review = submit_card(client_in, attempt, typed, django_capture_on_commit_callbacks)
    assert "Pinned: Context length</li>" in review
    assert "reads as" not in review


def test_a_figure_that_differs_says_how_it_was_read_too(
    client_in, attempt, django_capture_on_commit_callbacks
):
    review = submit_card(client_in, attempt, "32k", django_capture_on_commit_callbacks)
    assert (
        "Differs: Context length: you have 32000 tokens, the brief says 8192 tokens. 32k reads as "
        "32,000; "
        "for a power of two such as 32,768 write 32Ki."
    ) in review
