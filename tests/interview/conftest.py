"""Fixtures for the interview tests."""

import pytest
from django.core.cache import caches


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Empty caches per test: rate-limit counters and cached pages never leak between tests."""
    for cache in caches.all():
        cache.clear()
    yield
    for cache in caches.all():
        cache.clear()
