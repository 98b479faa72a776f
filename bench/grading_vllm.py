"""Prefix-cache hit rate while grading through the real vLLM CPU server, with its details.

    .venv/bin/python -m bench.grading_vllm [--answers 20] [--question SLUG --step KEY]
                                           [--base-url URL]

The figure `make bench-grading` adds to the grading bench's line (bench/grading.py,
`measure_prefix_cache_on_vllm`), printed alone with what produced it. Starts the real vLLM
server (tools/vllm/server.py; the environment and tiny model must exist: tools/vllm/setup.sh
and make_tiny_model.py, or run tools/vllm/run-tests.sh once) and grades N different answers
to the same step through `grading.grade` in LLM mode. Prints one line:

    {"bench": "grading_vllm", "prefix_cache_hit_rate": 0.9, ...}

Target >= 0.5. The first grading (cold cache) is counted too. With --base-url, an already
running server is measured instead (its /metrics must be at the URL's root).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.grading import VLLM_QUESTION, VLLM_STEP, measure_prefix_cache_on_vllm  # noqa: E402

TARGET = 0.5


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=20)
    ap.add_argument("--question", default=VLLM_QUESTION)
    ap.add_argument("--step", default=VLLM_STEP)
    ap.add_argument("--base-url", default=None, help="measure a running server instead")
    args = ap.parse_args(argv)

    measured = measure_prefix_cache_on_vllm(
        args.answers, args.question, args.step, base_url=args.base_url
    )
    rate = measured["prefix_cache_hit_rate"]
    out = {
        "bench": "grading_vllm",
        "prefix_cache_hit_rate": rate,
        "target": TARGET,
        "meets_target": rate is not None and rate >= TARGET,
        "answers": args.answers,
        "question": args.question,
        "step": args.step,
        **measured,
    }
    print(json.dumps(out), flush=True)
    return 0 if rate is not None else 1


if __name__ == "__main__":
    sys.exit(main())
