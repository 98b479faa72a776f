"""The SLO card: compared with the brief, and handed to the graders as context they never quote."""

import dataclasses

import pytest

from grading import grade
from grading.text import FORM_BLOCK_START
from practice.slo import card_as_text, parse_number, review_card
from questionbank import load_question_spec

BRIEF = load_question_spec("chat-api-50qps").brief
FULL_CARD = {
    "model": "Qwen2.5-7B-Instruct",
    "gpu": "RTX 4090",
    "context_length": "8k",
    "peak_qps": "50",
    "qps_kind": "peak",
    "ttft_p99_ms": "300",
    "tpot_p99_ms": "50",
    "input_tokens": "512",
    "output_tokens": "256",
    "tenancy": "single",
}


def test_a_full_card_pins_everything_and_names_worksheet_values():
    review = review_card(FULL_CARD, BRIEF)
    assert review.missed == [] and review.differs == []
    assert review.score == 1.0
    assert review.names["qps_peak"] == "50 QPS"
    assert review.names["out_len"] == "256 tok/req"
    assert review.names["ctx_len"] == "8000 tok"


def test_a_mean_load_is_not_the_peak():
    review = review_card({**FULL_CARD, "peak_qps": "20", "qps_kind": "mean"}, BRIEF)
    assert "Peak load" not in review.pinned
    assert any(d["label"] == "Peak load" and "mean" in d["theirs"] for d in review.differs)
    assert "qps_peak" not in review.names and review.names["qps_mean"] == "20 QPS"


def test_a_figure_that_differs_is_told_with_its_unit():
    review = review_card({**FULL_CARD, "ttft_p99_ms": "100", "context_length": "32Ki"}, BRIEF)
    differs = {d["label"]: (d["theirs"], d["brief"]) for d in review.differs}
    assert differs["p99 TTFT"][0] == "100 ms" and differs["p99 TTFT"][1].endswith(" ms")
    assert differs["Context length"] == ("32768 tokens", f"{BRIEF.context_length} tokens")
    mean = review_card({**FULL_CARD, "peak_qps": "20", "qps_kind": "mean"}, BRIEF).differs
    assert mean[0]["theirs"] == "20 QPS (as a mean)" and mean[0]["brief"].endswith("QPS at peak")


def test_bad_numbers_get_a_message_not_an_exception():
    review = review_card({**FULL_CARD, "ttft_p99_ms": "fast"}, BRIEF)
    assert review.errors["ttft_p99_ms"].startswith("Enter a number")
    assert "p99 TTFT" in review.missed
    for bad in ("-5", "1e400", "nan"):
        with pytest.raises(ValueError, match="number"):
            parse_number(bad)


def test_a_stray_letter_does_not_name_the_gpu():
    assert "GPU class" not in review_card({**FULL_CARD, "gpu": "r"}, BRIEF).pinned


def test_the_card_is_context_the_graders_never_quote():
    # The card goes to the graders as a labelled block of values, not as sentences the app
    # wrote for the candidate: the matcher quotes only the notes the candidate typed.
    step = load_question_spec("chat-api-50qps").step("clarify")
    text = card_as_text(FULL_CARD)
    assert text.startswith(FORM_BLOCK_START)
    result = grade(step, text, mode="rubric")
    assert [p.id for p in result.points if p.evidence] == []
    notes = "Every chat shares the same system prompt, so we cache it once."
    result = grade(step, card_as_text({**FULL_CARD, "notes": notes}), mode="rubric")
    quoted = [p.evidence for p in result.points if p.evidence]
    assert quoted and all(q in notes for q in quoted)


TP_BRIEF = load_question_spec("tensor-parallel-70b-midrange").brief


@pytest.mark.parametrize(
    "gpu", ["4x RTX 4090 24GB", "4× RTX 4090", "4 x RTX 4090", "RTX 4090 x4", "RTX 4090"]
)
def test_a_gpu_class_with_the_briefs_count_beside_it_pins_the_gpu(gpu):
    review = review_card({"gpu": gpu}, TP_BRIEF)
    assert "GPU class" in review.pinned
    assert not any(d["label"] == "GPU class" for d in review.differs)


@pytest.mark.parametrize("gpu", ["8x RTX 4090", "RTX 4090 x 2", "4x H100"])
def test_a_count_the_brief_does_not_name_or_another_class_differs(gpu):
    review = review_card({"gpu": gpu}, TP_BRIEF)
    assert "GPU class" not in review.pinned
    assert {"label": "GPU class", "theirs": gpu, "brief": TP_BRIEF.value_of("gpu")} in (
        review.differs
    )


def test_any_count_of_the_class_pins_it_where_the_brief_names_no_count():
    brief = load_question_spec("chat-api-50qps").brief
    assert "GPU class" in review_card({"gpu": "8x RTX 4090"}, brief).pinned


@pytest.mark.parametrize("gpu", ["L4", "l4", "1x L4", "L4 24GB"])
def test_a_two_letter_gpu_class_pins_the_briefs(gpu):
    # offline-batch-summaries' brief says "L4 (24 GB)": "L4" was too short to name anything.
    brief = load_question_spec("offline-batch-summaries").brief
    review = review_card({"gpu": gpu}, brief)
    assert "GPU class" in review.pinned
    assert not any(d["label"] == "GPU class" for d in review.differs)


@pytest.mark.parametrize(("gpu", "brief_gpu"), [("L4", "L40S (48 GB)"), ("4", "L4 (24 GB)")])
def test_a_short_name_inside_another_class_still_differs(gpu, brief_gpu):
    brief = dataclasses.replace(load_question_spec("offline-batch-summaries").brief, gpu=brief_gpu)
    assert "GPU class" not in review_card({"gpu": gpu}, brief).pinned
