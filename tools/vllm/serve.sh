#!/usr/bin/env bash
# Serve the tiny model with the real vLLM CPU server on a free loopback port (or --port N).
# Prints GRADER_BASE_URL=http://127.0.0.1:N/v1 once healthy; Ctrl-C stops the whole group.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec python3 "$HERE/server.py" "$@"
