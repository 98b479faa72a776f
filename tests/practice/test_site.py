"""The site shell: pages, health, accounts, throttling, CSP and production settings."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.conftest import CORE_SLUGS

# Starts processes (servers, commands) that reach DATABASE_URL's database: CI runs it on each.
pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[2]
# The test process allows async-unsafe ORM use for Playwright; a deployment never does.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}


def django_subprocess(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
    )


@pytest.mark.django_db
def test_home_lists_the_three_questions_by_slug_link(client, content_loaded):
    html = client.get("/").content.decode()
    for slug in CORE_SLUGS:
        assert f'href="/questions/{slug}/"' in html


@pytest.mark.django_db
def test_question_page_shows_brief_steps_and_concept_links(client, content_loaded):
    response = client.get("/questions/chat-api-50qps/")
    html = response.content.decode()
    assert response.status_code == 200
    for needle in (
        "Peak load",
        "50 QPS",
        "p99 TTFT",
        "300 ms",
        "Qwen2.5-7B",
        "Clarify the requirements",
        "Napkin math",
        "Architecture",
        "Bottlenecks and failure modes",
        "Trade-offs and follow-ups",
    ):
        assert needle in html, needle
    assert 'href="/concepts/' in html
    assert "hx-disable" in html  # authored HTML sits in inert containers


@pytest.mark.django_db
@pytest.mark.parametrize(
    "step", ["clarify", "estimate", "architecture", "bottlenecks", "tradeoffs"]
)
def test_every_step_page_renders_with_breadcrumbs(client, content_loaded, step):
    response = client.get(f"/questions/long-context-rag/steps/{step}/")
    assert response.status_code == 200
    assert 'aria-label="Breadcrumb"' in response.content.decode()


@pytest.mark.django_db
def test_unknown_question_step_and_concept_are_404(client, content_loaded):
    assert client.get("/questions/nope/").status_code == 404
    assert client.get("/questions/chat-api-50qps/steps/nope/").status_code == 404
    assert client.get("/concepts/nope/").status_code == 404


@pytest.mark.django_db
def test_concept_pages_list_and_show(client, content_loaded):
    html = client.get("/concepts/").content.decode()
    assert 'href="/concepts/tpot-floor/"' in html
    page = client.get("/concepts/tpot-floor/").content.decode()
    assert "<math" in page  # formula rendered server-side
    assert "Design a chat" in page or "questions/chat-api-50qps" in page


@pytest.mark.django_db
def test_healthz_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "worker": "idle"}


def test_healthz_503_when_the_database_is_unreachable():
    code = (
        "import django; django.setup();"
        "from django.test import Client;"
        "r = Client().get('/healthz'); print(r.status_code, r.content.decode())"
    )
    result = django_subprocess(code, DATABASE_URL="postgres://nobody@127.0.0.1:1/nothing")
    assert result.returncode == 0, result.stderr
    status, body = result.stdout.strip().split(" ", 1)
    assert status == "503"
    assert json.loads(body)["database"] == "unreachable"


@pytest.mark.django_db
def test_strict_csp_header(client):
    csp = client.get("/").headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp


@pytest.mark.django_db
def test_csrf_header_is_set_once_on_body_for_htmx(client):
    html = client.get("/").content.decode()
    assert html.count("hx-headers=") == 1
    assert '<body hx-headers=\'{"x-csrftoken": "' in html


@pytest.mark.django_db
def test_signup_logs_in_and_logout_logs_out(client):
    response = client.post(
        reverse("signup"),
        {
            "username": "ada",
            "password1": "a-long-Passphrase-42",
            "password2": "a-long-Passphrase-42",
        },
    )
    assert response.status_code == 302
    assert "Signed in as" in client.get("/").content.decode()
    client.post(reverse("logout"))
    assert "Signed in as" not in client.get("/").content.decode()


@pytest.mark.django_db
def test_signup_rejects_mismatched_passwords_with_a_message(client):
    response = client.post(
        reverse("signup"),
        {
            "username": "ada",
            "password1": "a-long-Passphrase-42",
            "password2": "different-42-Pass",
        },
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="field-errors"' in html and "match" in html
    assert not User.objects.filter(username="ada").exists()


@pytest.mark.django_db
def test_password_change(client):
    user = User.objects.create_user("ada", password="first-Passphrase-1")
    client.force_login(user)
    response = client.post(
        reverse("password_change"),
        {
            "old_password": "first-Passphrase-1",
            "new_password1": "second-Passphrase-2",
            "new_password2": "second-Passphrase-2",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("second-Passphrase-2")


@pytest.mark.django_db
def test_failed_logins_are_throttled(client):
    User.objects.create_user("ada", password="right-Passphrase-1")
    for _ in range(5):
        client.post(reverse("login"), {"username": "ada", "password": "wrong"})
    # Even the right password is refused while locked out.
    response = client.post(reverse("login"), {"username": "ada", "password": "right-Passphrase-1"})
    assert response.status_code == 429
    assert "Too many failed log-ins" in response.content.decode()


def test_production_settings_pass_the_deploy_check():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **CLEAN_ENV,
            "DJANGO_ENV": "production",
            "ALLOWED_HOSTS": "studio.example.com",
            "SECRET_KEY": "k3y-" + "x7Qp9Lm2Vb8Nc4Zr6Td1Hs5Jw0Yf3Gk8Ua2Eo7Ri9" * 2,
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_settings_refuse_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**env, "DJANGO_ENV": "production", "ALLOWED_HOSTS": "studio.example.com"},
        timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_redis_url_selects_a_cache_shared_by_processes():
    code = (
        "import django; django.setup();"
        "from django.core.cache import cache; from django.conf import settings;"
        "print(settings.CACHES['default']['BACKEND']);"
        "cache.set('studio-test-shared', 'from-one-process', 30)"
    )
    first = django_subprocess(code, REDIS_URL="redis://127.0.0.1:6379/15")
    assert first.returncode == 0, first.stderr
    assert "RedisCache" in first.stdout
    read = django_subprocess(
        "import django; django.setup(); from django.core.cache import cache;"
        "print(cache.get('studio-test-shared'))",
        REDIS_URL="redis://127.0.0.1:6379/15",
    )
    assert read.stdout.strip().endswith("from-one-process")


def test_without_redis_the_cache_is_local_memory():
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings;"
            "print(settings.CACHES['default']['BACKEND'])",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
    )
    assert "LocMemCache" in result.stdout
