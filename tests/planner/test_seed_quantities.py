"""The seed's figures come out of the shipped questions' quantities (content/questions)."""

from pathlib import Path

import pytest
from django.conf import settings

from planner.engine import check_quantity, givens_from_estimate
from planner.questions import (
    estimate_step,
    find_quantity,
    given_labels,
    question_path,
    read_front_matter,
)


def expected(slug: str, quantity_id: str) -> tuple[float, str]:
    estimate = estimate_step(read_front_matter(question_path(slug, Path(settings.CONTENT_DIR))))
    quantity = find_quantity(estimate, quantity_id)
    result = check_quantity(
        quantity,
        "0",
        givens_from_estimate(estimate, upto=quantity_id),
        reveal=True,
        given_labels=given_labels(estimate),
    )
    return result.expected, result.unit


@pytest.mark.parametrize(
    ("slug", "quantity_id", "value", "unit", "tolerance"),
    [
        ("chat-api-50qps", "tpot_floor", 21.5, "ms", 0.05),
        ("chat-api-50qps", "kv_per_token", 56, "KiB", 0),
        ("chat-api-50qps", "max_seqs", 33, "", 0),
        ("chat-api-50qps", "r_inst", 7.8, "req/s", 0.02),
        ("chat-api-50qps", "n_inst", 10, "", 0),
        ("long-context-rag", "kv_stream", 1.75, "GiB", 0),
        ("long-context-rag", "kv_stream_128k", 7, "GiB", 0),
        ("long-context-rag", "kv_stream_fp8", 0.875, "GiB", 0),
        ("long-context-rag", "max_streams", 16, "", 0),
        # The seed says about 6 s from the linear layers; the question adds causal attention.
        ("long-context-rag", "prefill_full", 7.8, "s", 0.02),
        ("long-context-rag", "r_inst", 4, "req/s", 0),
        ("long-context-rag", "n_inst", 4, "", 0),
    ],
)
def test_seed_figure_from_the_question(
    slug: str, quantity_id: str, value: float, unit: str, tolerance: float
) -> None:
    got, got_unit = expected(slug, quantity_id)
    assert got_unit == unit
    assert got == pytest.approx(value, abs=tolerance)


def test_every_shipped_quantity_evaluates_and_its_mistakes_are_distinct() -> None:
    for path in sorted((Path(settings.CONTENT_DIR) / "questions").glob("*.md")):
        estimate = estimate_step(read_front_matter(path))
        for quantity in estimate.get("quantities") or []:
            givens = givens_from_estimate(estimate, upto=quantity["id"])
            right = check_quantity(quantity, "0", givens, reveal=True).expected
            # The reference formula itself must be judged correct.
            verdict = check_quantity(quantity, quantity["formula"], givens).verdict
            assert verdict in ("correct", "not_rounded"), (path.name, quantity["id"], verdict)
            assert right is not None


def test_the_question_files_agree_with_the_planner() -> None:
    """The VRAM gate and fleet the questions derive are the ones `plan` gives for their inputs."""
    from planner.engine import plan

    # The seeds' givens: the measured knee and the rough 1.5 GiB non-KV reserve.
    q1 = dict(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", kv="bf16", context=8192,
              knee_tok_s=2000, out_len=256, qps=50, rho=0.7, overhead_gib=1.5)  # fmt: skip
    # The question's VRAM gate reserves the whole 8k context per stream (no prompt length);
    # its fleet runs the brief's ~512-token prompts at the measured knee.
    assert plan(**q1)["max_seqs"] == expected("chat-api-50qps", "max_seqs")[0]
    assert plan(**q1, prompt_len=512)["n_inst"] == expected("chat-api-50qps", "n_inst")[0]
    q3 = plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", kv="fp8", context=32768,
              out_len=128, qps=10, rho=0.7, hold_s=4, overhead_gib=1.5,
              knee_tok_s=2000)  # fmt: skip
    assert q3["max_seqs"] == expected("long-context-rag", "max_streams")[0]
    assert q3["r_inst_req_s"] == expected("long-context-rag", "r_inst")[0]
    assert q3["n_inst"] == expected("long-context-rag", "n_inst")[0]
    assert q3["kv_pool_bytes"] == pytest.approx(
        expected("long-context-rag", "kv_pool")[0] * 1e9, rel=0.01
    )
