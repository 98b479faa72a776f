#!/usr/bin/env bash
# `make test-vllm`: build the vLLM environment (cached), make the tiny model (cached), then run
# tests/vllm with the app's Python; the session fixture starts and stops the real server
# through `make grader` (GRADER_MODEL_PATH=.vllm-model, a free GRADER_PORT).
# Exits non-zero on any failure, and also when no test passed (e.g. everything skipped).
#   APP_PYTHON      the app's interpreter (default: <repo>/.venv/bin/python)
#   VLLM_ENV        build the vLLM environment exactly there (default: the machine's cache,
#                   <repo>/.vllm-env a link to it; see setup.sh)
#   VLLM_MODEL_DIR  make the tiny model exactly there (default: the machine's cache too,
#                   <repo>/.vllm-model a link to it)
#   extra arguments go to pytest (e.g. -k smoke, -x, --durations=0)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
APP_PYTHON="${APP_PYTHON:-$ROOT/.venv/bin/python}"
CACHE_DIR="${VLLM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm-interview}"
cd "$ROOT"

t0=$(date +%s)
bash "$HERE/setup.sh"
export VLLM_ENV="${VLLM_ENV:-$ROOT/.vllm-env}"
t1=$(date +%s)
if [[ -n "${VLLM_MODEL_DIR:-}" ]]; then
    "$VLLM_ENV/bin/python" "$HERE/make_tiny_model.py" --out "$VLLM_MODEL_DIR"
else
    # The model is a function of its recipe (this script) and the vLLM environment (its
    # docstrings train the tokenizer): cache it under both, like the environment.
    key="$(cat "$HERE/make_tiny_model.py" "$VLLM_ENV/.setup-stamp" | sha256sum | cut -c1-16)"
    model="$CACHE_DIR/tiny-model-$key"
    mkdir -p "$CACHE_DIR"
    (
        flock 9
        "$VLLM_ENV/bin/python" "$HERE/make_tiny_model.py" --out "$model"
    ) 9>"$model.lock"
    link="$ROOT/.vllm-model"
    [[ -d "$link" && ! -L "$link" ]] && rm -rf "$link"
    [[ "$(readlink "$link" 2>/dev/null)" == "$model" ]] || ln -sfn "$model" "$link"
fi
t2=$(date +%s)
echo "[test-vllm] setup $((t1 - t0)) s, tiny model $((t2 - t1)) s" >&2

if [[ ! -x "$APP_PYTHON" ]]; then
    echo "[test-vllm] no app interpreter at $APP_PYTHON (run 'make install' first)" >&2
    exit 1
fi

report="$(mktemp -t vllm-junit-XXXXXX.xml)"
trap 'rm -f "$report"' EXIT
set +e
RUN_VLLM_TESTS=1 "$APP_PYTHON" -m pytest tests/vllm -p no:cacheprovider -m vllm \
    --junitxml="$report" "$@"
rc=$?
set -e
t3=$(date +%s)
echo "[test-vllm] pytest exit $rc after $((t3 - t2)) s" >&2
if [[ $rc -ne 0 ]]; then
    exit "$rc"
fi

# pytest exits 0 when everything was skipped: that is not a pass here.
"$APP_PYTHON" - "$report" <<'PY'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
count = lambda key: sum(int(s.get(key, 0)) for s in suites)  # noqa: E731
tests, failures, errors, skipped = (count(k) for k in ("tests", "failures", "errors", "skipped"))
passed = tests - failures - errors - skipped
print(f"[test-vllm] {passed} passed, {failures + errors} failed, {skipped} skipped", file=sys.stderr)
sys.exit(0 if passed > 0 and failures + errors == 0 else 1)
PY
