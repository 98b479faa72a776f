#!/usr/bin/env bash
# Build the environment of vLLM's GPU build for `make grader` on a machine with a CUDA device:
# `vllm` from PyPI at the version pinned in tools/vllm/requirements-gpu.txt, in a venv of its
# own (the app's venv never imports vLLM). Installed only on a GPU machine: grader.py runs this
# script only when nvidia-smi finds a card (or GRADER_DEVICE=gpu).
#
#   VLLM_GPU_ENV    build exactly there instead (no cache, no symlink)
#   VLLM_CACHE_DIR  the cache (default: ${XDG_CACHE_HOME:-$HOME/.cache}/llm-interview)
#   VLLM_GPU_PYTHON the interpreter (default: python3.12, else python3; vLLM supports 3.10-3.13)
#
# Like setup.sh: built once per machine under $VLLM_CACHE_DIR/vllm-gpu-env-<hash of the
# requirements>, <repo>/.vllm-gpu-env a symlink to it, a stamp with the hash; a re-run with the
# same requirements does nothing.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
REQS="$HERE/requirements-gpu.txt"
log() { echo "[vllm-gpu-setup] $*" >&2; }

hash="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [[ -n "${VLLM_GPU_ENV:-}" ]]; then
    ENV_DIR="$VLLM_GPU_ENV"
else
    CACHE_DIR="${VLLM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm-interview}"
    ENV_DIR="$CACHE_DIR/vllm-gpu-env-${hash:0:16}"
    mkdir -p "$CACHE_DIR"
    exec 9>"$ENV_DIR.lock"
    flock 9
    LINK="$ROOT/.vllm-gpu-env"
    [[ -d "$LINK" && ! -L "$LINK" ]] && rm -rf "$LINK"
    [[ "$(readlink "$LINK" 2>/dev/null)" == "$ENV_DIR" ]] || ln -sfn "$ENV_DIR" "$LINK"
fi
STAMP="$ENV_DIR/.setup-stamp"
if [[ -f "$STAMP" && -x "$ENV_DIR/bin/python" && "$(cat "$STAMP")" == "v1 $hash" ]]; then
    log "already built at $ENV_DIR"
    exit 0
fi

PYTHON="${VLLM_GPU_PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
    PYTHON="$(command -v python3.12 || command -v python3)"
fi
start=$(date +%s)
[[ -x "$ENV_DIR/bin/python" ]] || "$PYTHON" -m venv "$ENV_DIR"
rm -f "$STAMP"
log "installing $(grep -v '^#' "$REQS" | xargs) into $ENV_DIR (several GB: CUDA torch)"
"$ENV_DIR/bin/python" -m pip install --disable-pip-version-check -q -r "$REQS"
"$ENV_DIR/bin/python" -c 'import vllm, torch; print("[vllm-gpu-setup] vllm", vllm.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())'
echo "v1 $hash" > "$STAMP"
log "done in $(( $(date +%s) - start )) s"
