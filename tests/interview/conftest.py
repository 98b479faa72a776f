"""Fixtures for the interview tests."""

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _fresh_cache():
    """An empty cache per test: rate-limit counters and cached pages never leak between tests."""
    cache.clear()
    yield
    cache.clear()
