"""config/settings.py refuses a configuration that would start a broken or unsafe site, with
one sentence naming the variable, instead of a traceback or a silent fallback.

The settings module is run in this process with runpy under a patched environment: no
subprocess, no Django set-up."""

import runpy
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

SETTINGS = Path(__file__).resolve().parents[2] / "config" / "settings.py"
GOOD_KEY = "k3y-" + "x7Qp9Lm2Vb8Nc4Zr6Td1Hs5Jw0Yf3Gk8Ua2Eo7Ri9" * 2


def load(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict:
    for name in ("DJANGO_ENV", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_DEBUG", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS))


def refused(monkeypatch: pytest.MonkeyPatch, **env: str) -> str:
    with pytest.raises(ImproperlyConfigured) as excinfo:
        load(monkeypatch, **env)
    return str(excinfo.value)


def test_a_mistyped_django_env_is_refused_not_run_as_development_with_debug(monkeypatch):
    # "prod" used to fall through to development settings: DEBUG on, the public dev key.
    message = refused(
        monkeypatch, DJANGO_ENV="prod", SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS="studio.example.com"
    )
    assert "DJANGO_ENV" in message and "production" in message


def test_production_refuses_an_empty_or_weak_secret_key(monkeypatch):
    for key in ("", "   ", "short", "django-insecure-" + "a" * 50):
        message = refused(
            monkeypatch, DJANGO_ENV="production", SECRET_KEY=key, ALLOWED_HOSTS="a.example.com"
        )
        assert "SECRET_KEY" in message, key


def test_production_refuses_an_empty_allowed_hosts(monkeypatch):
    for hosts in ("", " , "):
        message = refused(
            monkeypatch, DJANGO_ENV="production", SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS=hosts
        )
        assert "ALLOWED_HOSTS" in message, hosts


def test_production_with_a_good_key_and_hosts_loads(monkeypatch):
    values = load(
        monkeypatch, DJANGO_ENV="production", SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS="a.example.com"
    )
    assert values["DEBUG"] is False
    assert values["ALLOWED_HOSTS"] == ["a.example.com"]


@pytest.mark.parametrize(
    "name",
    ["TRUSTED_PROXY_COUNT", "GRADING_DAILY_QUOTA", "CPU_SECONDS_PER_MINUTE", "MOCK_INVITE_HOURS"],
)
def test_a_number_that_is_not_one_names_its_variable(monkeypatch, name):
    monkeypatch.setenv(name, "one")
    message = refused(monkeypatch)
    assert name in message and "'one'" in message


def test_a_malformed_retry_backoff_names_its_variable(monkeypatch):
    monkeypatch.setenv("GRADING_RETRY_BACKOFF_S", "30,,soon")
    assert "GRADING_RETRY_BACKOFF_S" in refused(monkeypatch)


def test_development_defaults_still_load(monkeypatch):
    values = load(monkeypatch)
    assert values["DEBUG"] is True
    assert values["TRUSTED_PROXY_COUNT"] == 0
    assert values["GRADING_RETRY_BACKOFF_S"] == [30.0, 120.0, 600.0, 1800.0, 3600.0]


@pytest.mark.parametrize(
    ("value", "debug"),
    [("1", True), ("True", True), ("yes", True), ("", True), ("0", False), ("false", False)],
)
def test_django_debug_reads_the_usual_spellings_of_on_and_off(monkeypatch, value, debug):
    # "True" used to turn debug pages off: only "1" meant on.
    assert load(monkeypatch, DJANGO_DEBUG=value)["DEBUG"] is debug


def test_a_django_debug_that_is_neither_on_nor_off_is_refused(monkeypatch):
    assert "DJANGO_DEBUG" in refused(monkeypatch, DJANGO_DEBUG="maybe")
