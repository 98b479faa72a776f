"""The capacity planner's form: catalogue choices and the SLO knobs, with the seed's Q1
(Qwen2.5-7B AWQ on an RTX 4090, 50 QPS peak) as defaults."""

from __future__ import annotations

from django import forms

from planner.engine import PlanError, load_catalog
from planner.engine.capacity import (
    DEFAULT_PREFILL_EFF,
    DEFAULT_SPEC_ACCEPT,
    DEFAULT_SPEC_DRAFT_COST,
    DEFAULT_SPEC_TOKENS,
    check_context,
)

DEFAULTS = {
    "model": "qwen2.5-7b-instruct",
    "gpu": "rtx-4090",
    "weights": "awq-int4",
    "kv": "bf16",
    "context": 8192,
    "mem_util": 0.9,
    "bw_eff": 0.7,
    "tp": 1,
    "knee_tok_s": None,  # derived from the decode step; type a measured one to plan on it
    "prompt_len": 512,
    "out_len": 256,
    "qps": 50,
    "mean_qps": None,
    "rho": 0.7,
    "tpot_slo_ms": 50,
    "ttft_slo_ms": None,
    "overhead_gib": None,  # derived from the model size and TP
    "hold_s": None,
    "prefill_eff": DEFAULT_PREFILL_EFF,
    "prefix_hit": 0,
    "prefix_len": None,
    "usd_per_gpu_hour": None,  # the catalogue's dated list price
    "spec_decode": False,
    "spec_accept": DEFAULT_SPEC_ACCEPT,
    "spec_tokens": DEFAULT_SPEC_TOKENS,
    "spec_draft_cost": DEFAULT_SPEC_DRAFT_COST,
    "pd_disagg": False,
}


def _choices(table: dict) -> list[tuple[str, str]]:
    return [(key, entry.name) for key, entry in table.items()]


class CapacityForm(forms.Form):
    model = forms.ChoiceField(label="Model")
    gpu = forms.ChoiceField(label="GPU")
    weights = forms.ChoiceField(label="Weights dtype")
    kv = forms.ChoiceField(label="KV-cache dtype")
    context = forms.IntegerField(label="Context length (tokens)", min_value=1, max_value=10**7)
    mem_util = forms.FloatField(label="GPU memory utilisation", min_value=0.01, max_value=1)
    bw_eff = forms.FloatField(label="Bandwidth efficiency η", min_value=0.01, max_value=1)
    tp = forms.IntegerField(
        label="Tensor parallelism (GPUs per instance)", min_value=1, max_value=64
    )
    knee_tok_s = forms.FloatField(
        label="Measured knee throughput (tok/s; blank: derived from the TPOT SLO)",
        required=False,
        min_value=0.001,
        max_value=1e9,
    )
    prompt_len = forms.FloatField(
        label="Mean prompt length (tokens; blank: the prompt fills the context)",
        required=False,
        min_value=1,
        max_value=1e7,
    )
    out_len = forms.FloatField(label="Mean output length (tokens)", min_value=1, max_value=1e7)
    qps = forms.FloatField(label="Peak QPS", min_value=0.0001, max_value=1e9)
    mean_qps = forms.FloatField(
        label="Mean QPS (for the autoscaled cost; optional)",
        required=False,
        min_value=0.0001,
        max_value=1e9,
    )
    rho = forms.FloatField(label="Utilisation target ρ", min_value=0.01, max_value=1)
    tpot_slo_ms = forms.FloatField(
        label="p99 TPOT SLO (ms)", required=False, min_value=0.001, max_value=1e6
    )
    ttft_slo_ms = forms.FloatField(
        label="p99 TTFT SLO (ms; optional)", required=False, min_value=0.001, max_value=1e7
    )
    overhead_gib = forms.FloatField(
        label="Non-KV overhead per GPU (GiB; blank: derived from the model size and TP)",
        required=False,
        min_value=0,
        max_value=1e4,
    )
    prefill_eff = forms.FloatField(
        label="Prefill efficiency (share of the GPU's dense TFLOPS)", min_value=0.01, max_value=1
    )
    prefix_hit = forms.FloatField(label="Prefix-cache hit rate (0–1)", min_value=0, max_value=1)
    prefix_len = forms.FloatField(
        label="Shared prefix (tokens a hit skips; blank: the hit rate is per token)",
        required=False,
        min_value=1,
        max_value=1e7,
    )
    usd_per_gpu_hour = forms.FloatField(
        label="GPU price (USD per GPU-hour; blank: the catalogue's list price)",
        required=False,
        min_value=0,
        max_value=1e4,
    )
    spec_decode = forms.BooleanField(label="What if: speculative decoding", required=False)
    spec_accept = forms.FloatField(
        label="Speculation: acceptance rate per drafted token", min_value=0, max_value=0.99
    )
    spec_tokens = forms.IntegerField(
        label="Speculation: tokens drafted per step", min_value=1, max_value=16
    )
    spec_draft_cost = forms.FloatField(
        label="Speculation: draft step cost (share of a target step)", min_value=0, max_value=1
    )
    pd_disagg = forms.BooleanField(
        label="What if: prefill/decode disaggregation (pools sized separately)", required=False
    )
    hold_s = forms.FloatField(
        label="Measured time a request holds its KV slot (s; blank: its decode at the floor)",
        required=False,
        min_value=0.001,
        max_value=1e6,
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        catalog = load_catalog()
        self.fields["model"].choices = _choices(catalog.models)
        self.fields["gpu"].choices = _choices(catalog.gpus)
        self.fields["weights"].choices = _choices(catalog.weight_dtypes)
        self.fields["kv"].choices = _choices(catalog.kv_dtypes)
        for name, field in self.fields.items():
            field.widget.attrs.setdefault("id", f"id_{name}")
            if isinstance(field, forms.FloatField):
                field.widget.attrs["step"] = "any"

    def clean(self) -> dict:
        """The model's context limit, an output and a prompt that fit in the context, and a
        per-token hit rate below 1: the same refusals as `plan`, beside the field at fault."""
        data = super().clean()
        if all(data.get(name) is not None for name in ("model", "context", "out_len")):
            try:
                check_context(load_catalog().model(data["model"]), data["context"], data["out_len"])
            except PlanError as error:
                self.add_error(error.field, str(error))
            else:
                prompt = data.get("prompt_len")
                if prompt is not None and prompt + data["out_len"] > data["context"]:
                    self.add_error(
                        "prompt_len",
                        f"A prompt of {prompt:g} tokens and an output of {data['out_len']:g} "
                        f"do not fit in a context of {data['context']} tokens.",
                    )
        hit = data.get("prefix_hit")
        if hit is not None and hit >= 1 and data.get("prefix_len") is None:
            self.add_error(
                "prefix_hit",
                "A per-token hit rate must stay below 1 (the last prompt token is always "
                "computed); give a shared prefix length for a per-request rate.",
            )
        return data
