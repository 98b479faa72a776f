"""The capacity planner's form: catalogue choices and the SLO knobs, with the seed's Q1
(Qwen2.5-7B AWQ on an RTX 4090, 50 QPS peak) as defaults."""

from __future__ import annotations

from django import forms

from planner.engine import PlanError, load_catalog
from planner.engine.capacity import DEFAULT_OVERHEAD_GIB, check_context

DEFAULTS = {
    "model": "qwen2.5-7b-instruct",
    "gpu": "rtx-4090",
    "weights": "awq-int4",
    "kv": "bf16",
    "context": 8192,
    "mem_util": 0.9,
    "bw_eff": 0.7,
    "tp": 1,
    "knee_tok_s": 2000,
    "out_len": 256,
    "qps": 50,
    "rho": 0.7,
    "tpot_slo_ms": 50,
    "overhead_gib": DEFAULT_OVERHEAD_GIB,
    "hold_s": None,
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
        label="Measured knee throughput (tok/s)", min_value=0.001, max_value=1e9
    )
    out_len = forms.FloatField(label="Mean output length (tokens)", min_value=1, max_value=1e7)
    qps = forms.FloatField(label="Peak QPS", min_value=0.0001, max_value=1e9)
    rho = forms.FloatField(label="Utilisation target ρ", min_value=0.01, max_value=1)
    tpot_slo_ms = forms.FloatField(
        label="p99 TPOT SLO (ms)", required=False, min_value=0.001, max_value=1e6
    )
    overhead_gib = forms.FloatField(
        label="Non-KV overhead per GPU (GiB)", min_value=0, max_value=1e4
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
        """The model's context limit, and an output that fits in the context: the same
        refusal as `plan`, shown beside the field at fault."""
        data = super().clean()
        if all(data.get(name) is not None for name in ("model", "context", "out_len")):
            try:
                check_context(load_catalog().model(data["model"]), data["context"], data["out_len"])
            except PlanError as error:
                self.add_error(error.field, str(error))
        return data
