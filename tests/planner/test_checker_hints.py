"""What the checker tells a candidate, across the three shipped questions: for each answer, the
verdict and the words of the hint. Question-specific mistakes come from each file's
`mistakes:`; the generic slips (×1000, decimal vs binary prefixes, bits vs bytes, 32k, one given
read with the wrong prefix) from the engine."""

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

Q1, Q2, Q3 = "chat-api-50qps", "multi-tenant-lora", "long-context-rag"

CASES = [
    # --- Q1: the TPOT floor (21.5 ms, the simple figure the question asks for)
    (Q1, "tpot_floor", "21.5 ms", "correct", ""),
    (Q1, "tpot_floor", "W / bw in ms", "known_mistake", "divide by the achievable share"),
    (Q1, "tpot_floor", "15.2 GiB / (0.7 * 1008 GB/s)", "known_mistake", "not 15.2 GiB"),
    (Q1, "tpot_floor", "15.2 GB / (0.7 * 1008 GiB/s)", "known_mistake",
     "Check the unit of bw (RTX 4090 memory bandwidth (datasheet)): its value is in GB"),
    (Q1, "tpot_floor", "0.0215", "known_mistake", "milliseconds versus seconds"),
    (Q1, "tpot_floor", "W_awq / (eta * bw)", "known_mistake", "floor with AWQ weights"),
    (Q1, "tpot_floor", "20 ms", "known_mistake", "leaves out the input embedding table"),
    (Q1, "tpot_floor", "172 ms", "wrong", "Not within tolerance"),
    # --- Q1: KV bytes per token (56 KiB)
    (Q1, "kv_per_token", "57.344 KB", "correct", ""),
    (Q1, "kv_per_token", "392 KiB", "known_mistake", "Only the 4 KV heads are cached"),
    (Q1, "kv_per_token", "28 KiB", "known_mistake", "both a key and a value"),
    (Q1, "kv_per_token", "448 KiB", "known_mistake", "bits versus bytes"),
    (Q1, "kv_per_token", "57.344 KiB", "known_mistake", "(1024/1000)^1 = 1.024"),
    # --- Q1: the VRAM gate (33 streams at 8k)
    (Q1, "max_seqs", "33", "correct", ""),
    (Q1, "max_seqs", "33.5", "not_rounded", "must be a whole number, rounded down."),
    (Q1, "max_seqs", "ceil(33.51)", "not_rounded",
     "33.51 rounded up gives 34, but this count must be rounded down."),
    (Q1, "max_seqs", "34", "close", "A whole number, but not the one this count comes to"),
    (Q1, "max_seqs", "32", "close", "A whole number, but not the one this count comes to"),
    (Q1, "max_seqs", "(24 GiB*0.9-5.5 GB-0.5 GB)/(56 KiB * 8192)", "known_mistake",
     "takes the card as a full 24 GiB and a 0.5 GB reserve"),
    (Q1, "max_seqs", "(vram - W_awq - reserve) / (kv_per_token * ctx)", "known_mistake",
     "start from vram times mem_util"),
    (Q1, "max_seqs", "(24 GB * 0.9 - W_awq - reserve) / (kv_per_token * ctx)", "known_mistake",
     "24 GB is the datasheet figure"),
    (Q1, "max_seqs", "(23.65 GB * 0.9 - W_awq - reserve) / (kv_per_token * ctx)",
     "known_mistake", "Check the unit of vram"),
    (Q1, "max_seqs", "(vram * mem_util - W_awq) / (kv_per_token * ctx)", "known_mistake",
     "subtract the reserve"),
    (Q1, "max_seqs", "12", "known_mistake", "assumes BF16 weights"),
    (Q1, "max_seqs", "4", "known_mistake", "4 KV heads, not the 28 query heads"),
    # --- Q1: per instance and fleet (7.8 req/s, 10 instances)
    (Q1, "r_inst", "T_out / (in_len + out_len)", "known_mistake", "generated tokens only"),
    (Q1, "r_inst", "2000 tok/s", "wrong_unit", "Expected requests per time (in req/s)"),
    (Q1, "n_inst", "10", "correct", ""),
    (Q1, "n_inst", "9.2", "not_rounded", "must be a whole number, rounded up."),
    (Q1, "n_inst", "floor(qps_peak / (rho * r_inst))", "not_rounded",
     "9.143 rounded down gives 9, but this count must be rounded up."),
    (Q1, "n_inst", "9", "close", "more than 5% off"),
    (Q1, "n_inst", "7", "known_mistake", "divide by rho times r_inst"),
    (Q1, "n_inst", "4", "known_mistake", "peak arrival rate"),
    (Q1, "n_inst", "11", "close", "more than 5% off"),
    (Q1, "n_gpu", "9.16", "not_rounded", "must be a whole number, rounded up."),
    (Q1, "n_gpu", "floor(9.14)", "not_rounded",
     "rounded down gives 9, but this count must be rounded up"),
    (Q1, "n_gpu", "7", "known_mistake", "forgets the utilisation target rho"),
    # 10.4 rounded up is 11, so it is not the right value of a count that comes to 10.
    (Q1, "n_gpu", "10.4", "close", "rounded up 10.4 gives 11, not the count this comes to"),
    # A bare number is read in the quantity's unit, and the hint says so.
    (Q1, "tpot_floor", "21.5", "correct", "No unit given, so read in ms: 21.5 ms."),
    (Q1, "r_inst", "2000 / 256", "correct", "No unit given, so read in req/s: 7.812 req/s."),
    (Q1, "tpot_floor", "0.0215", "known_mistake", "No unit given, so read in ms: 0.0215 ms."),
    # --- Q2: LoRA co-serving
    (Q2, "adapter_bytes", "80 MB", "correct", ""),
    (Q2, "r_inst", "7.8 req/s", "known_mistake", "apply the LoRA efficiency factor"),
    (Q2, "n_inst", "9", "correct", ""),
    (Q2, "n_inst", "floor(qps_peak / (rho * r_inst))", "not_rounded",
     "8.127 rounded down gives 8, but this count must be rounded up."),
    (Q2, "n_inst", "8.13", "not_rounded", "must be a whole number, rounded up."),
    (Q2, "n_inst", "300", "known_mistake", "One GPU per tenant"),
    (Q2, "lora_slots_vram", "24 GB", "known_mistake", "Only --max-loras adapters"),
    # --- Q3: the KV wall and the fleet from the streams that fit
    (Q3, "kv_stream", "1.75 GiB", "correct", ""),
    (Q3, "kv_stream", "1.88", "known_mistake", "(1024/1000)^3 = 1.074"),
    (Q3, "kv_stream", "1.75 GB", "known_mistake", "reading it as 1.75 GB undercounts"),
    (Q3, "kv_stream", "56 KiB * 32k", "correct", "32k reads as 32,000"),
    (Q3, "kv_stream", "12.25 GiB", "known_mistake", "not the 28 query heads"),
    (Q3, "kv_stream_fp8", "1.75 GiB", "known_mistake", "the stream's KV halves"),
    (Q3, "kv_pool", "24 GiB*0.9-5.5 GB-0.5 GB", "known_mistake",
     "takes the card as a full 24 GiB and a 0.5 GB reserve"),
    (Q3, "kv_pool", "23.65 GB * 0.9 - W_awq - reserve", "known_mistake",
     "Check the unit of vram (RTX 4090 memory as the driver reports it"),
    (Q3, "kv_pool", "vram - W_awq - reserve", "known_mistake", "--gpu-memory-utilization share"),
    (Q3, "max_streams", "16", "correct", ""),
    (Q3, "max_streams", "ceil(16.76)", "not_rounded",
     "16.76 rounded up gives 17, but this count must be rounded down."),
    (Q3, "max_streams", "8", "known_mistake", "count with BF16 KV"),
    (Q3, "prefill_full", "3.9 s", "known_mistake", "divide by mfu times flops"),
    (Q3, "prefill_full", "5.2 s", "known_mistake", "Causal attention adds"),
    (Q3, "prefill_suffix", "7.8 s", "known_mistake", "only the unique suffix is prefilled"),
    (Q3, "prefill_suffix", "0.32 s", "known_mistake", "attend to all 30k cached keys"),
    (Q3, "r_inst", "4 req/s", "correct", ""),
    (Q3, "r_inst", "15.6 req/s", "known_mistake", "That is the speed bound"),
    (Q3, "r_inst", "2 req/s", "known_mistake", "BF16 stream count"),
    (Q3, "n_inst", "4", "correct", ""),
    (Q3, "n_inst", "floor(3.57)", "not_rounded",
     "rounded down gives 3, but this count must be rounded up"),
    (Q3, "n_inst", "1", "known_mistake", "sizes the fleet on the speed bound"),
]  # fmt: skip


def check(slug: str, quantity_id: str, answer: str):
    estimate = estimate_step(read_front_matter(question_path(slug, Path(settings.CONTENT_DIR))))
    return check_quantity(
        find_quantity(estimate, quantity_id),
        answer,
        givens_from_estimate(estimate, upto=quantity_id),
        given_labels=given_labels(estimate),
    )


@pytest.mark.parametrize(("slug", "quantity_id", "answer", "verdict", "hint"), CASES)
def test_checker_verdict_and_hint(
    slug: str, quantity_id: str, answer: str, verdict: str, hint: str
) -> None:
    result = check(slug, quantity_id, answer)
    assert (result.verdict, hint in result.hint) == (verdict, True), result.hint
    if not hint:
        assert result.hint == ""


def test_the_table_covers_all_three_questions_with_at_least_thirty_answers() -> None:
    assert len(CASES) >= 30
    assert {case[0] for case in CASES} == {Q1, Q2, Q3}


def test_a_matched_mistake_reports_its_kind() -> None:
    assert check(Q1, "n_inst", "7").mistake == "utilisation-target"
    assert check(Q3, "kv_stream", "1.88").mistake == "gb-vs-gib"
    assert check(Q1, "n_inst", "10").mistake is None
