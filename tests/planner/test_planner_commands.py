"""`manage.py napkin` and `manage.py plan`: the stable JSON contracts."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

# The commands it starts read files, never the database (it passes with DATABASE_URL pointing
# at no server), so CI's PostgreSQL run leaves it to the SQLite one.

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[list[dict], int]:
    out = StringIO()
    code = 0
    try:
        call_command(*args, stdout=out)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()], code


def test_napkin_json() -> None:
    (obj,), code = run("napkin", "15.2 GB / (0.7 * 1008 GB/s)", "--json")
    assert code == 0
    assert set(obj) == {"input", "value", "unit", "latex"}
    assert obj["unit"] == "ms" and obj["value"] == pytest.approx(21.54, abs=0.01)


def test_napkin_to_unit() -> None:
    (obj,), _ = run("napkin", "56 KiB * 32768", "--to", "GB", "--json")
    assert obj["unit"] == "GB" and obj["value"] == pytest.approx(1.879, abs=0.001)


def test_napkin_dimensionless_unit_is_empty() -> None:
    (obj,), _ = run("napkin", "ceil(50 / (0.7 * 7.8))", "--json")
    assert (obj["value"], obj["unit"]) == (10, "")


def test_napkin_error_exits_2_with_position() -> None:
    (obj,), code = run("napkin", "15 GB + 3 ms", "--json")
    assert code == 2
    assert obj == {
        "input": "15 GB + 3 ms",
        "error": "Cannot add bytes and time (at column 7).",
        "position": 6,
    }


def test_napkin_batch_reports_each_line_and_exits_0(tmp_path: Path) -> None:
    batch = tmp_path / "lines.txt"
    batch.write_text("2000 tok/s / 256 tok/req\n9**9**9**9\n56 KiB * 131072\n")
    objs, code = run("napkin", "--batch", str(batch), "--json")
    assert code == 0
    assert [o.get("unit") for o in objs] == ["req/s", None, "GiB"]
    assert "error" in objs[1] and objs[2]["value"] == 7
    assert all(o["elapsed_ms"] >= 0 for o in objs)


def test_napkin_check_json_hides_expected_without_reveal() -> None:
    args = ("napkin", "--check", "napkin-fixture", "n_inst", "9.14", "--json",
            "--content-dir", str(FIXTURES))  # fmt: skip
    (obj,), code = run(*args)
    assert code == 0
    assert obj["verdict"] == "not_rounded" and "expected" not in obj
    (obj,), _ = run(*args, "--reveal")
    assert set(obj) == {"verdict", "value", "unit", "hint", "expected"}
    assert obj["expected"] == 10


def test_napkin_check_bad_answer_exits_2() -> None:
    (obj,), code = run(
        "napkin",
        "--check",
        "napkin-fixture",
        "tpot_floor",
        "W /",
        "--json",
        "--content-dir",
        str(FIXTURES),
    )
    assert code == 2 and obj["position"] == 3


def test_napkin_check_unknown_question() -> None:
    (obj,), code = run(
        "napkin",
        "--check",
        "no-such-question",
        "x",
        "1",
        "--json",
        "--content-dir",
        str(FIXTURES),
    )
    assert code == 2 and obj["error"].startswith("--check: No question file")
    (obj,), code = run("napkin", "--check", "../../etc/passwd", "x", "1", "--json")
    assert code == 2 and "not a question slug" in obj["error"]


def test_plan_json_reproduces_q1() -> None:
    (obj,), _ = run(
        "plan",
        "--model",
        "qwen2.5-7b-instruct",
        "--gpu",
        "rtx-4090",
        "--weights",
        "awq-int4",
        "--kv",
        "bf16",
        "--context",
        "8192",
        "--mem-util",
        "0.9",
        "--bw-eff",
        "0.7",
        "--tp",
        "1",
        "--knee-tok-s",
        "2000",
        "--out-len",
        "256",
        "--qps",
        "50",
        "--rho",
        "0.7",
        "--tpot-slo-ms",
        "50",
        "--prompt-len",
        "512",
        "--overhead-gib",
        "1.5",
        "--json",
    )
    for key in [
        "weights_bytes",
        "kv_bytes_per_token",
        "kv_pool_bytes",
        "max_seqs",
        "tpot_floor_ms",
        "r_inst_req_s",
        "n_inst",
        "n_gpu",
        "feasible",
        "steps",
        "ttft_ms",
        "tpot_ms",
        "binding",
        "cost_per_mtok_usd",
        "monthly_usd",
    ]:
        assert key in obj
    assert obj["kv_bytes_per_token"] == 57344
    assert (obj["n_inst"], obj["n_gpu"], obj["feasible"]) == (10, 10, True)
    # The seed's VRAM gate reserves the whole 8k context per stream (no --prompt-len).
    full = run("plan", "--model", "qwen2.5-7b", "--gpu", "rtx-4090", "--weights", "awq-int4",
               "--context", "8192", "--overhead-gib", "1.5", "--json")[0][0]  # fmt: skip
    assert full["max_seqs"] == 33
    assert set(obj["steps"][0]) >= {"name", "formula_latex", "substituted", "value", "unit"}


def test_plan_reproduces_the_long_context_rag_fleet_with_the_questions_inputs() -> None:
    obj = run(
        "plan", "--model", "qwen2.5-7b-instruct", "--gpu", "rtx-4090", "--weights", "awq-int4",
        "--kv", "fp8", "--context", "32768", "--out-len", "128", "--qps", "10", "--rho", "0.7",
        "--hold-s", "4", "--knee-tok-s", "2000", "--overhead-gib", "1.5", "--json",
    )[0][0]  # fmt: skip
    steps = {step["name"]: step for step in obj["steps"]}
    assert (steps["r_speed"]["value"], steps["r_memory"]["value"]) == (15.625, 4)
    assert steps["r_inst"]["value"] == 4 and obj["binding"] == "memory"
    assert (obj["max_seqs"], obj["n_inst"], obj["n_gpu"]) == (16, 4, 4)


def test_plan_gives_no_fleet_when_the_weights_do_not_fit() -> None:
    obj = run("plan", "--model", "qwen2.5-72b", "--gpu", "h200", "--json")[0][0]
    assert (obj["feasible"], obj["n_inst"], obj["n_gpu"]) == (False, None, None)
    assert obj["reason"].startswith("The weights alone do not fit")


def test_plan_bad_input_is_one_sentence(capsys) -> None:
    assert run("plan", "--model", "gpt-5") == ([], 2)
    err = capsys.readouterr().err
    assert err.startswith("--model: Unknown model 'gpt-5'") and err.count("\n") == 1


def test_napkin_as_a_real_process() -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "napkin", "log2(0)", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert json.loads(done.stdout) == {
        "input": "log2(0)",
        "error": "log2 is defined only for positive numbers (column 1).",
        "position": 0,
    }
    assert "Traceback" not in done.stderr


def test_napkin_solve_answers_what_peak_load_ten_instances_sustain():
    import json
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command(
        "napkin", "10", "--solve", "chat-api-50qps", "n_inst", "qps_peak", "--json", stdout=out
    )
    result = json.loads(out.getvalue())
    # ceil(λ / (0.7 × 7.8125 req/s)) = 10 holds up to λ = 10 × 0.7 × 7.8125 = 54.69 req/s.
    assert result["unknown"] == "qps_peak"
    assert result["unit"] == "req/s"
    assert abs(result["value"] - 54.6875) < 1e-6
