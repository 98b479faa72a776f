"""What binds at long context and at scale: prefill compute and TTFT, the KV a decode step
reads at the planned batch, a knee derived per model, GPU and TP, non-KV memory by model size
and TP, cost, mixtures of experts, the prefix cache, and the speculative-decoding and PD
what-ifs."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from planner.engine import PlanError, load_catalog, plan
from planner.engine.capacity import overhead_bytes, prefill_flops, ttft_s

GiB = 1024**3
QWEN_128K = dict(model="qwen2.5-7b-instruct", gpu="h200", weights="bf16", kv="bf16",
                 context=131072, out_len=256, qps=1)  # fmt: skip


def _plan_json(*args: str) -> dict:
    out = StringIO()
    call_command("plan", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


# --- TTFT from prefill FLOPs ----------------------------------------------------------------


def test_plan_json_gives_ttft_tpot_binding_and_cost_and_the_128k_ttft_is_the_worked_figure():
    obj = _plan_json(
        "--model", "qwen2.5-7b-instruct", "--gpu", "h200", "--context", "131072",
        "--prompt-len", "130816", "--out-len", "256", "--qps", "1", "--prefill-eff", "0.5",
    )  # fmt: skip
    for key in ("ttft_ms", "prefill_flops", "prefill_eff", "tpot_ms", "binding",
                "cost_per_mtok_usd", "monthly_usd"):  # fmt: skip
        assert obj[key] is not None, key
    assert obj["binding"] in ("ttft", "tpot", "memory")
    assert obj["prefill_eff"] == 0.5
    # The worked figure: ~2.0e15 FLOP in the linear layers plus ~3.4e15 in causal
    # attention, at 50% of 989 TFLOPS: about 11 s.
    assert obj["ttft_ms"] == pytest.approx(11_000, rel=0.15)
    assert obj["prefill_flops"] == pytest.approx(5.13e15, rel=0.01)
    assert obj["ttft_ms"] == pytest.approx(obj["prefill_flops"] / (0.5 * 989.4e12) * 1000)


def test_prefill_flops_are_linear_layers_plus_causal_attention() -> None:
    m = load_catalog().model("qwen2.5-7b")
    linear = m.params - m.embedding_params  # 6.53e9: the model card's non-embedding figure
    flops = prefill_flops(linear_params=linear, attention_width=3584, layers=28,
                          prompt_tokens=131072)  # fmt: skip
    assert flops == pytest.approx(2 * linear * 131072 + 2 * 3584 * 28 * 131072**2)
    assert 2 * 3584 * 28 * 131072**2 == pytest.approx(3.45e15, rel=0.01)
    assert ttft_s(flops=5.4e15, tflops=989.4, efficiency=0.5) == pytest.approx(10.9, abs=0.05)


def test_the_prefill_efficiency_is_an_input() -> None:
    half = plan(**QWEN_128K)["ttft_ms"]
    assert plan(**QWEN_128K, prefill_eff=0.25)["ttft_ms"] == pytest.approx(2 * half)


# --- decode reads the KV of the batch it runs -----------------------------------------------


def test_decode_at_128k_reads_each_streams_7_gib_of_kv() -> None:
    result = plan(**QWEN_128K)
    assert result["tpot_floor_ms"] == pytest.approx(4.21, abs=0.01)  # the weights alone
    assert result["tpot_one_stream_ms"] == pytest.approx(6.45, abs=0.01)
    assert (result["max_seqs"], result["batch"]) == (15, 15)
    assert result["tpot_ms"] == pytest.approx(37.8, abs=0.1)
    # The old memory bound, 15 streams over 256 tokens at the 4.21 ms floor, was 13.9 req/s.
    assert 15 / (256 * 4.21e-3) / result["r_speed_req_s"] == pytest.approx(9, abs=0.1)


def test_a_tpot_slo_caps_the_batch_and_the_knee_follows() -> None:
    free = plan(**QWEN_128K)
    capped = plan(**QWEN_128K, tpot_slo_ms=20)
    assert capped["batch"] < free["batch"] and capped["tpot_ms"] <= 20
    assert capped["knee_source"] == "derived"
    assert capped["knee_tok_s"] == pytest.approx(capped["batch"] / capped["tpot_ms"] * 1000)


def test_a_measured_knee_is_used_as_given_and_the_plan_says_so() -> None:
    result = plan(**QWEN_128K, knee_tok_s=300)
    assert result["knee_source"] == "measured" and result["knee_tok_s"] == 300
    assert any("measured 300 tok/s" in note for note in result["notes"])
    assert any("Knee: derived" in note for note in plan(**QWEN_128K)["notes"])


def test_llama_70b_throughput_per_gpu_changes_with_tp() -> None:
    def per_gpu(tp: int, **kw: object) -> float:
        result = plan(model="llama-3.1-70b", tp=tp, prompt_len=2000, out_len=256, qps=20,
                      tpot_slo_ms=50, **kw)  # fmt: skip
        assert result["knee_source"] == "derived" and result["fits"]
        return result["r_inst_req_s"] / tp

    for kw in ({"gpu": "h200", "weights": "bf16"}, {"gpu": "h100-sxm", "weights": "fp8"}):
        # TP 4's larger batch and TP 2's fewer all-reduces come out near even per GPU; at
        # TP 8 the all-reduces' latency, 160 a step whatever the batch, costs about 15%.
        two, eight = per_gpu(2, **kw), per_gpu(8, **kw)
        assert eight < two / 1.1, kw
    # Not the one knee for every model and GPU: a 7B on a 4090 is planned on its own figures.
    small = plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", prompt_len=512)
    big = plan(model="llama-3.1-70b", gpu="h100-sxm", weights="fp8", tp=4, prompt_len=512)
    assert small["knee_tok_s"] != pytest.approx(big["knee_tok_s"], rel=0.05)


# --- memory ----------------------------------------------------------------------------------


def test_non_kv_overhead_follows_vllms_log_for_llama_3_8b() -> None:
    assert overhead_bytes(hidden_size=4096, tp=1) / GiB == pytest.approx(3.05)
    assert overhead_bytes(hidden_size=4096, tp=2) / GiB == pytest.approx(4.84)
    tp1 = plan(model="llama-3.1-8b", gpu="h100-sxm")
    tp2 = plan(model="llama-3.1-8b", gpu="h100-sxm", tp=2)
    assert tp1["overhead_source"] == "derived"
    # vLLM's log on a 79.22 GiB card: 71.29 − 14.96 − 3.05 = 53.29 GiB of KV at TP = 1.
    assert tp1["kv_pool_bytes"] / GiB == pytest.approx(53.29, abs=0.05)
    assert tp2["overhead_bytes"] / GiB == pytest.approx(4.84)
    given = plan(model="llama-3.1-8b", gpu="h100-sxm", overhead_gib=1.5)
    assert given["overhead_source"] == "given"
    assert given["kv_pool_bytes"] / tp1["kv_pool_bytes"] == pytest.approx(1.029, abs=0.002)


def test_kv_is_held_for_the_tokens_in_flight_capped_by_the_context() -> None:
    chat = plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", prompt_len=512)
    assert chat["tokens_per_stream"] == 768
    reserved = plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4")
    assert reserved["tokens_per_stream"] == 8192
    assert chat["max_seqs"] >= 10 * reserved["max_seqs"]
    with pytest.raises(PlanError, match="do not fit in a context of 8,192"):
        plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", prompt_len=8000)


def test_a_mean_above_the_peak_is_refused_on_its_own_input() -> None:
    with pytest.raises(PlanError, match="A mean of 100 QPS is above the peak of 50 QPS") as refused:
        plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", qps=50, mean_qps=100)
    assert refused.value.field == "mean_qps"
    # A mean equal to the peak is a flat load, and plans.
    assert plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", qps=50, mean_qps=50)


# --- cost ------------------------------------------------------------------------------------


def test_cost_per_million_tokens_and_month_at_peak_and_autoscaled_to_the_mean() -> None:
    result = plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", prompt_len=512,
                  qps=50, mean_qps=20, tpot_slo_ms=50)  # fmt: skip
    price = load_catalog().gpu("rtx-4090").usd_per_hour
    assert result["usd_per_gpu_hour"] == price and result["price_date"] == "2026-03"
    assert result["monthly_usd"] == pytest.approx(result["n_gpu"] * price * 730)
    tokens_per_hour = 50 * 256 * 3600
    assert result["cost_per_mtok_usd"] == pytest.approx(
        result["n_gpu"] * price / tokens_per_hour * 1e6
    )
    assert result["monthly_mean_usd"] == pytest.approx(result["n_gpu_mean"] * price * 730)
    assert result["n_gpu_mean"] < result["n_gpu"]
    assert result["autoscaling_saving_usd"] == pytest.approx(
        result["monthly_usd"] - result["monthly_mean_usd"]
    )
    mine = plan(model="qwen2.5-7b", gpu="rtx-4090", weights="awq-int4", prompt_len=512,
                usd_per_gpu_hour=1.2)  # fmt: skip
    assert mine["usd_per_gpu_hour"] == 1.2 and mine["price_date"] is None


def test_every_gpu_has_a_dated_sourced_price() -> None:
    from planner.engine.catalog import DEFAULT_DIR

    text = (DEFAULT_DIR / "gpus.yaml").read_text()
    for key, gpu in load_catalog().gpus.items():
        assert gpu.usd_per_hour and gpu.usd_per_hour_date, key
        entry = text.split(f"\n  {key}:\n", 1)[1].split("\n    name:")[0]
        assert "# Price: https://" in entry, key


# --- mixture of experts ----------------------------------------------------------------------


def test_mixtral_holds_its_total_parameters_and_reads_its_active_ones_at_the_floor() -> None:
    m = load_catalog().model("mixtral-8x7b")
    assert (m.params, m.active_params, m.experts, m.experts_per_token) == (
        46702792704, 12879925248, 8, 2)  # fmt: skip
    result = plan(model="mixtral-8x7b", gpu="h100-sxm", tp=2, prompt_len=1000, out_len=200)
    assert result["weights_bytes"] == 2 * m.params  # BF16, all experts in memory
    active_read = 2 * (m.params_per_token - m.unread_embedding_params)
    assert result["weights_read_per_step_bytes"] == active_read
    assert result["tpot_floor_ms"] == pytest.approx(active_read / (2 * 0.7 * 3350e9) * 1000)
    # At a batch of hundreds every expert is read each step.
    steps = {s["name"]: s for s in result["steps"]}
    assert steps["f_exp"]["value"] == pytest.approx(1, abs=1e-6)


def test_an_moe_that_tp_alone_cannot_hold_notes_expert_parallelism() -> None:
    result = plan(model="mixtral-8x7b", gpu="h100-sxm", tp=1)
    assert result["reason"].startswith("The weights alone do not fit")
    assert any("--enable-expert-parallel" in note for note in result["notes"])


def test_qwen3_moe_is_in_the_catalogue() -> None:
    m = load_catalog().model("qwen3-30b-a3b")
    assert (m.experts, m.experts_per_token, m.attention_width) == (128, 8, 4096)
    assert m.active_params == pytest.approx(3.3e9, rel=0.02)


# --- the prefix cache ------------------------------------------------------------------------


def test_a_90_percent_hit_on_a_30k_prefix_brings_ttft_to_the_unique_suffix() -> None:
    m = load_catalog().model("qwen2.5-7b")
    result = plan(model="qwen2.5-7b", gpu="h200", context=32768, prompt_len=32000, out_len=256,
                  prefix_hit=0.9, prefix_len=30000)  # fmt: skip
    suffix = prefill_flops(linear_params=m.params - m.embedding_params, attention_width=3584,
                           layers=28, prompt_tokens=32000, cached_tokens=30000)  # fmt: skip
    suffix_ms = ttft_s(flops=suffix, tflops=989.4, efficiency=0.5) * 1000
    assert result["ttft_ms"] == pytest.approx(suffix_ms, rel=0.01)
    assert result["ttft_ms"] < 0.1 * result["ttft_miss_ms"]
    # One request in ten misses, so the p99 is a cold prefill.
    assert result["ttft_p99_ms"] == result["ttft_miss_ms"]
    assert any("p99" in note for note in result["notes"])


def test_a_token_hit_rate_prefills_only_the_uncached_share() -> None:
    cold = plan(model="qwen2.5-7b", gpu="h200", context=32768, prompt_len=32000)
    warm = plan(model="qwen2.5-7b", gpu="h200", context=32768, prompt_len=32000, prefix_hit=0.5)
    assert warm["ttft_ms"] < cold["ttft_ms"] and warm["ttft_p99_ms"] == warm["ttft_ms"]
    with pytest.raises(PlanError, match="below 1"):
        plan(model="qwen2.5-7b", gpu="h200", prompt_len=1000, prefix_hit=1)


def test_a_ttft_slo_a_long_cold_prefill_misses_binds() -> None:
    result = plan(**QWEN_128K, ttft_slo_ms=2000)
    assert (result["binding"], result["feasible"]) == ("ttft", False)
    assert "p99 TTFT" in result["reason"]


def test_chunked_prefill_is_noted_when_it_breaks_the_tpot_slo() -> None:
    result = plan(**QWEN_128K, tpot_slo_ms=50)
    note = next(n for n in result["notes"] if n.startswith("Chunked prefill"))
    assert "16 chunks" in note and "over the 50 ms TPOT SLO" in note


# --- what-ifs --------------------------------------------------------------------------------


def test_speculative_decoding_lowers_tpot_while_the_step_is_memory_bound() -> None:
    base = dict(model="qwen2.5-7b", gpu="h200", context=32768, prompt_len=4000, out_len=256)
    plain = plan(**base, tpot_slo_ms=10)
    spec = plan(**base, tpot_slo_ms=10, spec_decode=True, spec_accept=0.8, spec_tokens=4)
    expected_tokens = (1 - 0.8**5) / (1 - 0.8)
    assert spec["spec_decode"]["tokens_per_step"] == pytest.approx(expected_tokens)
    assert spec["knee_tok_s"] > plain["knee_tok_s"]
    assert any("Speculative decoding (what-if)" in n for n in spec["notes"])


def test_pd_disaggregation_sizes_prefill_and_decode_pools_separately() -> None:
    result = plan(model="qwen2.5-7b", gpu="h200", context=32768, prompt_len=8000, out_len=256,
                  qps=20, tpot_slo_ms=30, pd_disagg=True)  # fmt: skip
    pd = result["pd"]
    assert result["n_inst"] == pd["prefill_instances"] + pd["decode_instances"]
    steps = {s["name"]: s["value"] for s in result["steps"]}
    prefill_s = result["ttft_miss_ms"] / 1000
    assert pd["prefill_instances"] == -(-20 * prefill_s // 0.7)
    assert steps["N_dec"] == pd["decode_instances"]


def test_the_derivation_shows_the_new_figures_with_their_formulas() -> None:
    steps = {s["name"]: s for s in plan(**QWEN_128K, mean_qps=0.5)["steps"]}
    for name in ("overhead", "n_flight", "t_mem", "t_tok", "T_out", "F_cold", "ttft_cold",
                 "r_prefill", "cost_mtok", "monthly", "monthly_mean", "saving"):  # fmt: skip
        assert steps[name]["formula_latex"] and steps[name]["substituted"], name
    assert "130816" in steps["F_cold"]["substituted"]  # the prompt: the context less the output


def test_a_shared_prefix_longer_than_the_prompt_is_refused() -> None:
    base = {"model": "qwen2.5-7b-instruct", "gpu": "h100-sxm", "qps": 10}
    with pytest.raises(PlanError, match="longer than the mean prompt of 512 tokens"):
        plan(**base, prompt_len=512, prefix_hit=1, prefix_len=513)
    with pytest.raises(PlanError, match=r"longer than the prompt \(the context less the output\)"):
        plan(**base, context=8192, out_len=256, prefix_hit=0.5, prefix_len=8000)
    plan(**base, prompt_len=512, prefix_hit=1, prefix_len=512)  # the whole prompt: planned
