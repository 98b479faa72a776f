"""A context the model cannot hold is refused, not planned: by plan(), by `plan --json` (a JSON
error on stdout, exit status 2) and by the planner page (a form error)."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from planner.engine import PlanError, plan

LLAMA = dict(model="llama-3.1-8b-instruct", gpu="h100-sxm", weights="bf16", kv="bf16")
QWEN = dict(model="qwen2.5-7b-instruct", gpu="h100-sxm", weights="bf16", kv="bf16")


def test_llama_past_its_131072_tokens_is_refused_with_the_limit() -> None:
    with pytest.raises(PlanError) as refused:
        plan(**LLAMA, context=200_000)
    message = str(refused.value)
    assert "131,072" in message and "Llama-3.1-8B-Instruct" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_llama_at_its_limit_plans_without_a_rope_scaling_note() -> None:
    result = plan(**LLAMA, context=131_072)
    assert result["n_inst"] is not None
    assert not any("rope" in note.lower() for note in result["notes"])


def test_qwen_past_its_yarn_limit_is_refused_naming_both_limits() -> None:
    with pytest.raises(PlanError) as refused:
        plan(**QWEN, context=262_144)
    message = str(refused.value)
    assert "131,072" in message and "32,768" in message and "YaRN" in message


def test_qwen_between_native_and_yarn_limits_is_planned_with_the_yarn_note() -> None:
    result = plan(**QWEN, context=65_536)
    assert any("32768" in n and "YaRN" in n for n in result["notes"])
    assert not any("YaRN" in n for n in plan(**QWEN, context=32_768)["notes"])


def test_an_output_longer_than_the_context_is_refused() -> None:
    with pytest.raises(PlanError, match="8,192"):
        plan(**QWEN, context=8192, out_len=10_000)
    assert plan(**QWEN, context=8192, out_len=8192)["n_inst"] is not None


def _plan_command(*args: str) -> tuple[str, str, int]:
    out, err = StringIO(), StringIO()
    code = 0
    try:
        call_command("plan", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return out.getvalue(), err.getvalue(), code


def test_plan_json_refusal_is_json_on_stdout_with_exit_status_2() -> None:
    out, err, code = _plan_command("--model", "llama-3.1-8b", "--context", "200000", "--json")
    assert code == 2 and err == ""
    obj = json.loads(out)
    assert set(obj) == {"error"} and "131,072" in obj["error"]


def test_plan_json_unknown_model_is_json_on_stdout_too() -> None:
    out, _err, code = _plan_command("--model", "gpt-5", "--json")
    assert code == 2
    assert json.loads(out)["error"].startswith("--model: Unknown model 'gpt-5'")


@pytest.mark.django_db
def test_capacity_page_refuses_a_context_past_the_model_limit_as_a_form_error(
    client: Client,
) -> None:
    query = {
        "model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "weights": "bf16", "kv": "bf16",
        "context": 200000, "mem_util": 0.9, "bw_eff": 0.7, "tp": 1, "knee_tok_s": 2000,
        "out_len": 256, "qps": 50, "rho": 0.7, "overhead_gib": 1.5,
    }  # fmt: skip
    response = client.get("/planner/capacity/", query, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 422
    assert 'id="plan-errors"' in html and "131,072" in html
    assert 'id="plan-n-gpu"' not in html
    response = client.get(
        "/planner/capacity/", {**query, "context": 8192, "out_len": 10000}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 422 and "8,192" in response.content.decode()
