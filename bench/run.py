"""`make bench`: every benchmark, one JSON line per figure."""

import importlib
import sys

BENCHES = [
    "bench.napkin",
    "bench.grading",
    "bench.pages",
    "bench.progress",
    "bench.simulator",
    "bench.diagram",
]


def main() -> int:
    failed = []
    for name in BENCHES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            print(f"# {name}: not available ({exc})", file=sys.stderr)
            failed.append(name)
            continue
        try:
            module.main()
        except Exception as exc:  # one broken bench must not hide the others' figures
            print(f"# {name} failed: {exc!r}", file=sys.stderr)
            failed.append(name)
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
