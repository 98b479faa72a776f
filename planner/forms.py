"""The capacity planner's form: catalogue choices and the SLO knobs, with the seed's Q1
(Qwen2.5-7B AWQ on an RTX 4090, 50 QPS peak) as defaults."""

from __future__ import annotations

import math
import re

from django import forms
from django.core.exceptions import ValidationError
from django.http import QueryDict

from planner.engine import PlanError, foreign_digit, format_figure, load_catalog
from planner.engine.capacity import (
    DEFAULT_PREFILL_EFF,
    DEFAULT_PROMPT_SPREAD,
    DEFAULT_SPEC_ACCEPT,
    DEFAULT_SPEC_DRAFT_COST,
    DEFAULT_SPEC_TOKENS,
    INPUT_LIMITS,
    INPUT_MEANINGS,
    check_context,
    check_prompt,
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
    "prompt_spread": DEFAULT_PROMPT_SPREAD,
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


SPEC_FIELDS = ("spec_accept", "spec_tokens", "spec_draft_cost")


def _within(name: str) -> dict[str, object]:
    """The bounds of the planner input `name` (the engine's INPUT_LIMITS) and the sentences
    that refuse a number outside them: one table for the form and the engine, so the page
    refuses exactly what `plan` would. Where the bounds alone would not say what the number
    means (INPUT_MEANINGS), the sentence says it."""
    low, high, _unit = INPUT_LIMITS[name]
    if name in INPUT_MEANINGS:
        meaning = (
            f"Give a number from {format_figure(low)} to {format_figure(high)}: "
            f"{INPUT_MEANINGS[name]}."
        )
        messages = {"min_value": meaning, "max_value": meaning}
    else:
        messages = {
            "min_value": f"Ensure this value is greater than or equal to {format_figure(low)}.",
            "max_value": f"Ensure this value is less than or equal to {format_figure(high)}.",
        }
    return {"min_value": low, "max_value": high, "error_messages": messages}


# A number written out in the digits 0-9: a sign, digits with a point, an exponent.
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)


class _AsciiDigits:
    """A number field that reads only the digits 0-9 (`foreign_digit` says why)."""

    def to_python(self, value: object) -> object:
        if isinstance(value, str) and foreign_digit(value):
            raise ValidationError("Use the digits 0–9.", code="digits")
        return super().to_python(value)  # type: ignore[misc]


class PlannerIntegerField(_AsciiDigits, forms.IntegerField):
    def to_python(self, value: object) -> int | None:
        # A whole number past a double's range (1e400, or ten thousand digits, which int()
        # refuses to read) is a number out of the field's range, as the float fields say.
        try:
            return super().to_python(value)
        except ValidationError:
            text = value.strip() if isinstance(value, str) else ""
            if not _NUMBER.fullmatch(text) or not math.isinf(float(text)):
                raise
            code = "max_value" if float(text) > 0 else "min_value"
            raise ValidationError(self.error_messages[code], code=code) from None


class PlannerFloatField(_AsciiDigits, forms.FloatField):
    def validate(self, value: float | None) -> None:
        # float() reads a number past a double's range (1e400) as infinity, which Django
        # calls "Enter a number.": it is a number, only out of the field's range.
        if value is not None and math.isinf(value):
            code = "max_value" if value > 0 else "min_value"
            raise ValidationError(self.error_messages[code], code=code)
        super().validate(value)


def _refusals(field: forms.Field) -> dict[str, str]:
    """The sentences this field refuses a number with, for capacity.js to show where the
    browser keeps a value from being sent at all (out of range, blank, not a number): the page
    then says what the server would. A number the browser cannot read may be one in other
    digits, which the server refuses by saying so."""
    messages = field.error_messages
    return {
        "data-message-min": str(messages["min_value"]),
        "data-message-max": str(messages["max_value"]),
        "data-message-required": str(messages["required"]),
        "data-message-invalid": f"{str(messages['invalid']).rstrip('.')}, in the digits 0–9.",
    }


def _choices(table: dict) -> list[tuple[str, str]]:
    return [(key, entry.name) for key, entry in table.items()]


class CapacityForm(forms.Form):
    model = forms.ChoiceField(label="Model")
    gpu = forms.ChoiceField(label="GPU")
    weights = forms.ChoiceField(label="Weights dtype")
    kv = forms.ChoiceField(label="KV-cache dtype")
    context = PlannerIntegerField(label="Context length (tokens)", **_within("context"))
    mem_util = PlannerFloatField(label="GPU memory utilisation", **_within("mem_util"))
    bw_eff = PlannerFloatField(label="Bandwidth efficiency η", **_within("bw_eff"))
    tp = PlannerIntegerField(label="Tensor parallelism (GPUs per instance)", **_within("tp"))
    knee_tok_s = PlannerFloatField(
        label="Measured knee throughput (tok/s; blank: derived from the TPOT SLO)",
        required=False,
        **_within("knee_tok_s"),
    )
    prompt_len = PlannerFloatField(
        label="Mean prompt length (tokens; blank: the prompt fills the context)",
        required=False,
        **_within("prompt_len"),
    )
    # Out of range, the sentence says what the number means, not only its bounds.
    prompt_spread = PlannerFloatField(
        label="Prompt length spread (± share of the mean, uniform; 0.5: half to 1.5× the mean, "
        "as the simulator draws them)",
        **_within("prompt_spread"),
    )
    out_len = PlannerFloatField(label="Mean output length (tokens)", **_within("out_len"))
    qps = PlannerFloatField(label="Peak QPS", **_within("qps"))
    mean_qps = PlannerFloatField(
        label="Mean QPS (for the autoscaled cost; optional)", required=False, **_within("mean_qps")
    )
    rho = PlannerFloatField(label="Utilisation target ρ", **_within("rho"))
    tpot_slo_ms = PlannerFloatField(
        label="p99 TPOT SLO (ms)", required=False, **_within("tpot_slo_ms")
    )
    ttft_slo_ms = PlannerFloatField(
        label="p99 TTFT SLO (ms; optional)", required=False, **_within("ttft_slo_ms")
    )
    overhead_gib = PlannerFloatField(
        label="Non-KV overhead per GPU (GiB; blank: derived from the model size and TP)",
        required=False,
        **_within("overhead_gib"),
    )
    prefill_eff = PlannerFloatField(
        label="Compute efficiency: share of the GPU's dense TFLOPS that prefill and a "
        "compute-bound decode step reach",
        **_within("prefill_eff"),
    )
    prefix_hit = PlannerFloatField(label="Prefix-cache hit rate (0–1)", **_within("prefix_hit"))
    prefix_len = PlannerFloatField(
        label="Shared prefix (tokens a hit skips; blank: the hit rate is per token)",
        required=False,
        **_within("prefix_len"),
    )
    usd_per_gpu_hour = PlannerFloatField(
        label="GPU price (USD per GPU-hour; blank: the catalogue's list price)",
        required=False,
        **_within("usd_per_gpu_hour"),
    )
    spec_decode = forms.BooleanField(label="What if: speculative decoding", required=False)
    # Read only with speculation on (see clean()).
    spec_accept = PlannerFloatField(
        label="Speculation: acceptance rate per drafted token",
        required=False,
        **_within("spec_accept"),
    )
    spec_tokens = PlannerIntegerField(
        label="Speculation: tokens drafted per step", required=False, **_within("spec_tokens")
    )
    spec_draft_cost = PlannerFloatField(
        label="Speculation: draft step cost (share of a target step)",
        required=False,
        **_within("spec_draft_cost"),
    )
    pd_disagg = forms.BooleanField(
        label="What if: prefill/decode disaggregation (pools sized separately)", required=False
    )
    hold_s = PlannerFloatField(
        label="Measured time a request holds its KV slot (s; blank: its decode at the floor)",
        required=False,
        **_within("hold_s"),
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
            if isinstance(field, forms.IntegerField | forms.FloatField):
                field.widget.attrs |= _refusals(field)

    def clean(self) -> dict:
        """The model's context limit, an output and a prompt that fit in the context, a shared
        prefix within the prompt, and a per-token hit rate below 1: the same refusals as
        `plan`, beside the field at fault."""
        data = super().clean()
        if all(data.get(name) is not None for name in ("model", "context", "out_len")):
            try:
                check_context(load_catalog().model(data["model"]), data["context"], data["out_len"])
            except PlanError as error:
                self.add_error(error.field, str(error))
            else:
                try:
                    check_prompt(
                        context=data["context"],
                        out_len=data["out_len"],
                        prompt_len=data.get("prompt_len"),
                        prefix_len=data.get("prefix_len"),
                    )
                except PlanError as error:
                    if error.field not in self.errors:
                        self.add_error(error.field, str(error))
        for name in SPEC_FIELDS:
            if data.get(name) is None and name not in self.errors:
                # Left blank with speculation on: asked for. Otherwise (speculation off, or a
                # link made before the field existed) the default stands.
                if data.get("spec_decode") and name in self.data:
                    self.add_error(name, "Give this to plan with speculative decoding.")
                else:
                    data[name] = DEFAULTS[name]
        hit = data.get("prefix_hit")
        if hit is not None and hit >= 1 and data.get("prefix_len") is None:
            self.add_error(
                "prefix_hit",
                "A per-token hit rate must stay below 1 (the last prompt token is always "
                "computed); give a shared prefix length for a per-request rate.",
            )
        return data


def in_field_words(message: str, name: str | None) -> str:
    """An engine refusal that opens with the name of the input it refuses ("overhead_gib must
    be ..."), as the page says it: that field's label up to its note in brackets ("Non-KV
    overhead per GPU must be ..."). The engine names its arguments, which the page never
    shows; any other message is returned as it is."""
    field = CapacityForm.base_fields.get(name or "")
    if field is None or not message.startswith(f"{name} "):
        return message
    label = str(field.label).split(" (")[0]
    return label + message[len(name) :]


def plan_query(form: CapacityForm) -> str:
    """The inputs `form` plans with, as a query string: what the page shows, whether it came
    from the request or from the defaults and a question's brief, so that a link to another
    view of the same plan (the simulator) plans the same fleet."""
    query = QueryDict(mutable=True)
    for name in form.fields:
        value = form[name].value()
        if value is None or value == "" or value is False:
            continue
        query[name] = "on" if value is True else str(value)
    return query.urlencode()
