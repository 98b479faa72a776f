"""Settings for `make bench`: the app's own, plus a trivial view to compare against."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
DEBUG = False
# The bench measures the pages, not the per-user limits that guard them.
GRADING_RATE_PER_MINUTE = 10**9
GRADING_DAILY_QUOTA = 10**9
NAPKIN_RATE_PER_MINUTE = 10**9
LOGGING = {"version": 1, "disable_existing_loggers": True, "root": {"level": "ERROR"}}
