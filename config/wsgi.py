import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()


def _freeze_startup_objects() -> None:
    """Move everything loaded so far out of the garbage collector's sight.

    Django, SymPy and the URLconf's modules make ~100k long-lived objects. A full collection
    walks all of them, while holding the GIL, so every thread of the process stalls (40-80 ms
    measured once the worksheet caches have grown). Frozen objects are never collected or
    walked; they live as long as the process anyway. See `gc.freeze` in the Python docs.
    """
    from django.urls import get_resolver

    get_resolver().resolve("/")  # imports the URLconf, and with it every view module
    gc.collect()
    gc.freeze()


_freeze_startup_objects()
