"""Capacity formulas and plan(): the seed's three designs come out of the planner."""

import math

import pytest

from planner.engine import (
    PlanError,
    fleet_curve,
    kv_bytes_per_token,
    kv_curve,
    kv_pool_bytes,
    load_catalog,
    max_concurrent_seqs,
    n_gpu,
    n_inst,
    plan,
    r_inst,
    tpot_floor,
    weights_bytes,
)
from planner.engine.catalog import DEFAULT_DIR

GiB = 1024**3
# The seed's Q1 givens, its rough 1.5 GiB non-KV reserve included (the planner derives its own
# overhead when none is given).
Q1_AWQ = dict(
    model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="awq-int4", kv="bf16", overhead_gib=1.5
)


# --- named formulas -----------------------------------------------------------------------------


def test_weights_bytes_of_qwen_7b_in_bf16_is_15_2_gb() -> None:
    m = load_catalog().model("Qwen2.5-7B-Instruct")
    w = weights_bytes(
        params=m.params,
        embedding_params=m.embedding_params,
        bytes_per_param=2,
        embedding_bytes_per_param=2,
    )
    assert w == pytest.approx(15.2e9, rel=0.005)


def test_kv_bytes_per_token_of_qwen_7b_is_56_kib() -> None:
    assert kv_bytes_per_token(layers=28, kv_heads=4, head_dim=128, kv_bytes=2) == 56 * 1024


def test_l4_with_q1s_awq_and_8k_fits_30_streams_not_33() -> None:
    assert plan(**{**Q1_AWQ, "gpu": "l4"})["max_seqs"] == 30


def test_kv_pool_is_memory_times_utilisation_minus_weights_and_overhead() -> None:
    pool = kv_pool_bytes(memory_bytes=24 * GiB, mem_util=0.9, weights_bytes=5e9, overhead_bytes=2e9)
    assert pool == pytest.approx(24 * GiB * 0.9 - 7e9)


def test_kv_pool_with_tensor_parallelism_pools_the_gpus() -> None:
    pool = kv_pool_bytes(
        memory_bytes=80 * GiB, mem_util=0.9, weights_bytes=140e9, overhead_bytes=2e9, tp=4
    )
    assert pool == pytest.approx(4 * (80 * GiB * 0.9 - 2e9) - 140e9)


def test_max_concurrent_seqs_rounds_down_and_never_goes_negative() -> None:
    assert (
        max_concurrent_seqs(kv_pool_bytes=10 * GiB, kv_bytes_per_token=57344, context_tokens=32768)
        == 5
    )
    assert (
        max_concurrent_seqs(kv_pool_bytes=-1e9, kv_bytes_per_token=57344, context_tokens=8192) == 0
    )


def test_tpot_floor_of_15_2_gb_on_a_4090_is_21_5_ms() -> None:
    floor = tpot_floor(weights_bytes=15.2e9, bandwidth_bytes_s=1008e9, bw_eff=0.7)
    assert floor * 1000 == pytest.approx(21.5, abs=0.05)


def test_r_inst_at_2000_tok_s_and_256_tokens_is_7_8() -> None:
    assert r_inst(knee_tok_s=2000, out_len_tok=256) == pytest.approx(7.8, abs=0.02)


def test_n_inst_for_50_qps_at_rho_0_7_is_10() -> None:
    assert n_inst(peak_qps=50, rho=0.7, r_inst_req_s=7.8125) == 10
    assert n_inst(peak_qps=50, rho=0.7, r_inst_req_s=7.8) == 10


def test_n_gpu_is_instances_times_tp() -> None:
    assert n_gpu(n_inst=10, tp=1) == 10
    assert n_gpu(n_inst=3, tp=4) == 12


# --- the seed's figures through plan() --------------------------------------------------------


def test_q1_simple_tpot_floor_bf16_is_the_seeds_21_5_ms() -> None:
    result = plan(model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="bf16")
    assert result["tpot_floor_simple_ms"] == pytest.approx(21.5, abs=0.15)


def test_q1_simple_awq_tpot_floor_is_the_seeds_8_ms() -> None:
    assert plan(**Q1_AWQ)["tpot_floor_simple_ms"] == pytest.approx(8, abs=0.2)


def test_the_floor_the_planner_shows_reads_the_lm_head_but_not_the_input_embedding() -> None:
    # 15.23 GB of BF16 weights less the 152064 x 3584 input table (1.09 GB) is 14.14 GB.
    result = plan(model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="bf16")
    assert result["weights_read_per_step_bytes"] == pytest.approx(14.14e9, rel=0.002)
    assert result["tpot_floor_ms"] == pytest.approx(14.14e9 / (0.7 * 1008e9) * 1000, rel=0.002)
    assert any("LM head" in note and "21.59 ms" in note for note in result["notes"])


def test_q1_kv_per_token_is_56_kib() -> None:
    assert plan(**Q1_AWQ)["kv_bytes_per_token"] == 56 * 1024


def test_q1_awq_weights_bf16_kv_fit_about_33_streams_at_8k() -> None:
    result = plan(**Q1_AWQ, context=8192, mem_util=0.9)
    assert result["max_seqs"] == 33


def test_q1_r_inst_n_inst_n_gpu() -> None:
    # The seed's traffic, ~512 tokens in and 256 out, at its measured knee.
    result = plan(**Q1_AWQ, knee_tok_s=2000, prompt_len=512, out_len=256, qps=50, rho=0.7, tp=1)
    assert result["r_inst_req_s"] == pytest.approx(7.8, abs=0.02)
    assert result["n_inst"] == 10
    assert result["n_gpu"] == 10


def test_q1_traffic_ten_times_needs_about_100_instances() -> None:
    result = plan(**Q1_AWQ, knee_tok_s=2000, prompt_len=512, qps=500)
    assert result["n_inst"] == pytest.approx(100, abs=10)


def test_q3_kv_per_32k_stream_is_1_75_gib_and_7_gib_at_128k() -> None:
    assert plan(**Q1_AWQ, context=32768)["kv_bytes_per_stream"] == 1.75 * GiB
    assert plan(**Q1_AWQ, context=131072)["kv_bytes_per_stream"] == 7 * GiB


def test_q3_fp8_kv_halves_the_stream() -> None:
    assert plan(**{**Q1_AWQ, "kv": "fp8"}, context=32768)["kv_bytes_per_stream"] == 0.875 * GiB


def test_feasible_compares_the_tpot_slo_with_the_floor() -> None:
    assert plan(**Q1_AWQ, tpot_slo_ms=50)["feasible"] is True
    assert plan(**Q1_AWQ, tpot_slo_ms=5)["feasible"] is False
    assert plan(**Q1_AWQ)["feasible"] is None


def test_with_a_measured_knee_r_inst_is_the_smaller_of_the_speed_and_the_memory_bound() -> None:
    result = plan(**Q1_AWQ, knee_tok_s=2000, prompt_len=512)
    assert result["knee_source"] == "measured"
    assert result["r_inst_req_s"] == min(result["r_speed_req_s"], result["r_memory_req_s"])
    assert result["binding"] == "tpot"  # the decode (speed) bound; "speed" before this change
    steps = [s["name"] for s in result["steps"]]
    assert steps.index("r_speed") < steps.index("r_memory") < steps.index("r_inst")


def test_without_a_knee_prefill_and_decode_share_the_gpu_and_memory_caps_it() -> None:
    result = plan(**Q1_AWQ, prompt_len=512, tpot_slo_ms=50)
    assert result["knee_source"] == "derived"
    shared = 1 / (1 / result["r_speed_req_s"] + 1 / result["r_prefill_req_s"])
    assert result["r_inst_req_s"] == pytest.approx(min(shared, result["r_memory_req_s"]))


def test_without_a_measured_hold_time_a_request_holds_its_slot_for_prefill_and_decode():
    result = plan(**Q1_AWQ)
    decode_s = 256 * result["tpot_ms"] / 1000
    assert result["hold_s"] == pytest.approx(result["ttft_miss_ms"] / 1000 + decode_s)
    assert result["r_memory_req_s"] == pytest.approx(33 / result["hold_s"])


def test_long_context_rag_fleet_comes_from_the_streams_that_fit() -> None:
    # The question's own inputs: AWQ weights, FP8 KV, 32k streams, a 4 s hold, 10 QPS peak.
    result = plan(
        model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", kv="fp8", context=32768,
        out_len=128, qps=10, rho=0.7, hold_s=4, overhead_gib=1.5, knee_tok_s=2000,
    )  # fmt: skip
    assert result["max_seqs"] == 16
    assert result["r_memory_req_s"] == 4
    assert result["binding"] == "memory"
    assert (result["n_inst"], result["n_gpu"]) == (4, 4)


def test_nothing_fits_so_there_is_no_fleet() -> None:
    result = plan(model="qwen2.5-7b", gpu="rtx-4090", weights="bf16", context=131072)
    assert result["max_seqs"] == 0
    assert result["feasible"] is False
    assert (result["n_inst"], result["n_gpu"]) == (None, None)
    assert "Not even one sequence of 131072 tokens fits" in result["reason"]
    assert [s["name"] for s in result["steps"]][-1] == "r_inst"


def test_when_the_weights_alone_do_not_fit_the_reason_says_so() -> None:
    result = plan(model="qwen2.5-72b", gpu="h200", weights="bf16")
    assert result["feasible"] is False and result["n_inst"] is None
    assert result["reason"].startswith("The weights alone do not fit: 145.4 GB per GPU")


def test_tp_above_the_kv_heads_replicates_one_kv_head_per_gpu() -> None:
    # Qwen3-30B-A3B: 32 query heads (any TP up to 32 splits them), 4 KV heads, 48 layers.
    four = plan(model="qwen3-30b-a3b", gpu="h100-sxm", tp=4)
    eight = plan(model="qwen3-30b-a3b", gpu="h100-sxm", tp=8)
    assert (four["kv_heads_per_gpu"], eight["kv_heads_per_gpu"]) == (1, 1)
    assert four["kv_bytes_per_token"] == 2 * 48 * 4 * 128 * 2 == 96 * 1024
    assert eight["kv_bytes_per_token"] == 2 * 96 * 1024
    assert kv_bytes_per_token(layers=28, kv_heads=4, head_dim=128, kv_bytes=2, tp=8) == 112 * 1024


def test_tp_that_neither_divides_nor_is_a_multiple_of_the_kv_heads_is_refused() -> None:
    with pytest.raises(PlanError, match="tp must divide"):
        plan(model="qwen2.5-7b", gpu="h100-sxm", tp=3)


@pytest.mark.parametrize(("model", "tp"), [("qwen2.5-7b", 8), ("qwen2.5-14b", 16)])
def test_tp_that_does_not_divide_the_attention_heads_is_refused_as_vllm_does(
    model: str, tp: int
) -> None:
    # vLLM: "Total number of attention heads (28) must be divisible by tensor parallel size".
    # Qwen2.5-7B has 28 query heads and Qwen2.5-14B 40, though 8 and 16 are multiples of their
    # KV heads; the refusal names the sizes that work.
    with pytest.raises(PlanError, match="attention heads") as refused:
        plan(model=model, gpu="h100-sxm", tp=tp)
    assert refused.value.field == "tp"
    assert str(refused.value).endswith(
        {"qwen2.5-7b": "1, 2, 4 or 28.", "qwen2.5-14b": "1, 2, 4, 8 or 40."}[model]
    )


def test_memory_bound_by_littles_law_in_the_named_formula() -> None:
    assert r_inst(knee_tok_s=2000, out_len_tok=128, max_seqs=16, hold_s=4) == 4
    assert r_inst(knee_tok_s=2000, out_len_tok=256, max_seqs=33, hold_s=1) == 7.8125


def test_plan_steps_show_formula_substitution_value_and_unit() -> None:
    steps = {s["name"]: s for s in plan(**Q1_AWQ)["steps"]}
    assert list(steps) == [
        "W", "W_step", "overhead", "H_gpu", "kappa", "pool", "n_flight", "kv_stream", "N_seq",
        "tpot", "c_tok", "N_batch", "t_mem", "t_cmp", "t_tok", "T_out", "r_speed", "F_cold",
        "ttft_cold", "t_pre", "t_hold", "r_memory", "r_prefill", "r_inst", "s_str", "t_0",
        "r_load", "N_inst", "lambda_r", "u_pre", "u_kv", "u_stall", "tpot_load", "k_pre",
        "tpot_p99", "N_GPU", "cost_h", "monthly", "cost_mtok",
    ]  # fmt: skip
    kappa = steps["kappa"]
    assert kappa["formula_latex"].startswith(r"\kappa = \frac{2 \times L \times H_{\mathrm{gpu}}")
    assert kappa["substituted"] == (
        r"\frac{2 \times 28 \times 4 \times 1 \times 128 \times 2\,\text{B}}{\text{tok}}"
    )
    assert (kappa["value"], kappa["unit"]) == (56, "KiB/tok")
    n = steps["N_inst"]
    seed = plan(**Q1_AWQ, knee_tok_s=2000, prompt_len=512)
    measured = {s["name"]: s for s in seed["steps"]}["N_inst"]
    assert (measured["value"], measured["unit"]) == (10, "")
    assert r"\lceil" in n["substituted"] and "50" in n["substituted"]


def test_large_model_needs_tensor_parallelism() -> None:
    alone = plan(model="qwen2.5-72b-instruct", gpu="h100-sxm", weights="bf16", tp=1)
    assert alone["fits"] is False and alone["max_seqs"] == 0
    sharded = plan(model="qwen2.5-72b-instruct", gpu="h100-sxm", weights="bf16", tp=4)
    assert sharded["fits"] is True
    assert sharded["n_gpu"] == sharded["n_inst"] * 4


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"rho": 0}, "rho"),
        ({"mem_util": 1.5}, "mem_util"),
        ({"tp": 0}, "tp"),
        ({"context": 0}, "context"),
    ],
)
def test_out_of_range_inputs_are_refused(change: dict, words: str) -> None:
    with pytest.raises(PlanError, match=words):
        plan(**{**Q1_AWQ, **change})


def test_unknown_catalogue_key() -> None:
    with pytest.raises(KeyError, match="Unknown GPU 'tpu-v5'"):
        plan(model="qwen2.5-7b", gpu="tpu-v5")


def test_chart_series() -> None:
    assert fleet_curve(r_inst_req_s=7.8125, rho=0.7, tp=2, qps_values=[0, 50, 100]) == [
        (0, 0), (50, 20), (100, 38)]  # fmt: skip
    assert kv_curve(kv_bytes_per_token=57344, contexts=[32768]) == [(32768, 1.75 * GiB)]


# The PD question's set-up: Llama-3.1-70B FP8 on one H200 per instance, 16k-token prompts, 4 QPS,
# a 50 ms TPOT SLO. Colocated, prefill stalls set the fleet (37 GPUs, not r_inst's 18); split,
# a prefill pool and a decode pool (19).
LONG_PROMPTS = dict(
    model="llama-3.1-70b-instruct", gpu="h200", weights="fp8", kv="fp8", context=32768,
    prompt_len=16000, out_len=300, qps=4, tpot_slo_ms=50,
)  # fmt: skip


def test_the_fleet_curve_sizes_a_stall_bound_plan_by_the_load_each_instance_carries() -> None:
    stalled = plan(**LONG_PROMPTS)
    assert stalled["binding"] == "stall" and stalled["n_gpu"] == 37
    rule = dict(r_inst_req_s=stalled["r_inst_req_s"], rho=0.7, tp=1)
    # r_inst alone asks for 18 GPUs: the chart drew that step under a headline of 37.
    assert fleet_curve(**rule, qps_values=[4]) == [(4, stalled["n_inst_rate"])] == [(4, 18)]
    loaded = fleet_curve(**rule, load_req_s=stalled["r_load_req_s"], qps_values=[4, 8])
    assert loaded[0] == (4, 37) and loaded[1][1] == math.ceil(8 / stalled["r_load_req_s"])


def test_the_fleet_curve_sizes_a_split_plan_as_its_two_pools() -> None:
    split = plan(**LONG_PROMPTS, pd_disagg=True)
    pools = split["pd"]
    assert split["n_gpu"] == pools["prefill_instances"] + pools["decode_instances"] == 19
    curve = fleet_curve(
        r_inst_req_s=split["r_inst_req_s"], rho=0.7, tp=1, prefill_s=pools["prefill_s"],
        r_decode_req_s=pools["r_decode_req_s"], qps_values=[4],
    )  # fmt: skip
    assert curve == [(4, 19)]


@pytest.mark.parametrize("hold_s", [60, 10**6])
def test_a_split_plan_sizes_its_decode_pool_with_the_measured_hold(hold_s: float) -> None:
    colocated = plan(**LONG_PROMPTS, hold_s=hold_s)
    split = plan(**LONG_PROMPTS, hold_s=hold_s, pd_disagg=True)
    steps = {step["name"]: step for step in split["steps"]}
    assert steps["t_dec"]["value"] == hold_s
    assert "measured hold" in steps["t_dec"]["label"]
    # A decode slot held hold_s: the same memory bound as the colocated plan's.
    assert split["pd"]["r_decode_req_s"] == pytest.approx(colocated["r_memory_req_s"])
    decode = math.ceil(4 / (0.7 * colocated["r_memory_req_s"]))
    assert split["pd"]["decode_instances"] == decode
    assert split["n_gpu"] == split["pd"]["prefill_instances"] + decode


def test_a_split_plans_note_says_a_measured_hold_sizes_its_decode_pool() -> None:
    (note,) = [n for n in plan(**LONG_PROMPTS, hold_s=60, pd_disagg=True)["notes"] if "PD" in n]
    assert "holds each stream for the measured hold time, 60 s" in note
    assert "only while it decodes" not in note
    (note,) = [n for n in plan(**LONG_PROMPTS, pd_disagg=True)["notes"] if "PD" in n]
    assert "holds a stream only while it decodes" in note and "measured" not in note


def test_a_split_plan_without_a_measured_hold_holds_a_slot_for_its_decode() -> None:
    split = plan(**LONG_PROMPTS, pd_disagg=True)
    steps = {step["name"]: step for step in split["steps"]}
    assert steps["t_dec"]["value"] == pytest.approx(300 * split["tpot_ms"] / 1000)


# --- catalogue ----------------------------------------------------------------------------------


def test_catalogue_holds_the_required_models_and_gpus() -> None:
    catalog = load_catalog()
    for name in [
        "Qwen2.5-7B-Instruct",
        "Qwen2.5-14B-Instruct",
        "Qwen2.5-32B-Instruct",
        "Qwen2.5-72B-Instruct",
        "Llama-3.1-8B-Instruct",
        "Llama-3.1-70B-Instruct",
    ]:
        catalog.model(name)
    for name in [
        "RTX 4090", "L4", "A100 40GB SXM", "A100 80GB SXM", "H100 SXM", "H100 PCIe", "H200 SXM"
    ]:  # fmt: skip
        catalog.gpu(name)
    assert set(catalog.weight_dtypes) == {"bf16", "fp8", "awq-int4"}
    assert set(catalog.kv_dtypes) == {"bf16", "fp8"}


def test_qwen_7b_config_figures() -> None:
    m = load_catalog().model("qwen2.5-7b")
    assert (m.layers, m.attention_heads, m.kv_heads, m.head_dim, m.hidden_size) == (
        28, 28, 4, 128, 3584)  # fmt: skip
    assert m.hidden_size == m.attention_heads * m.head_dim


@pytest.mark.parametrize("key", list(load_catalog().models))
def test_param_counts_follow_from_each_config(key: str) -> None:
    m = load_catalog().models[key]
    h, q_width, kv_width = m.hidden_size, m.attention_width, m.kv_heads * m.head_dim
    qkv_bias = key.startswith("qwen2.5")
    qk_norm = 2 * m.head_dim if key.startswith("qwen3") else 0
    attention = 2 * h * q_width + 2 * h * kv_width + ((q_width + 2 * kv_width) if qkv_bias else 0)

    def count(experts: int) -> int:
        if not m.is_moe:
            mlp = 3 * h * m.intermediate_size
        else:  # the routed experts and the router
            mlp = experts * 3 * h * (m.moe_intermediate_size or 0) + h * (m.experts or 0)
        return m.embedding_params + m.layers * (attention + qk_norm + mlp + 2 * h) + h

    assert m.params == count(m.experts or 0)
    assert m.params_per_token == count(m.experts_per_token or 0)


def test_gpu_memory_is_what_the_driver_reports_and_bandwidth_decimal() -> None:
    gpu = load_catalog().gpu("rtx-4090")
    assert float(gpu.memory.magnitude) == pytest.approx(23.65 * GiB)
    assert float(gpu.memory_datasheet.magnitude) == 24e9
    assert float(gpu.bandwidth.magnitude) == 1008e9


@pytest.mark.parametrize(
    ("key", "usable_gib", "datasheet_gb"),
    [
        ("rtx-4090", 23.65, 24),
        ("l4", 22.03, 24),
        ("a100-40gb", 39.49, 40),
        ("a100-80gb", 79.2, 80),
        ("h100-sxm", 79.2, 80),
        ("h100-pcie", 79.2, 80),
        ("h200", 139.8, 141),
        ("l40s", 44.53, 48),
    ],
)
def test_every_gpu_carries_usable_and_datasheet_memory(
    key: str, usable_gib: float, datasheet_gb: float
) -> None:
    gpu = load_catalog().gpus[key]
    assert float(gpu.memory.magnitude) == pytest.approx(usable_gib * GiB)
    assert float(gpu.memory_datasheet.magnitude) == datasheet_gb * 1e9


def test_every_gpu_entry_names_its_source() -> None:
    text = (DEFAULT_DIR / "gpus.yaml").read_text()
    for key in load_catalog().gpus:
        entry = text.split(f"\n  {key}:\n", 1)[1].split("\n    name:")[0]
        assert "# Datasheet:" in entry and "Usable:" in entry, key


def test_h100_pcie_is_hbm2e_at_2_tb_s() -> None:
    gpu = load_catalog().gpu("h100-pcie")
    assert float(gpu.bandwidth.magnitude) == 2.0e12
    assert gpu.bf16_tflops == 756
    # Qwen2.5-7B BF16 decodes ~40% slower than on the SXM card's 3.35 TB/s.
    pcie = plan(model="qwen2.5-7b", gpu="h100-pcie")["tpot_floor_ms"]
    sxm = plan(model="qwen2.5-7b", gpu="h100-sxm")["tpot_floor_ms"]
    assert pcie == pytest.approx(10.10, abs=0.01)
    assert pcie / sxm == pytest.approx(3350 / 2000)


def test_h100_alone_is_ambiguous() -> None:
    with pytest.raises(KeyError, match="h100-sxm .H100 SXM. or h100-pcie .H100 PCIe."):
        plan(model="qwen2.5-7b", gpu="h100")


@pytest.mark.parametrize(
    ("kind", "text", "key"),
    [
        ("gpu", "RTX 4090 (24 GB)", "rtx-4090"),
        ("gpu", "H100 SXM (80 GB), two per replica", "h100-sxm"),
        (
            "model",
            "Qwen2.5-7B-Instruct (one base) + hundreds of rank-16 LoRA adapters",
            "qwen2.5-7b-instruct",
        ),
        ("model", "gte-Qwen2-7B-instruct (embeddings)", None),
    ],
)
def test_a_briefs_wording_names_its_catalogue_entry(kind, text, key) -> None:
    entry = load_catalog().in_brief(kind, text)
    assert (entry.key if entry else None) == key


def test_the_knee_note_says_when_no_batch_meets_the_tpot_slo() -> None:
    # Qwen2.5-7B BF16 on an H100: one stream's step is 6.05 ms, over a 5 ms SLO. The note said
    # "1 streams / 6.049 ms per step, the largest batch whose step meets the 5 ms TPOT SLO".
    notes = plan(model="qwen2.5-7b", gpu="h100-sxm", prompt_len=512, tpot_slo_ms=5)["notes"]
    knee = next(note for note in notes if note.startswith("Knee:"))
    assert "= 1 stream / 6.049 ms per step: no batch meets the 5 ms TPOT SLO" in knee


def test_the_knee_note_derives_no_knee_when_no_stream_fits() -> None:
    # It said "1.482 tok/s = 1 streams / 674.7 ms per step, every stream that fits" of a plan
    # where none fits.
    notes = plan(model="llama-3.1-70b-instruct", gpu="l4", tp=1)["notes"]
    knee = next(note for note in notes if note.startswith("Knee:"))
    assert "no stream fits" in knee and "tok/s" not in knee
