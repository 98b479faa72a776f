"""The web process hides its start-up objects from the garbage collector (config/wsgi.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_loading_the_app_freezes_what_it_loaded() -> None:
    # A fresh interpreter: the test process has imported the app differently.
    script = (
        "import gc, sys; import config.wsgi; "
        "print(gc.get_freeze_count(), 'sympy' in sys.modules, "
        "'interview.practice_views' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "config.settings"},
    ).stdout.split()
    frozen, sympy_loaded, views_loaded = int(out[0]), out[1] == "True", out[2] == "True"
    # Every view module (and the napkin engine's SymPy) is imported before the freeze, so the
    # objects a full collection would otherwise walk on every run are out of its sight.
    assert views_loaded and sympy_loaded
    assert frozen > 50_000
