"""`manage.py plan --prompt-spread`: the command plans with the spread it is given, as the
page does, and refuses one out of range naming its option."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

LONG_PROMPTS = ("--gpu", "h200", "--context", "32768", "--prompt-len", "30000", "--qps", "4",
                "--ttft-slo-ms", "5000")  # fmt: skip


def plan_json(*args: str) -> dict:
    out = StringIO()
    call_command("plan", *LONG_PROMPTS, *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_a_wider_spread_raises_the_queued_p99_ttft_and_leaves_the_fleet_alone():
    even, default, wide = (
        plan_json("--prompt-spread", "0"),
        plan_json(),
        plan_json("--prompt-spread", "1"),
    )
    assert even["ttft_p99_queued_ms"] < default["ttft_p99_queued_ms"] < wide["ttft_p99_queued_ms"]
    assert even["n_inst"] == default["n_inst"] == wide["n_inst"]


def test_a_spread_out_of_range_is_refused_naming_its_option():
    out = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("plan", *LONG_PROMPTS, "--prompt-spread", "1.5", "--json", stdout=out)
    assert exit_.value.code == 2
    assert json.loads(out.getvalue())["error"].startswith("--prompt-spread must be between 0 and 1")
