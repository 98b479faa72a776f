"""A vision-language model in the drills: its figures are its language model's, and the drill
says so wherever one of them stands (the catalogue's `params` leaves the vision tower out),
but for the memory the weights hold, where the tower counts as the planner counts it."""

import pytest

from drills.engine import drill_generate
from planner.engine import load_catalog

VISION = "Qwen2.5-VL-7B-Instruct"


def _first_with_the_vision_model(kind: str):
    for seed in range(2000):
        drill = drill_generate(kind, seed)
        if VISION in drill.question:
            return drill
    pytest.fail(f"no {kind} drill of {VISION} in 2000 seeds")


def test_the_catalogue_names_the_vision_tower_it_leaves_out():
    model = load_catalog().models["qwen2.5-vl-7b-instruct"]
    assert model.vision_params == 676_550_144
    assert load_catalog().models["qwen2.5-7b-instruct"].vision_params is None


@pytest.mark.parametrize(
    ("kind", "given"),
    [("weights", "P"), ("tpot_floor", "W"), ("ttft", "params")],
)
def test_a_drill_of_a_vision_language_model_says_its_figures_leave_the_tower_out(kind, given):
    drill = _first_with_the_vision_model(kind)
    label = next(g.label for g in drill.givens if g.name == given)
    assert "without the 0.68B-parameter vision tower" in label, label
    assert label.count("(") == label.count(")"), label


def test_the_weights_question_of_a_vision_language_model_asks_for_the_language_model():
    drill = _first_with_the_vision_model("weights")
    assert "its language model, without the 0.68B-parameter vision tower" in drill.question


def test_a_text_model_drill_says_nothing_of_a_vision_tower():
    for seed in range(40):
        drill = drill_generate("weights", seed)
        if VISION not in drill.question:
            assert "vision" not in drill.question + " ".join(g.label for g in drill.givens)
            return
    pytest.fail("no text-model weights drill in 40 seeds")


def test_the_memory_drill_of_a_vision_language_model_counts_the_tower_as_the_planner_does():
    # The tower's weights share the GPU with the language model's: the KV pool gives them up.
    drill = _first_with_the_vision_model("max_seqs")
    label = next(g.label for g in drill.givens if g.name == "W")
    assert "with its 0.68B-parameter vision tower, 16-bit" in label, label
    assert label.count("(") == label.count(")"), label
