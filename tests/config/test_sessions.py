"""Session decoding is remembered per signed value, without sharing objects or trusting
anything the signature would refuse."""

import logging

import pytest
from django.core import signing

from config import sessions
from config.sessions import SessionStore


@pytest.fixture
def counted_loads(monkeypatch):
    """How many times the signature was checked (signing.loads ran)."""
    calls = []
    real = signing.loads

    def loads(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(signing, "loads", loads)
    sessions._DECODED.clear()
    return calls


def test_a_session_value_is_verified_once_and_each_read_gets_its_own_objects(counted_loads):
    store = SessionStore()
    signed = store.encode({"_auth_user_id": "7", "seen": ["clarify"]})
    first = store.decode(signed)
    first["seen"].append("estimate")  # a request changing its session in place
    second = SessionStore().decode(signed)
    assert second == {"_auth_user_id": "7", "seen": ["clarify"]}
    assert len(counted_loads) == 1


def test_a_tampered_value_is_refused_even_after_the_genuine_one_was_read(counted_loads, caplog):
    store = SessionStore()
    signed = store.encode({"_auth_user_id": "7"})
    assert store.decode(signed) == {"_auth_user_id": "7"}
    tampered = signed[:-1] + ("A" if signed[-1] != "A" else "B")
    with caplog.at_level(logging.WARNING, logger="django.security.SuspiciousSession"):
        assert store.decode(tampered) == {}
        assert store.decode(tampered) == {}  # refused, and logged, every time
    assert [r.getMessage() for r in caplog.records] == ["Session data corrupted"] * 2
    assert len(counted_loads) == 3
