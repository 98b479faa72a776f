"""The capacity planner as an engineer sizing a fleet meets it: hostile numbers, a mixture of
experts at a large batch, a hand-edited question in the address, a phone-width page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client

from planner.forms import DEFAULTS

ROOT = Path(__file__).resolve().parents[2]
CAPACITY = "/planner/capacity/"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()


def _query(**changes: object) -> dict[str, str]:
    """The default plan's inputs as the form submits them, with `changes`."""
    query = {
        name: ("on" if value is True else str(value))
        for name, value in DEFAULTS.items()
        if value is not None and value is not False
    }
    query.update({name: str(value) for name, value in changes.items()})
    return query


@pytest.mark.parametrize(
    ("field", "extra"),
    [
        ("prefix_hit", {}),
        ("usd_per_gpu_hour", {}),
        ("overhead_gib", {}),
        ("spec_accept", {"spec_decode": "on"}),
        ("spec_draft_cost", {"spec_decode": "on"}),
    ],
)
def test_a_tiny_nonzero_input_is_refused_beside_its_field_not_a_500(
    client: Client, field: str, extra: dict
) -> None:
    """1e-200 passed the form's 0 lower bound and the engine refused it deep inside with a
    NapkinError nobody caught: a 500."""
    response = client.get(CAPACITY, _query(**{field: "1e-200"}, **extra))
    assert response.status_code == 200
    # The planner page's own context: a live server thread rendering another page meanwhile
    # (a browser test's poll) adds its contexts to this response's too.
    form = next(c["form"] for c in response.context if "plan_query" in c)
    assert field in form.errors
    assert "0 or at least 0.001" in form.errors[field][0]
    assert response.context["result"] is None


def test_the_smallest_nonzero_input_plans(client: Client) -> None:
    response = client.get(
        CAPACITY, _query(prefix_hit="0.001", usd_per_gpu_hour="0.001", spec_decode="on",
                         spec_accept="0.001", spec_draft_cost="0.001", overhead_gib="0.001"),
    )  # fmt: skip
    assert response.status_code == 200
    assert response.context["result"] is not None, response.context["form"].errors


def test_a_mixture_of_experts_at_a_large_batch_is_not_a_500(client: Client) -> None:
    """Mixtral on eight RTX 4090s with FP8 weights plans a batch of over a thousand streams;
    the engine's share of experts touched, (1 - 2/8)^N_batch, fell under its 1e-100 floor and
    its NapkinError escaped the view: a 500. The power now stops where it is nothing anyway,
    so the plan is made: every expert is read."""
    response = client.get(
        CAPACITY,
        # An 80 ms TPOT SLO: at 50 ms the step's all-reduces over PCIe cap the batch near 600.
        _query(model="mixtral-8x7b-instruct", weights="fp8", kv="fp8", tp=8, tpot_slo_ms=80),
    )
    assert response.status_code == 200
    result = response.context["result"]
    assert result is not None and result["batch"] > 1000
    assert {s["name"]: s["value"] for s in result["steps"]}["f_exp"] == 1


def test_the_plan_command_refuses_a_tiny_input_naming_its_option() -> None:
    out = subprocess.run(
        [sys.executable, "manage.py", "plan", "--prefix-hit", "1e-200", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr[-2000:]
    error = json.loads(out.stdout)["error"]
    assert error.startswith("--prefix-hit ") and "0 or at least 0.001" in error


def test_an_unknown_question_in_the_address_is_named(client: Client, content_loaded) -> None:
    """?question=typo silently planned the defaults, as if the question had been read."""
    response = client.get(CAPACITY, {"question": "chat-api-5oqps"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "There is no question &#x27;chat-api-5oqps&#x27;" in html
    assert "planner starts from its defaults" in html
    known = client.get(CAPACITY, {"question": "chat-api-50qps"}).content.decode()
    assert "There is no question" not in known


@pytest.mark.browser
@pytest.mark.one_database
def test_the_bounds_stay_readable_at_phone_width(browser, live_server_url) -> None:
    """At 360 px the four bounds sat in three columns, breaking '22.33 req/s' and
    'throughput' in the middle of words."""
    context = browser.new_context(viewport={"width": 360, "height": 800})
    page = context.new_page()
    page.goto(f"{live_server_url}{CAPACITY}")
    values = page.locator("#plan-bounds .pl-bound-value")
    assert values.count() >= 3
    for index in range(values.count()):
        box = values.nth(index).bounding_box()
        assert box is not None and box["height"] < 40, (index, box)  # one line, not three
    context.close()


def test_a_plan_where_nothing_fits_times_no_decode_step(client: Client) -> None:
    """A 70B model in BF16 on one L4 holds no stream: the page showed '663 ms TPOT at a batch of
    1' beside '0 concurrent streams', and a note about 'the planned batch of 1 streams'."""
    response = client.get(CAPACITY, _query(model="llama-3.1-70b-instruct", gpu="l4", tp=1))
    result = response.context["result"]
    assert result is not None and not result["fits"]
    html = response.content.decode()
    assert "TPOT: no stream fits" in html and "ms TPOT at a batch of" not in html
    assert not any("planned batch of" in note for note in result["notes"])


def test_a_tp_that_splits_the_kv_heads_but_not_the_attention_heads_is_refused(
    client: Client,
) -> None:
    """TP = 8 on Qwen2.5-7B (28 query heads, 4 KV heads) planned 32 GPUs, a fleet vLLM refuses
    to start ("Total number of attention heads (28) must be divisible by tensor parallel
    size (8)"). The refusal sits beside the TP field and names the sizes that work."""
    response = client.get(CAPACITY, _query(gpu="h100-sxm", tp=8))
    assert response.status_code == 200
    assert response.context["result"] is None
    error = response.context["form"].errors["tp"][0]
    assert "28 attention heads" in error and error.endswith("1, 2, 4 or 28.")


LONG_PROMPTS = _query(
    model="llama-3.1-70b-instruct", gpu="h200", weights="fp8", kv="fp8", context=32768,
    prompt_len=16000, out_len=300, qps=4, tpot_slo_ms=50,
)  # fmt: skip


@pytest.mark.parametrize(("split", "gpus"), [(False, 37), (True, 19)])
def test_the_fleet_chart_marks_the_gpus_the_plan_headlines(
    client: Client, split: bool, gpus: int
) -> None:
    """Prefill stalls (37 GPUs) and a prefill/decode split (19) size the fleet by another rule
    than ⌈λ / (ρ r_inst)⌉; the chart beside the headline said '4 QPS → 18 GPUs' for both."""
    query = dict(LONG_PROMPTS, **({"pd_disagg": "on"} if split else {}))
    response = client.get(CAPACITY, query)
    assert response.context["result"]["n_gpu"] == gpus
    html = response.content.decode()
    assert f"Fleet size against peak QPS: 4 QPS → {gpus} GPUs</figcaption>" in html


def test_the_kv_chart_marks_the_stream_the_plan_holds_and_a_full_context(client: Client) -> None:
    """The KV chart put the plan at the 8192-token context (0.4375 GiB) while the plan's
    streams hold 512 + 256 tokens (42 MiB): its point disagreed with the derivation."""
    response = client.get(CAPACITY, _query(gpu="h100-sxm", weights="bf16"))
    result = response.context["result"]
    assert result["tokens_per_stream"] == 768
    kv = next(c for c in response.context["charts"] if c.title.startswith("KV cache"))
    assert [p["label"] for p in kv.points] == [
        "the plan's stream, 768 tokens → 0.04102 GiB",
        "a full 8192-token context → 0.4375 GiB",
    ]


@pytest.mark.browser
@pytest.mark.one_database
def test_a_long_unknown_key_in_the_address_does_not_widen_a_phone_page(
    browser, live_server_url
) -> None:
    """?model= followed by 1,500 characters is echoed in 'Select a valid choice. ...', beside
    the field and in the list of inputs to check: the page was 15,000 px wide at 360 px."""
    context = browser.new_context(viewport={"width": 360, "height": 800})
    page = context.new_page()
    page.goto(f"{live_server_url}{CAPACITY}?model={'x' * 1500}&qps=50")
    assert "Select a valid choice" in page.locator("#plan-errors").inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    context.close()


def test_the_efficiency_that_times_a_compute_bound_decode_step_says_so(client: Client) -> None:
    """Qwen2.5-7B in BF16 on an H100 runs 1,321 streams a step, compute-bound: the field
    labelled 'Prefill efficiency' set its TPOT too."""
    query = _query(gpu="h100-sxm", weights="bf16", tpot_slo_ms=50)
    full = client.get(CAPACITY, query).context
    half = client.get(CAPACITY, dict(query, prefill_eff="0.25")).context["result"]
    assert half["tpot_ms"] > full["result"]["tpot_ms"]
    assert "decode" in full["form"]["prefill_eff"].label


def test_the_speculation_fields_are_read_only_with_speculation_on(client: Client) -> None:
    """Cleared speculation fields refused a plan that does not speculate ("This field is
    required"); with speculation on, a blank one is still asked for, by name."""
    blank = {"spec_accept": "", "spec_tokens": "", "spec_draft_cost": ""}
    off = client.get(CAPACITY, _query(**blank))
    assert off.status_code == 200
    assert not off.context["form"].errors
    assert off.context["result"] is not None
    on = client.get(CAPACITY, _query(**blank, spec_decode="on"))
    errors = on.context["form"].errors
    assert set(errors) == {"spec_accept", "spec_tokens", "spec_draft_cost"}
    assert "speculative decoding" in errors["spec_tokens"][0]
    assert on.context["result"] is None


def test_an_infeasible_plans_fleet_is_said_to_be_for_the_load_only(client: Client) -> None:
    """A TPOT SLO under the step's floor: the headline showed its GPUs and monthly cost as if
    they were a design, beside a small "not feasible" tag."""
    infeasible = client.get(CAPACITY, _query(tpot_slo_ms="1"))
    assert infeasible.context["result"]["feasible"] is False
    body = infeasible.content.decode()
    assert 'id="plan-infeasible-fleet"' in body
    assert "for the load only: this plan misses the SLO" in body
    feasible = client.get(CAPACITY, _query())
    assert feasible.context["result"]["feasible"] is True
    assert 'id="plan-infeasible-fleet"' not in feasible.content.decode()


def test_a_one_gpu_plan_says_one_gpu_and_one_instance(client: Client, bank_loaded) -> None:
    # The planner page said "1 GPUs" and "1 instances".
    page = client.get("/planner/capacity/?question=first-model-one-gpu").content.decode()
    assert '<span class="pl-big" id="plan-n-gpu">1</span> GPU<' in page
    assert '<span class="pl-big">1</span> instance<' in page
