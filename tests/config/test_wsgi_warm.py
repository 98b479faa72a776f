"""A web process imports its URL conf, and every view module with it, as it starts: the first
visitor after a start or a worker's restart does not wait most of a second for those imports."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from config.wsgi import application
print(",".join(m for m in ("practice.views", "mocks.views", "review.views", "drills.views",
                           "planner.views", "simulator.views") if m in sys.modules))
"""


def test_the_views_are_imported_before_the_first_request():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    imported = done.stdout.strip().split(",")
    assert imported == [
        "practice.views",
        "mocks.views",
        "review.views",
        "drills.views",
        "planner.views",
        "simulator.views",
    ]
