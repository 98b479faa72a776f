"""A probe, a later step's prompt or a follow-up must not state a figure the napkin-math step
checks: a mock interviewer asks them word for word, perhaps before the candidate has worked
the figure out, and while the mock runs the checker's expected values are withheld."""

from pathlib import Path

import pytest
from django.conf import settings

from questionbank.files import parse_file, validate_question

Q1 = Path(settings.CONTENT_DIR) / "questions" / "chat-api-50qps.md"
PROBE = (
    'probe: "Which signal would you autoscale on, and why is GPU utilisation a poor choice here?"'
)


def problems_with(old: str, new: str) -> list[str]:
    text = Q1.read_text()
    assert text.count(old) == 1
    cf = parse_file(Q1, text.replace(old, new))
    return [str(p) for p in validate_question(cf, concept_slugs=None)]


@pytest.mark.parametrize(
    "asked",
    [
        "Your ten replicas are all busy. Which signal would you autoscale on?",
        "With 10 replicas at peak, which signal would you autoscale on?",
    ],
)
def test_a_probe_that_states_the_fleet_size_is_refused(asked):
    [problem] = problems_with(PROBE, f'probe: "{asked}"')
    assert "the probe of 'arch-autoscale-queue' states 10, the napkin-math answer 'n_inst'" in (
        problem
    )
    assert "Ask without the figure." in problem


def test_a_follow_up_prompt_is_held_to_the_same_rule():
    old = "prompt: Why a fleet of single-GPU instances rather than a single very large one?"
    [problem] = problems_with(old, "prompt: Why ten instances rather than a single very large one?")
    assert "the follow-up 'fu-one-big-instance' states 10" in problem


@pytest.mark.parametrize(
    "asked",
    [
        "Your 21.5 ms floor clears the target. Which signal would you autoscale on?",
        # Written in another unit of the same dimension, converted before it is compared.
        "Your 0.0215 s floor clears the target. Which signal would you autoscale on?",
        "Each token's 56 KiB of KV adds up. Which signal would you autoscale on?",
    ],
)
def test_a_probe_that_states_another_answer_in_its_unit_or_another_is_refused(asked):
    [problem] = problems_with(PROBE, f'probe: "{asked}"')
    assert "the napkin-math answer" in problem


def test_a_probe_of_the_napkin_math_step_itself_is_held_to_the_rule():
    # Asked during that very step, before the candidate has the figure.
    old = "        concepts: [tpot-floor]\n      - id: est-kv-per-token"
    new = (
        '        concepts: [tpot-floor]\n        probe: "Is a 21.5 ms floor under the target?"'
        "\n      - id: est-kv-per-token"
    )
    [problem] = problems_with(old, new)
    assert "the probe of 'est-tpot-feasible' states 21.5, the napkin-math answer 'tpot_floor'" in (
        problem
    )


@pytest.mark.parametrize(
    "asked",
    [
        # The brief's own figures are no answer: the candidate reads them first.
        "At 50 QPS, which signal would you autoscale on?",
        # A figure of another dimension is no count of instances.
        "A spike adds 10 GB of traffic logs a day. Which signal would you autoscale on?",
        # Nor is a clock time.
        "Traffic climbs at 10:00 every day. Which signal would you autoscale on?",
        # Nor a count of something against a time (21 tenants, the 21.5 ms floor).
        "Some 21 tenants share the fleet. Which signal would you autoscale on?",
        # Nor the same number in a unit that makes it another amount (57 MiB, not 56 KiB).
        "A 56 MiB log buffer fills up. Which signal would you autoscale on?",
    ],
)
def test_figures_that_give_nothing_away_pass(asked):
    assert problems_with(PROBE, f'probe: "{asked}"') == []
