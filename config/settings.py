"""Settings for the interview studio, read from the environment.

DJANGO_ENV=production selects production settings (SECRET_KEY and ALLOWED_HOSTS required).
DATABASE_URL selects the database (SQLite file by default), REDIS_URL a shared cache.
"""

import os
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_number(name: str, default: str, kind: type = int) -> int | float:
    """A number from the environment; a malformed one stops start-up with a sentence naming
    the variable, not a ValueError traceback from deep in the import."""
    raw = os.environ.get(name, "").strip() or default
    try:
        return kind(raw)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ImproperlyConfigured(f"{name}={raw!r} is not {what}") from None


# Only these two: a mistyped "prod" must not quietly run development settings (DEBUG on, the
# public development key) on a deployed machine.
ENV = os.environ.get("DJANGO_ENV", "").strip() or "development"
if ENV not in ("development", "production"):
    raise ImproperlyConfigured(f"DJANGO_ENV={ENV!r}: use production or development (the default)")
PRODUCTION = ENV == "production"

if PRODUCTION:
    try:
        SECRET_KEY = os.environ["SECRET_KEY"].strip()
        ALLOWED_HOSTS = [h.strip() for h in os.environ["ALLOWED_HOSTS"].split(",") if h.strip()]
    except KeyError as missing:
        raise ImproperlyConfigured(f"DJANGO_ENV=production needs {missing} to be set") from None
    # What `check --deploy` only warns about, refused at start: an empty key fails every
    # request that signs anything, a weak one lets sessions be forged, and no host answers
    # every request with 400.
    if (
        len(SECRET_KEY) < 50
        or len(set(SECRET_KEY)) < 5
        or SECRET_KEY.startswith("django-insecure-")
    ):
        raise ImproperlyConfigured(
            "DJANGO_ENV=production needs SECRET_KEY to be a long random value (50 characters "
            "or more), e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'"
        )
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured(
            "DJANGO_ENV=production needs ALLOWED_HOSTS: the site's host names, comma-separated"
        )
    DEBUG = False
else:
    SECRET_KEY = os.environ.get("SECRET_KEY", "dev-only-insecure-key-do-not-use-in-production")
    ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "testserver"]
    _debug = os.environ.get("DJANGO_DEBUG", "").strip().lower() or "1"
    if _debug not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
        # "True" or "false" used to mean off, silently: say what is read.
        raise ImproperlyConfigured(f"DJANGO_DEBUG={_debug!r}: use 1 (the default) or 0")
    DEBUG = _debug in ("1", "true", "yes", "on")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "django_tasks_db",
    "axes",
    "accounts",
    "questions",
    "practice",
    "mocks",
    "review",
    "planner",
    "authoring",
    "drills",
    "simulator",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before sessions and CSRF: a locked-out address's log-in flood costs one cache read.
    "accounts.lockout.AddressLockoutMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before the first reader of a form (the NUL filter; CSRF reads it only at the view): a
    # body too large is refused by its length unread. After sessions and auth, which read no
    # body, so that its page has the signed-in header.
    "config.middleware.refuse_oversized_bodies",
    "config.middleware.strip_nul_characters",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Inside the session, auth and htmx middleware: its page has the signed-in header.
    "config.middleware.explain_wrong_method",
    # Last, so that axes sees the authentication result.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "accounts.context_processors.roles",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=60,
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the task worker write to the same file: wait for locks instead of
    # failing, take the write lock when a transaction starts (so two writers queue rather than
    # deadlock upgrading read locks), and let readers run beside the writer. More than one
    # writing machine belongs on PostgreSQL.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # Tests use a file too: an in-memory shared-cache database ignores the busy timeout, so
    # concurrency tests would test SQLite's test mode instead of what users run.
    # One file per test run, so parallel runs never share it.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"studio-test-{os.getpid()}.sqlite3")
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

if os.environ.get("REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
            # A Redis host that drops packets instead of refusing them must not hang every
            # request (sessions and rate limits read it) and /healthz: give up after 2 s.
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Rendered practice pages (practice.page_cache), in each process's own memory whatever the
# default cache is: their keys carry the database state they show, so a copy per process is
# never stale, and a local hit costs a fraction of a network round trip with a 15 KB page.
# 2000 pages is about 30 MB per process; the least recently used go first.
CACHES["pages"] = {
    "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
    "LOCATION": "pages",
    "OPTIONS": {"MAX_ENTRIES": 2000},
}

TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "grading"],
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sessions in the database, read through the shared cache when there is one. Without Redis
# the default cache is each process's own memory, where a session signed out in one process
# would live on in the others' copies: there, the database alone.
SESSION_ENGINE = (
    "django.contrib.sessions.backends.cached_db"
    if os.environ.get("REDIS_URL")
    else "django.contrib.sessions.backends.db"
)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# Log-in throttling (accounts/lockout.py): within 15 minutes, 5 failures lock one username
# from one address, and 20 failures lock an address across usernames (spraying, floods).
AXES_HANDLER = "accounts.lockout.AccountLockoutHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
LOCKOUT_LIMITS = (5, 20)  # one per entry of AXES_LOCKOUT_PARAMETERS, in order; address last
AXES_FAILURE_LIMIT = min(LOCKOUT_LIMITS)
AXES_COOLOFF_TIME = 0.25  # hours
# A guess refused during a lock-out writes nothing: a flood then costs reads, not writes, and
# the lock-out still ends 15 minutes after the failures that caused it.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Behind N reverse proxies (a TLS proxy alone: 1), the client address is the Nth from the
# right of X-Forwarded-For; with none (the default) it is the socket's address, and the header
# is ignored, so a client cannot pick a fresh address for every guess. Every per-address limit
# (log-ins, sign-ups, the planner) reads the address this way. Counting more proxies than
# there are lets a client choose its own address.
TRUSTED_PROXY_COUNT = _env_number("TRUSTED_PROXY_COUNT", "0")
# Our own function, not ipware's proxy count: ipware wants the last proxy's own address in the
# header too, so behind one TLS proxy that writes "client" it finds no address at all, and
# every client would share one lock-out and one sign-up allowance.
AXES_CLIENT_IP_CALLABLE = "rate_limits.client_address"
# Sign-ups per address per hour: each costs a password hash and creates a row.
SIGNUPS_PER_ADDRESS_PER_HOUR = _env_number("SIGNUPS_PER_ADDRESS_PER_HOUR", "10")
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_RESET_ON_SUCCESS = True

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    # htmx comes from npm (package.json); only its dist folder is served.
    ("vendor/htmx", BASE_DIR / "node_modules" / "htmx.org" / "dist"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = not PRODUCTION

CONTENT_DIR = BASE_DIR / "content"

# A strict policy: only our own scripts, styles and images; no inline script; no framing.
# htmx needs no eval; its indicator style is shipped in our stylesheet (includeIndicatorStyles off).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# The model grader, read from the environment here and nowhere else. Values stay strings (empty
# means the default); grading.GraderConfig.from_settings checks and converts them.
# GRADER_BASE_URL empty: no model, every answer is graded offline.
GRADER = {
    name: os.environ.get(name, "")
    for name in (
        "GRADER_BASE_URL",  # an OpenAI-compatible API root, e.g. http://127.0.0.1:8001/v1
        "GRADER_MODEL",
        "GRADER_API_KEY",
        "GRADER_TIMEOUT_S",
        "GRADER_MAX_RETRIES",
        "GRADER_MAX_INFLIGHT",
        "GRADER_HEALTH_TTL_S",
        "GRADER_MAX_TOKENS",
    )
}
# Per-user limits on the expensive endpoints (a rate limit is not a budget: hence the quota).
GRADING_RATE_PER_MINUTE = _env_number("GRADING_RATE_PER_MINUTE", "12")
GRADING_DAILY_QUOTA = _env_number("GRADING_DAILY_QUOTA", "300")
# Each dispute asks an instructor for their time: a few a day per candidate (review.services).
GRADE_DISPUTES_PER_DAY = _env_number("GRADE_DISPUTES_PER_DAY", "3")
# The calculator is cheap but not free: per-user caps on worksheet evaluations and checks.
NAPKIN_RATE_PER_MINUTE = _env_number("NAPKIN_RATE_PER_MINUTE", "240")
PLANNER_RATE_LIMIT_PER_MINUTE = _env_number("PLANNER_RATE_LIMIT_PER_MINUTE", "120")
# ...and a request count does not bound work: CPU seconds per client per minute, across the
# planner's worksheet and capacity pages and the practice worksheet (rate_limits.cpu_budget).
CPU_SECONDS_PER_MINUTE = _env_number("CPU_SECONDS_PER_MINUTE", "5", float)
# New attempts per user per UTC day: each is a row, and history pages over them.
ATTEMPTS_PER_DAY = _env_number("ATTEMPTS_PER_DAY", "50")
# New drill sets a candidate starts per UTC day (six rows each; an assignment's set is not counted).
DRILL_SETS_PER_DAY = _env_number("DRILL_SETS_PER_DAY", "100")
# Attempts per /history/ page, and how many recent attempts the trends and most-missed read.
HISTORY_PAGE_SIZE = 20
HISTORY_TREND_WINDOW = 30
# A model that stays down: re-grade with backoff (seconds), up to this many tries.
_backoff = os.environ.get("GRADING_RETRY_BACKOFF_S", "").strip() or "30,120,600,1800,3600"
try:
    GRADING_RETRY_BACKOFF_S = [float(step) for step in _backoff.split(",")]
except ValueError:
    raise ImproperlyConfigured(
        f"GRADING_RETRY_BACKOFF_S={_backoff!r}: seconds, comma-separated, e.g. 30,120,600"
    ) from None
# After the backoff steps, this many more tries at the longest interval (a day at 1 h).
GRADING_RETRY_TAIL = _env_number("GRADING_RETRY_TAIL", "24")
# The largest answer we store; larger ones are refused with a message, the draft kept.
ANSWER_MAX_CHARS = 20_000
# The largest request body read at all (config.middleware.refuse_oversized_bodies): Django's
# DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) leaves uploaded files out, and they would be spooled to
# disk whole. Room for the largest form and the largest question file (512 KB).
MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024
# Mock interviews: how long an invite link stays valid, and how often the live pages poll
# the session's event log (seconds; the tests shorten it).
MOCK_INVITE_HOURS = _env_number("MOCK_INVITE_HOURS", "24", float)
MOCK_POLL_SECONDS = _env_number("MOCK_POLL_SECONDS", "2", float)

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = os.environ.get("SECURE_SSL_REDIRECT", "1") == "1"
    SECURE_HSTS_SECONDS = _env_number("SECURE_HSTS_SECONDS", str(60 * 60 * 24 * 365))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "INFO" if PRODUCTION else "WARNING"},
}
