"""The chat and LoRA seed questions' estimate steps against the planner (the RAG seed has its
own module, test_plan_long_context_question.py): each figure the planner models is computed by
`plan()` from the question's own givens and agrees within the quantity's tolerance.

Not modelled, so not compared: the LoRA question's adapter sizes (adapter_bytes, base_ratio,
lora_slots_vram, cpu_tier_ram): the planner sizes base models, not adapters. Its r_inst is the
planner's with the knee the question derates for LoRA (lora_eff x T_out)."""

from __future__ import annotations

import pytest

from planner.engine import plan
from tests.planner.agreement import GiB, QuestionFigures

CHAT = QuestionFigures("chat-api-50qps")
LORA = QuestionFigures("multi-tenant-lora")
FIGURES = {figures.slug: figures for figures in (CHAT, LORA)}


def chat_planner() -> dict[str, float]:
    given = CHAT.given
    base = dict(
        model="qwen2.5-7b-instruct", gpu="rtx-4090", context=int(given("ctx")),
        mem_util=given("mem_util"), overhead_gib=given("reserve") / GiB, bw_eff=given("eta"),
        out_len=given("out_len"), prompt_len=given("in_len"), qps=given("qps_peak"),
        rho=given("rho"), tp=int(given("TP")),
    )  # fmt: skip
    bf16 = plan(**base)
    awq = plan(**base, weights="awq-int4", knee_tok_s=given("T_out"))
    # The question reserves the whole context per stream (the worst case vLLM must admit).
    full_context = plan(**{**base, "prompt_len": None}, weights="awq-int4")
    return {
        "tpot_floor": bf16["tpot_floor_simple_ms"],
        "kv_per_token": bf16["kv_bytes_per_token"] / 1024,
        "max_seqs": full_context["max_seqs"],
        "r_inst": awq["r_speed_req_s"],
        "n_inst": awq["n_inst"],
        "n_gpu": awq["n_gpu"],
    }


def lora_planner() -> dict[str, float]:
    given = LORA.given
    fleet = plan(
        model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="awq-int4",
        knee_tok_s=given("lora_eff") * given("T_out"), out_len=given("out_len"),
        prompt_len=LORA.brief.value_of("input_tokens"),
        qps=given("qps_peak"), rho=given("rho"), tp=int(given("TP")),
    )  # fmt: skip
    return {"r_inst": fleet["r_speed_req_s"], "n_inst": fleet["n_inst"], "n_gpu": fleet["n_gpu"]}


CASES = [("chat-api-50qps", q, chat_planner) for q in chat_planner()] + [
    ("multi-tenant-lora", q, lora_planner) for q in lora_planner()
]


@pytest.mark.parametrize(("slug", "quantity_id", "planner"), CASES)
def test_the_planner_agrees_with_the_seed_question(slug, quantity_id, planner) -> None:
    FIGURES[slug].assert_agrees(planner(), quantity_id)


def test_every_chat_quantity_is_compared() -> None:
    CHAT.assert_covers(chat_planner())
