"""`manage.py simulate --json` on the shipped questions."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

# A simulation reads its question's published revision and nothing the databases differ on.
pytestmark = pytest.mark.one_database

FIELDS = (
    "ttft_p50_ms",
    "ttft_p99_ms",
    "tpot_p99_ms",
    "goodput",
    "completed",
    "little_law_error",
    "wall_s",
)


def simulate(*args: str) -> dict:
    out = StringIO()
    call_command("simulate", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_chat_seed_design_holds_at_50_qps_and_breaks_at_100(content_loaded):
    at_50 = simulate("--question", "chat-api-50qps", "--knee", "2000", "--seconds", "300")
    at_100 = simulate("--question", "chat-api-50qps", "--qps", "100", "--seconds", "300")
    for figs in (at_50, at_100):
        assert all(figs[k] is not None for k in FIELDS)
        assert figs["replicas"] == 10
        assert figs["little_law_error"] < 0.02
    assert at_50["ttft_p99_ms"] <= 300
    assert at_100["ttft_p99_ms"] > 300
    assert at_50["verdict"].startswith("Holds the SLO at 50 QPS on 10 replicas")
    assert "breaks" in at_100["verdict"]


def test_events_and_choices_are_taken_from_the_command_line(content_loaded):
    figs = simulate(
        "--question",
        "chat-api-50qps",
        "--replicas",
        "6",
        "--qps",
        "20",
        "--seconds",
        "120",
        "--seed",
        "7",
        "--router",
        "least-loaded",
        "--autoscale",
        "queue",
        "--kill-replica-at",
        "30",
        "--burst",
        "2x@60",
        "--series",
    )
    assert figs["replicas"] == 6 and figs["router"] == "least-loaded"
    assert figs["kill_at"] == 30 and figs["burst_at"] == 60 and figs["burst_factor"] == 2
    assert figs["events"][0] == {"t": 30.0, "what": "replica 6 dies"}
    assert len(figs["series"]) >= 100


def test_a_load_below_the_briefs_mean_is_simulated(content_loaded):
    # Below the chat brief's 20 QPS mean the planner's "mean above the peak" refused the run.
    figs = simulate("--question", "chat-api-50qps", "--qps", "10", "--seconds", "60")
    assert figs["qps"] == 10 and figs["verdict"].startswith("Holds the SLO at 10 QPS")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--question", "no-such-question"], "No published question"),
        (["--question", "chat-api-50qps", "--burst", "double"], "--burst takes"),
        (["--question", "chat-api-50qps", "--seconds", "99999"], "window"),
        (["--question", "chat-api-50qps", "--replicas", "1000"], "replicas"),
        # A prefix longer than the prompt ran as a 511-token one; a prefix of no tokens, or
        # tokens with no prefix, ran with nothing shared, while the verdict said "5 shared
        # prefixes".
        (
            [
                "--question",
                "chat-api-50qps",
                "--prefix-groups",
                "5",
                "--prefix-tokens",
                "100000000",
            ],
            "--prefix-tokens must be less than the mean prompt (512 tokens)",
        ),
        (["--question", "chat-api-50qps", "--prefix-groups", "5"], "--prefix-tokens"),
        (["--question", "chat-api-50qps", "--prefix-tokens", "300"], "--prefix-groups"),
        (["--question", "chat-api-50qps", "--prefix-lifetime", "60"], "need --prefix-groups"),
        (["--question", "chat-api-50qps", "--prefix-share", "0"], "--prefix-share must be"),
        (["--question", "chat-api-50qps", "--prefix-share", "nan"], "--prefix-share must be"),
        (["--question", "chat-api-50qps", "--prefix-lifetime", "-1"], "--prefix-lifetime must"),
    ],
)
def test_bad_input_gets_one_sentence_and_exit_status_2(content_loaded, capsys, args, words):
    out = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("simulate", *args, "--json", stdout=out)
    assert exit_info.value.code == 2
    assert words in json.loads(out.getvalue())["error"]


@pytest.mark.processes
def test_before_any_migrate_the_command_reads_the_shipped_question(tmp_path):
    # A fresh checkout has no database yet: the figures come from the question file, and an
    # unknown question is a one-line error, not a traceback.
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    env.pop("DJANGO_SETTINGS_MODULE", None)

    def run(slug: str) -> subprocess.CompletedProcess:
        args = ["manage.py", "simulate", "--question", slug, "--seconds", "30", "--json"]
        return subprocess.run(
            [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip

    found = run("chat-api-50qps")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["question"] == "chat-api-50qps"
    missing = run("no-such-question")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "no-such-question" in json.loads(missing.stdout)["error"]


def test_a_run_counts_the_plans_prefix_hits_and_says_so(content_loaded):
    # long-context-rag's design counts 90% hits on a 28,000-token shared prefix. The run left
    # them out (every prompt prefilled whole: 0.14 req/s per replica where the plan has 0.70,
    # p99 TTFT over 100 s); it now serves them and the note says how.
    figs = simulate("--question", "long-context-rag", "--seconds", "60")
    assert "90% of requests open with a 28,000-token shared prefix" in figs["replica"]
    assert "each replica holds once" in figs["replica"]
    assert 0.8 < figs["prefix_hit_rate"] < 0.95
    assert figs["replica_req_s"] == pytest.approx(0.698, rel=0.01)
    chat = simulate("--question", "chat-api-50qps", "--seconds", "20")
    assert "prefix" not in chat["replica"] and chat["prefix_hit_rate"] == 0


def test_a_replica_back_at_once_is_said_in_the_verdict(content_loaded):
    # "--restart-after 0" brings the replica back straight away; the verdict read as if it
    # stayed dead ("a replica killed at 30 s").
    figs = simulate(
        "--question", "chat-api-50qps", "--seconds", "60", "--kill-replica-at", "30",
        "--restart-after", "0",
    )  # fmt: skip
    assert "a replica killed at 30 s, back cold after 0 s" in figs["verdict"]


def test_the_prefill_only_embedding_question_runs_and_claims_no_tpot(bank_loaded):
    # It said "The catalogue has no model called 'gte-Qwen2-7B-instruct (embeddings) ...'".
    figs = simulate("--question", "embedding-rerank-service", "--seconds", "120")
    assert figs["replicas"] == 15 and figs["qps"] == 20 and figs["ttft_slo_ms"] == 500
    assert figs["prefill_only"] is True and figs["tpot_p99_ms"] is None
    assert figs["ttft_p99_ms"] <= 500 and figs["little_law_error"] < 0.02
    assert figs["verdict"].startswith("Holds the SLO at 20 QPS on 15 replicas: p99 latency")
    assert "TPOT" not in figs["verdict"]
    assert "split into 4 parts" in figs["replica"] and "Qwen2.5-7B-Instruct" in figs["replica"]
    out = StringIO()
    call_command(
        "simulate", "--question", "embedding-rerank-service", "--seconds", "30", stdout=out
    )
    assert "tpot" not in out.getvalue().lower()
    out = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command(
            "simulate", "--question", "embedding-rerank-service", "--knee", "2000", "--json",
            stdout=out,
        )  # fmt: skip
    assert exit_info.value.code == 2 and "prefill only" in json.loads(out.getvalue())["error"]


def test_prefixes_that_come_and_go_are_run_and_named_in_the_verdict(bank_loaded):
    # vision-language-api's images: three requests in four repeat one of the last minute.
    args = ["--question", "vision-language-api", "--prefix-groups", "20", "--prefix-tokens", "600"]
    args += ["--router", "prefix-aware", "--seconds", "120"]
    turnover = simulate(*args, "--prefix-share", "0.75", "--prefix-lifetime", "60")
    fixed = simulate(*args)
    assert "75% of requests repeating a prefix of the last 60 s" in turnover["verdict"]
    assert "20 shared prefixes" in fixed["verdict"]
    # A new image misses everywhere: the turnover mix hits less than twenty fixed prefixes.
    assert 0.5 < turnover["prefix_hit_rate"] < fixed["prefix_hit_rate"]
