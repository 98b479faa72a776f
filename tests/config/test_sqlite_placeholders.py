"""The SQLite backend converts `%s` placeholders to `?` once per statement, not per execute."""

import pytest
from django.contrib.auth.models import User
from django.db import connection

from config.sqlite import base

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the conversion is part of the SQLite backend only"
)


@pytest.mark.django_db
def test_a_repeated_statement_is_converted_once_and_still_binds_its_parameters():
    User.objects.create_user("ann", password="ann-Passphrase-1")
    sql = "SELECT username || '%%' || %s FROM auth_user WHERE username = %s"
    base._qmark.cache_clear()
    with connection.cursor() as cursor:
        for suffix in ("a", "b"):
            cursor.execute(sql, [suffix, "ann"])
            assert cursor.fetchall() == [(f"ann%{suffix}",)]
    info = base._qmark.cache_info()
    assert (info.misses, info.hits) == (1, 1)


@pytest.mark.django_db
def test_named_parameters_and_long_statements_take_djangos_own_conversion():
    with connection.cursor() as cursor:
        cursor.execute("SELECT %(x)s", {"x": 7})
        assert cursor.fetchone() == (7,)
        base._qmark.cache_clear()
        long_sql = "SELECT %s" + " " * base._REMEMBERED_SQL_CHARS
        cursor.execute(long_sql, [8])
        assert cursor.fetchone() == (8,)
    assert base._qmark.cache_info().currsize == 0
