"""`manage.py drill`: the contract scripts rely on."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from drills import engine


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("drill", *args, stdout=out)
    return json.loads(out.getvalue())


def test_list_names_every_kind_and_says_each_is_available():
    kinds = {k["kind"]: k for k in run("--list", "--json")["kinds"]}
    assert set(kinds) == set(engine.KINDS)
    assert kinds["ttft"]["available"] is True and kinds["cost_per_mtok"]["available"] is True
    assert kinds["ttft"]["title"] == "TTFT from prefill"
    assert all("why_unavailable" not in k for k in kinds.values())


def test_a_ttft_answer_without_attention_is_named_and_a_cost_answer_is_checked():
    drill = engine.drill_generate("ttft", 9)
    out = run("--kind", "ttft", "--seed", "9", "--answer",
              "2 FLOP * params_ne * n_prompt / (mfu * flops)", "--json")  # fmt: skip
    assert (out["verdict"], out["mistake"]) == ("known_mistake", "no-attention")
    assert out["expected"] == drill.expected and out["unit"] == "ms"
    cost = engine.drill_generate("cost_per_mtok", 9)
    out = run("--kind", "cost_per_mtok", "--seed", "9", "--answer",
              f"{cost.expected} USD/Mtok", "--json")  # fmt: skip
    assert out["verdict"] == "correct"
    assert out["unit"] == "USD/Mtok"


def test_a_kind_and_seed_print_the_drill_reproducibly():
    first = run("--kind", "max_seqs", "--seed", "11", "--json")
    assert first == run("--kind", "max_seqs", "--seed", "11", "--json")
    assert {"givens", "question", "expected", "unit"} <= set(first)
    assert first["expected"] == engine.drill_generate("max_seqs", 11).expected


def test_an_answer_gets_the_checkers_verdict_and_hint():
    drill = engine.drill_generate("kv_per_token", 5)
    half = run("--kind", "kv_per_token", "--seed", "5", "--answer", f"{drill.expected / 2} KiB",
               "--json")  # fmt: skip
    assert (half["verdict"], half["mistake"]) == ("known_mistake", "k-and-v")
    assert "multiply by 2" in half["hint"]
    right = run("--kind", "kv_per_token", "--seed", "5", "--answer", f"{drill.expected} KiB",
                "--json")  # fmt: skip
    assert right["verdict"] == "correct"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--kind", "nope", "--seed", "1"), "Unknown drill kind"),
        (("--kind", "weights", "--seed", "-3"), "whole number"),
        (("--kind", "weights", "--seed", "1", "--answer", "3 GB +"), "could not be read"),
        (("--kind", "weights"), "--seed"),
    ],
)
def test_refusals_print_one_error_and_exit_2(args, words, capsys):
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("drill", *args, "--json", stdout=out)
    assert exit_.value.code == 2
    assert words in json.loads(out.getvalue())["error"]
